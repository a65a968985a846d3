"""yoagent.providers: the LLM wire protocols, their HTTP base and the vendor presets.

Every provider registers under the ``yoagent.providers`` entry-point group, so
``Agent.from_config`` finds it; :mod:`yoagent.providers.models` holds the vendor table
and presets. Providers share one connection pool per event loop and server unless given
their own ``http_client``.
"""

import importlib
import typing

from ._body import StreamLimits
from ._errors import ProvidersError
from ._pool import aclose_shared_clients

if typing.TYPE_CHECKING:
    from . import models
    from .anthropic import AnthropicProvider
    from .azure_openai import AzureOpenAiResponsesProvider
    from .bedrock import BedrockProvider
    from .google import GoogleProvider
    from .openai_completions import OpenAiCompletionsProvider
    from .openai_responses import OpenAiResponsesProvider
    from .vertex import VertexProvider

# Each protocol is imported on first use: an agent that speaks one (through its entry
# point) does not import the others, nor the AWS and Google credential code.
_LAZY = {
    "AnthropicProvider": ".anthropic",
    "AzureOpenAiResponsesProvider": ".azure_openai",
    "BedrockProvider": ".bedrock",
    "GoogleProvider": ".google",
    "OpenAiCompletionsProvider": ".openai_completions",
    "OpenAiResponsesProvider": ".openai_responses",
    "VertexProvider": ".vertex",
}


def __getattr__(name: str) -> object:
    """The provider classes and :mod:`models`, imported on first use."""
    if name == "models":
        value: object = importlib.import_module(".models", __name__)
    elif name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name], __name__), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


__all__ = [
    "AnthropicProvider",
    "AzureOpenAiResponsesProvider",
    "BedrockProvider",
    "GoogleProvider",
    "OpenAiCompletionsProvider",
    "OpenAiResponsesProvider",
    "ProvidersError",
    "StreamLimits",
    "VertexProvider",
    "aclose_shared_clients",
    "models",
]
