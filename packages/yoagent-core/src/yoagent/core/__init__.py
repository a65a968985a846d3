"""yoagent.core: build an agent — the Agent and its settings, models, messages and
events, tools, approvals, errors, sessions, skills, shared state and the mock provider.

The names here are for people who build agents. Writers of other parts import from the
namespace made for them: :mod:`yoagent.core.provider` (a model provider),
:mod:`yoagent.core.extension` (an extension: hooks, verdicts, the run's context and
spend), :mod:`yoagent.core.context` (compaction and token estimates),
:mod:`yoagent.core.loop` (the loop functions beneath ``Agent``),
:mod:`yoagent.core.session`, :mod:`yoagent.core.state` (shared state's backends and
sinks), and :mod:`yoagent.core.support` (the floor for package authors).
"""

import typing

from ._agent import Agent, AgentBusyError
from ._cancel import CancelToken
from ._context.budget import ContextConfig
from ._context.llm_compaction import LlmCompaction
from ._hooks.basic import (
    Allow,
    ApprovalDecision,
    Defer,
    Deny,
    Modify,
    ToolCallRequest,
    ToolDecision,
)
from ._hooks.extension import Extension
from ._loop.resume import ResumeError
from ._loop.settings import RunSettings, ToolExecution
from ._namespace import Namespace as _Namespace
from ._provider.pricing import cost_of, resolve_cost
from ._run_stream import RunFailedError, RunStream
from ._shared_state.store import SharedState
from ._structured import (
    NoStructuredOutputError,
    StructuredOutputError,
    StructuredParseError,
    StructuredProviderError,
)
from ._tools.contract import AgentTool, ToolContext, ToolError, ToolResult
from ._tools.function_tool import tool
from ._tools.model_tool import ModelTool
from ._tools.tool_source import ToolSource
from ._types.approval import PendingApproval, PendingCall
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
from ._types.errors import ErrorKind, MissingApiKeyError, ProviderError, YoagentError
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
from ._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    ToolResultMessage,
    Usage,
    UserMessage,
    message_adapter,
    messages_adapter,
)
from ._types.outcome import RunEnd, RunOutcome, StopCause
from ._types.retry import RetryConfig
from ._types.stats import SessionStats

if typing.TYPE_CHECKING:
    from ._hooks.budget import Budget
    from ._provider.mock import MockProvider, MockReply
    from ._session import Session, SessionError
    from ._shared_state.tool import SharedStateTool
    from ._skill_frontmatter import SkillError
    from ._skills import ReadSkillTool, Skill, SkillProblem, SkillSet, load_skills
    from ._sub_agent import SubAgentTool
    from ._tools.arguments import ToolArguments

# Grouped by what an application does with them (not sorted: each group is reviewed).
__all__ = [  # noqa: RUF022
    # --- the agent and how a run goes
    "Agent",
    "AgentBusyError",
    "RunStream",
    "RunSettings",
    "ExecutionLimits",
    "RetryConfig",
    "ContextConfig",
    "LlmCompaction",
    "ToolExecution",
    "CancelToken",
    # --- how a run ended
    "RunOutcome",
    "RunEnd",
    "StopCause",
    # --- models and their prices
    "ModelConfig",
    "ApiProtocol",
    "ThinkingLevel",
    "CacheConfig",
    "CostConfig",
    "ContextTier",
    "AnthropicCompat",
    "OpenAiCompat",
    "GoogleCompat",
    "cost_of",
    "resolve_cost",
    # --- messages and their content
    "AgentMessage",
    "UserMessage",
    "AssistantMessage",
    "ToolResultMessage",
    "CustomMessage",
    "StopReason",
    "Usage",
    "TextContent",
    "ImageContent",
    "ThinkingContent",
    "ToolCall",
    "message_adapter",
    "messages_adapter",
    # --- events
    "AgentEvent",
    "AgentStart",
    "TurnStart",
    "MessageStart",
    "MessageUpdate",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "MessageEnd",
    "ToolExecutionStart",
    "ToolExecutionUpdate",
    "ToolExecutionEnd",
    "ProgressMessage",
    "SubAgentEvent",
    "InputRejected",
    "ProviderRetry",
    "RunPaused",
    "TurnEnd",
    "AgentEnd",
    "event_adapter",
    # --- tools
    "AgentTool",
    "ToolContext",
    "ToolResult",
    "ToolError",
    "tool",
    "ModelTool",
    "ToolArguments",
    "ToolSource",
    "SubAgentTool",
    # --- approvals: judging tool calls, pausing and resuming
    "ToolCallRequest",
    "ToolDecision",
    "Allow",
    "Deny",
    "Modify",
    "Defer",
    "ApprovalDecision",
    "PendingApproval",
    "PendingCall",
    "ResumeError",
    # --- extensions to install (writing one: yoagent.core.extension)
    "Extension",
    "Budget",
    # --- errors
    "YoagentError",
    "ProviderError",
    "ErrorKind",
    "MissingApiKeyError",
    "RunFailedError",
    "StructuredOutputError",
    "NoStructuredOutputError",
    "StructuredParseError",
    "StructuredProviderError",
    # --- sessions, spend, skills, shared state
    "Session",
    "SessionError",
    "SessionStats",
    "SkillSet",
    "Skill",
    "SkillProblem",
    "SkillError",
    "load_skills",
    "ReadSkillTool",
    "SharedState",
    "SharedStateTool",
    # --- testing your agent
    "MockProvider",
    "MockReply",
]

_names = _Namespace(
    __name__,
    globals(),
    lazy={
        "Budget": "._hooks.budget",
        **dict.fromkeys(("MockProvider", "MockReply"), "._provider.mock"),
        **dict.fromkeys(("Session", "SessionError"), "._session"),
        "ToolArguments": "._tools.arguments",
        "SharedStateTool": "._shared_state.tool",
        "SkillError": "._skill_frontmatter",
        **dict.fromkeys(
            ("ReadSkillTool", "Skill", "SkillProblem", "SkillSet", "load_skills"), "._skills"
        ),
        "SubAgentTool": "._sub_agent",
    },
    # Names that left the top level in 0.2 (issue 26) and were documented: each still
    # works for a release, with a DeprecationWarning naming its new home.
    moved={
        **dict.fromkeys(
            (
                "RunHooks",
                "RunContext",
                "ExtensionMode",
                "FINISH_TIMEOUT",
                "Proceed",
                "StopRun",
                "FailRun",
                "ContinueRun",
                "TurnContext",
                "Pass",
                "Warn",
                "Reject",
                "RunSpend",
                "HELD_RESULT",
                "AGENT_STOPPED_PREFIX",
                "CANCELLED_MARKER",
                "user_request_parts",
            ),
            "yoagent.core.extension",
        ),
        **dict.fromkeys(
            (
                "ContextTracker",
                "CompactionResult",
                "compact_messages",
                "compact_after_overflow",
                "estimate_text",
                "estimate_tokens",
                "COMPACTION_MARKER",
                "SUMMARY_PREFIX",
            ),
            "yoagent.core.context",
        ),
        **dict.fromkeys(
            (
                "agent_loop",
                "agent_loop_continue",
                "agent_loop_resume",
                "AgentLoopConfig",
                "DEFAULT_MAX_DEPTH",
                "SUB_AGENT_SETTINGS",
            ),
            "yoagent.core.loop",
        ),
        **dict.fromkeys(("SharedStateSink",), "yoagent.core.state"),
        **dict.fromkeys(
            ("TranscriptError", "classify", "set_price_resolver"), "yoagent.core.provider"
        ),
    },
)
__getattr__ = _names.getattr
__dir__ = _names.dir
