"""yoagent.core: message and event types, the streaming agent loop, and the Agent."""

import importlib
import sys
from typing import TYPE_CHECKING

from ._agent import Agent, AgentBusyError, PromptInput
from ._cancel import CancelToken
from ._context.budget import ContextConfig
from ._context.compaction import CompactionResult, compact_after_overflow, compact_messages
from ._context.estimate import estimate_messages, estimate_text, estimate_tokens
from ._context.llm_compaction import LlmCompaction
from ._context.tracker import ContextTracker
from ._hooks.basic import (
    Allow,
    ApprovalDecision,
    Defer,
    Deny,
    FilterResult,
    InputFilter,
    MiddlewareLike,
    Modify,
    Pass,
    Reject,
    ToolCallRequest,
    ToolDecision,
    ToolMiddleware,
    TurnContext,
    TurnHook,
    Warn,
)
from ._hooks.extension import (
    FINISH_TIMEOUT,
    ContinueRun,
    Extension,
    ExtensionMode,
    FailRun,
    ModelVerdict,
    Proceed,
    RunContext,
    RunHooks,
    StopRun,
    ToolOutput,
)
from ._hooks.user_request import (
    ReplyContext,
    UserRequestParts,
    UserRequestSource,
    user_request_parts,
)
from ._loop.driver import agent_loop, agent_loop_continue, agent_loop_resume
from ._loop.resume import ResumeError
from ._loop.settings import (
    AgentContext,
    AgentLoopConfig,
    ContextSetting,
    RunOptions,
    RunSettings,
    ToolExecution,
)
from ._loop.state import EventSink
from ._loop.tool_call import SUB_AGENT_STATS_KEY
from ._provider.keys import FALLBACK_KEY_VARIABLES, key_variables, resolve_api_key, with_env_key
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
from ._run_stream import RunFailedError, RunStream
from ._shared_state.store import (
    FileBackend,
    InvalidKeyError,
    MemoryBackend,
    SharedState,
    SharedStateBackend,
    SharedStateError,
    SharedStateFullError,
    SharedStateSink,
    ToolOutputSink,
)
from ._structured import (
    NoStructuredOutputError,
    StructuredOutputError,
    StructuredParseError,
    StructuredProviderError,
)
from ._tools.contract import AgentTool, Delegation, ToolContext, ToolError, ToolResult
from ._tools.function_tool import FunctionTool, tool
from ._tools.model_tool import ModelTool
from ._tools.tool_source import ToolSource
from ._types.adapters import LazyTypeAdapter
from ._types.approval import HELD_RESULT, PendingApproval, PendingCall
from ._types.config import (
    AnthropicCompat,
    ApiProtocol,
    CacheConfig,
    ContextTier,
    CostConfig,
    GoogleCompat,
    ModelConfig,
    OpenAiCompat,
    ThinkingLevel,
)
from ._types.content import ImageContent, TextContent, ThinkingContent, ToolCall
from ._types.errors import (
    OVERFLOW_PHRASES,
    RATE_LIMIT_CODES,
    ErrorKind,
    MissingApiKeyError,
    ProviderError,
    YoagentError,
    classify,
    is_overflow_text,
    parse_retry_after,
)
from ._types.events import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    InputRejected,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProgressMessage,
    ProviderRetry,
    RunPaused,
    StreamDelta,
    SubAgentEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    TurnEnd,
    TurnStart,
    event_adapter,
)
from ._types.limits import ExecutionLimits
from ._types.markers import (
    AGENT_STOPPED_PREFIX,
    CANCELLED_MARKER,
    COMPACTION_MARKER,
    EXTENSION_FAILED_PREFIX,
    EXTENSION_MESSAGE_PREFIX,
    LOOP_ABORT_PREFIX,
    LOOP_NUDGE_PREFIX,
    SUMMARY_PREFIX,
    is_compaction_message,
    is_loop_injected,
)
from ._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    Message,
    StopReason,
    ToolResultMessage,
    Usage,
    UserMessage,
    context_messages,
    last_assistant,
    message_adapter,
    messages_adapter,
)
from ._types.outcome import RunEnd, RunOutcome, StopCause
from ._types.retry import RetryConfig
from ._types.stats import (
    CompactionSpend,
    DecisionSpend,
    ModelSpend,
    RunSpend,
    SessionStats,
    SubAgentSpend,
)

__all__ = [
    "AGENT_STOPPED_PREFIX",
    "AUTOLOAD_GROUP",
    "CANCELLED_MARKER",
    "COMPACTION_MARKER",
    "DEFAULT_MAX_DEPTH",
    "ENTRY_POINT_GROUP",
    "EXTENSION_FAILED_PREFIX",
    "EXTENSION_MESSAGE_PREFIX",
    "FALLBACK_KEY_VARIABLES",
    "FINISH_TIMEOUT",
    "HELD_RESULT",
    "LOOP_ABORT_PREFIX",
    "LOOP_NUDGE_PREFIX",
    "OVERFLOW_PHRASES",
    "RATE_LIMIT_CODES",
    "SUB_AGENT_LIMITS",
    "SUB_AGENT_SETTINGS",
    "SUB_AGENT_STATS_KEY",
    "SUMMARY_PREFIX",
    "Agent",
    "AgentBusyError",
    "AgentContext",
    "AgentEnd",
    "AgentEvent",
    "AgentLoopConfig",
    "AgentMessage",
    "AgentStart",
    "AgentTool",
    "Allow",
    "AnthropicCompat",
    "ApiProtocol",
    "ApprovalDecision",
    "AssistantMessage",
    "Budget",
    "CacheConfig",
    "CancelToken",
    "CompactionResult",
    "CompactionSpend",
    "ContextConfig",
    "ContextSetting",
    "ContextTier",
    "ContextTracker",
    "ContinueRun",
    "CostConfig",
    "CustomMessage",
    "DecisionSpend",
    "Defer",
    "Delegation",
    "DeltaSink",
    "Deny",
    "ErrorKind",
    "EventSink",
    "ExecutionLimits",
    "Extension",
    "ExtensionMode",
    "FailRun",
    "FileBackend",
    "FilterResult",
    "FunctionTool",
    "GoogleCompat",
    "ImageContent",
    "InputFilter",
    "InputRejected",
    "InvalidKeyError",
    "LazyTypeAdapter",
    "LlmCompaction",
    "LoadWarning",
    "MemoryBackend",
    "Message",
    "MessageEnd",
    "MessageStart",
    "MessageUpdate",
    "MiddlewareLike",
    "MissingApiKeyError",
    "MockProvider",
    "MockReply",
    "ModelConfig",
    "ModelSpend",
    "ModelTool",
    "ModelVerdict",
    "Modify",
    "NoStructuredOutputError",
    "OpenAiCompat",
    "OutputSchema",
    "Pass",
    "PendingApproval",
    "PendingCall",
    "Proceed",
    "ProgressMessage",
    "PromptInput",
    "ProviderError",
    "ProviderNotFoundError",
    "ProviderRegistry",
    "ProviderRetry",
    "ReadSkillTool",
    "Reject",
    "ReplyContext",
    "ResumeError",
    "RetryConfig",
    "RunContext",
    "RunEnd",
    "RunFailedError",
    "RunHooks",
    "RunOptions",
    "RunOutcome",
    "RunPaused",
    "RunSettings",
    "RunSpend",
    "RunStream",
    "Session",
    "SessionCorruptError",
    "SessionEntry",
    "SessionError",
    "SessionStats",
    "SharedState",
    "SharedStateBackend",
    "SharedStateError",
    "SharedStateFullError",
    "SharedStateSink",
    "SharedStateTool",
    "Skill",
    "SkillError",
    "SkillProblem",
    "SkillSet",
    "StopCause",
    "StopReason",
    "StopRun",
    "StreamConfig",
    "StreamDelta",
    "StreamProvider",
    "StructuredOutputError",
    "StructuredParseError",
    "StructuredProviderError",
    "SubAgentEvent",
    "SubAgentSpend",
    "SubAgentTool",
    "TextContent",
    "TextDelta",
    "ThinkingContent",
    "ThinkingDelta",
    "ThinkingLevel",
    "ToolArguments",
    "ToolCall",
    "ToolCallDelta",
    "ToolCallRequest",
    "ToolContext",
    "ToolDecision",
    "ToolDefinition",
    "ToolError",
    "ToolExecution",
    "ToolExecutionEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolMiddleware",
    "ToolOutput",
    "ToolOutputSink",
    "ToolResult",
    "ToolResultMessage",
    "ToolSource",
    "TranscriptError",
    "TurnContext",
    "TurnEnd",
    "TurnHook",
    "TurnStart",
    "Usage",
    "UserMessage",
    "UserRequestParts",
    "UserRequestSource",
    "Warn",
    "YoagentError",
    "add_usd",
    "agent_loop",
    "agent_loop_continue",
    "agent_loop_resume",
    "classify",
    "compact_after_overflow",
    "compact_messages",
    "context_messages",
    "cost_of",
    "default_registry",
    "estimate_messages",
    "estimate_text",
    "estimate_tokens",
    "event_adapter",
    "is_compaction_message",
    "is_loop_injected",
    "is_overflow_text",
    "key_variables",
    "last_assistant",
    "load_skills",
    "message_adapter",
    "messages_adapter",
    "parse_retry_after",
    "price_resolver",
    "resolve_api_key",
    "resolve_cost",
    "set_price_resolver",
    "tool",
    "user_request_parts",
    "validate_transcript",
    "with_env_key",
]


def _name_exceptions_publicly() -> None:
    """Tracebacks and reprs name ``yoagent.core.RunFailedError``, not the private module
    that defines it (as httpx does). Only exceptions: pydantic resolves the dataclasses'
    annotations through their defining module."""
    for name in __all__:
        value = globals().get(name)  # None for a name made on first use (__getattr__)
        if isinstance(value, type) and issubclass(value, BaseException):
            value.__module__ = __name__


_name_exceptions_publicly()

if TYPE_CHECKING:
    from ._hooks.budget import Budget
    from ._provider.mock import MockProvider, MockReply, TranscriptError, validate_transcript
    from ._session import LoadWarning, Session, SessionCorruptError, SessionEntry, SessionError
    from ._shared_state.tool import SharedStateTool
    from ._skill_frontmatter import SkillError
    from ._skills import ReadSkillTool, Skill, SkillProblem, SkillSet, load_skills
    from ._sub_agent import DEFAULT_MAX_DEPTH, SUB_AGENT_LIMITS, SUB_AGENT_SETTINGS, SubAgentTool
    from ._tools.arguments import ToolArguments

# Names made on first use: modules that define a pydantic model at import (the first one a
# process defines costs ≈ 30–60 ms, which ``import yoagent.core`` need not pay), and those
# only some programs use (sessions, the mock provider, budgets: ≈ 6 ms of the import).
_LAZY: dict[str, str] = {
    "Budget": "._hooks.budget",
    **dict.fromkeys(
        ("MockProvider", "MockReply", "TranscriptError", "validate_transcript"),
        "._provider.mock",
    ),
    **dict.fromkeys(
        ("LoadWarning", "Session", "SessionCorruptError", "SessionEntry", "SessionError"),
        "._session",
    ),
    "ToolArguments": "._tools.arguments",
    "SharedStateTool": "._shared_state.tool",
    "SkillError": "._skill_frontmatter",
    **dict.fromkeys(
        ("ReadSkillTool", "Skill", "SkillProblem", "SkillSet", "load_skills"), "._skills"
    ),
    **dict.fromkeys(
        ("DEFAULT_MAX_DEPTH", "SUB_AGENT_LIMITS", "SUB_AGENT_SETTINGS", "SubAgentTool"),
        "._sub_agent",
    ),
}


def __getattr__(name: str) -> object:
    """A name of :data:`_LAZY`, imported on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    importlib.import_module(module, __name__)
    _publish_loaded()
    return globals()[name]


def _publish_loaded() -> None:
    """Every name of :data:`_LAZY` whose module is loaded now (the one just asked for, or
    one it imported) becomes a global, its exceptions named ``yoagent.core.X`` as those
    imported above: ``from yoagent.core import Session`` names ``SessionCorruptError``
    too."""
    namespace = globals()
    for name, module in _LAZY.items():
        loaded = sys.modules.get(__name__ + module)
        if name in namespace or loaded is None:
            continue
        value: object = getattr(loaded, name)
        if isinstance(value, type) and issubclass(value, BaseException):
            value.__module__ = __name__
        namespace[name] = value


def __dir__() -> list[str]:
    """The module's names, those made on first use included (for completion and help)."""
    return sorted({*globals(), *_LAZY})
