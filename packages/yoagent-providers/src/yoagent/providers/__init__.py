"""yoagent.providers: the LLM wire protocols, their HTTP base and the vendor presets.

Every provider registers under the ``yoagent.providers`` entry-point group, so
``Agent.from_config`` finds it; :mod:`yoagent.providers.models` holds the vendor table
and presets. Providers share one connection pool per event loop and server unless given
their own ``http_client``.
"""

from . import models
from ._body import StreamLimits
from ._pool import aclose_shared_clients
from .anthropic import AnthropicProvider
from .azure_openai import AzureOpenAiResponsesProvider
from .bedrock import BedrockProvider
from .google import GoogleProvider
from .openai_completions import OpenAiCompletionsProvider
from .openai_responses import OpenAiResponsesProvider
from .vertex import VertexProvider

__all__ = [
    "AnthropicProvider",
    "AzureOpenAiResponsesProvider",
    "BedrockProvider",
    "GoogleProvider",
    "OpenAiCompletionsProvider",
    "OpenAiResponsesProvider",
    "StreamLimits",
    "VertexProvider",
    "aclose_shared_clients",
    "models",
]
