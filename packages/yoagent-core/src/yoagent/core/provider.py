"""The provider-author API: what a model provider implements, and the helpers it uses.

A provider turns a :class:`StreamConfig` into one streamed :class:`AssistantMessage`,
reporting deltas to a :data:`DeltaSink` as they arrive and raising a classified
:class:`ProviderError` on failure. Applications rarely need this module; every name here
that an application does use is also exported by :mod:`yoagent.core`. A provider
package registers its classes under :data:`ENTRY_POINT_GROUP`; a price source fills the
price-resolver slot (:func:`set_price_resolver`). ``warn_once`` is the floor's
(:mod:`yoagent.core.support`, with the rest of what package authors share), kept here
because it was documented here first.
"""

import typing

from ._namespace import Namespace as _Namespace
from ._provider.keys import (
    FALLBACK_KEY_VARIABLES,
    SELF_AUTHENTICATING,
    key_variables,
    resolve_api_key,
    with_env_key,
)
from ._provider.pricing import (
    AUTOLOAD_GROUP,
    add_usd,
    cost_of,
    price_resolver,
    resolve_cost,
    set_price_resolver,
)
from ._provider.protocol import (
    DeltaSink,
    OutputSchema,
    StreamConfig,
    StreamProvider,
    ToolDefinition,
)
from ._provider.registry import (
    ENTRY_POINT_GROUP,
    ProviderNotFoundError,
    ProviderRegistry,
    default_registry,
)
from ._support.warn_once import warn_once
from ._types.config import (
    AnthropicCompat,
    ApiProtocol,
    CacheConfig,
    Compat,
    GoogleCompat,
    ModelConfig,
    OpenAiCompat,
    ThinkingLevel,
)
from ._types.content import (
    AssistantContent,
    ImageContent,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserContent,
)
from ._types.errors import (
    OVERFLOW_PHRASES,
    RATE_LIMIT_CODES,
    RATE_LIMIT_STATUSES,
    ErrorKind,
    ProviderError,
    classify,
    is_overflow_text,
    parse_retry_after,
)
from ._types.events import StreamDelta, TextDelta, ThinkingDelta, ToolCallDelta
from ._types.messages import (
    AssistantMessage,
    Message,
    StopReason,
    ToolResultMessage,
    Usage,
    UserMessage,
)

if typing.TYPE_CHECKING:
    from ._provider.mock import TranscriptError, validate_transcript

__all__ = [
    "AUTOLOAD_GROUP",
    "ENTRY_POINT_GROUP",
    "FALLBACK_KEY_VARIABLES",
    "OVERFLOW_PHRASES",
    "RATE_LIMIT_CODES",
    "RATE_LIMIT_STATUSES",
    "SELF_AUTHENTICATING",
    "AnthropicCompat",
    "ApiProtocol",
    "AssistantContent",
    "AssistantMessage",
    "CacheConfig",
    "Compat",
    "DeltaSink",
    "ErrorKind",
    "GoogleCompat",
    "ImageContent",
    "Message",
    "ModelConfig",
    "OpenAiCompat",
    "OutputSchema",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderRegistry",
    "StopReason",
    "StreamConfig",
    "StreamDelta",
    "StreamProvider",
    "TextContent",
    "TextDelta",
    "ThinkingContent",
    "ThinkingDelta",
    "ThinkingLevel",
    "ToolCall",
    "ToolCallDelta",
    "ToolDefinition",
    "ToolResultMessage",
    "TranscriptError",
    "Usage",
    "UserContent",
    "UserMessage",
    "add_usd",
    "classify",
    "cost_of",
    "default_registry",
    "is_overflow_text",
    "key_variables",
    "parse_retry_after",
    "price_resolver",
    "resolve_api_key",
    "resolve_cost",
    "set_price_resolver",
    "validate_transcript",
    "warn_once",
    "with_env_key",
]

# Made on first use: the mock provider's module defines pydantic models at import.
_names = _Namespace(
    __name__,
    globals(),
    lazy=dict.fromkeys(("TranscriptError", "validate_transcript"), "._provider.mock"),
)
__getattr__ = _names.getattr
__dir__ = _names.dir
