"""The provider-author API: what a model provider implements, and the helpers it uses.

A provider turns a :class:`StreamConfig` into one streamed :class:`AssistantMessage`,
reporting deltas to a :data:`DeltaSink` as they arrive and raising a classified
:class:`ProviderError` on failure. Applications rarely need this module; every name here
that an application does use is also exported by :mod:`yoagent.core`. ``warn_once`` is
the floor's (:mod:`yoagent.core.support`, with the rest of what package authors share),
kept here because it was documented here first.
"""

from ._provider.keys import (
    FALLBACK_KEY_VARIABLES,
    SELF_AUTHENTICATING,
    key_variables,
    resolve_api_key,
)
from ._provider.protocol import (
    DeltaSink,
    OutputSchema,
    StreamConfig,
    StreamProvider,
    ToolDefinition,
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

__all__ = [
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
    "Usage",
    "UserContent",
    "UserMessage",
    "classify",
    "is_overflow_text",
    "key_variables",
    "parse_retry_after",
    "resolve_api_key",
    "warn_once",
]
