"""The extension-author API: the hooks a run calls, their verdicts, what a run knows about
itself, how it ended, and where its spend is recorded.

An :class:`Extension` is a factory of per-run :class:`RunHooks`; ``Agent.with_extension``
installs one. The older knobs (``tool_middleware=``, ``input_filters=``,
``turn_hooks=``) are shorthands for an extension: their types and verdicts are here too.
The names an application uses to install extensions and answer approvals (``Extension``,
``Budget``, ``Allow``, ``Deny``, ...) are also exported by :mod:`yoagent.core`.
"""

import typing

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
from ._namespace import Namespace as _Namespace
from ._types.approval import HELD_RESULT
from ._types.markers import (
    AGENT_STOPPED_PREFIX,
    CANCELLED_MARKER,
    EXTENSION_FAILED_PREFIX,
    EXTENSION_MESSAGE_PREFIX,
    LOOP_ABORT_PREFIX,
    LOOP_NUDGE_PREFIX,
    is_loop_injected,
)
from ._types.outcome import RunEnd, RunOutcome, StopCause
from ._types.stats import (
    CompactionSpend,
    DecisionSpend,
    ExtensionSpend,
    ModelSpend,
    RunSpend,
    SpendHandle,
    SubAgentSpend,
)

if typing.TYPE_CHECKING:
    from ._hooks.budget import Budget

__all__ = [  # noqa: RUF022
    # --- the contract
    "Extension",
    "ExtensionMode",
    "RunHooks",
    "RunContext",
    "FINISH_TIMEOUT",
    "Budget",
    # --- verdicts, by hook
    "FilterResult",
    "Pass",
    "Warn",
    "Reject",
    "ModelVerdict",
    "Proceed",
    "StopRun",
    "FailRun",
    "ToolDecision",
    "Allow",
    "Deny",
    "Modify",
    "Defer",
    "ApprovalDecision",
    "ToolOutput",
    "ContinueRun",
    # --- what a hook sees
    "TurnContext",
    "ToolCallRequest",
    "ReplyContext",
    "UserRequestParts",
    "UserRequestSource",
    "user_request_parts",
    # --- how the run ended
    "RunOutcome",
    "RunEnd",
    "StopCause",
    # --- the run's spend
    "RunSpend",
    "SpendHandle",
    "ModelSpend",
    "DecisionSpend",
    "CompactionSpend",
    "ExtensionSpend",
    "SubAgentSpend",
    # --- the older knobs (shorthands for an extension)
    "ToolMiddleware",
    "MiddlewareLike",
    "InputFilter",
    "TurnHook",
    # --- what the loop writes for the model (read outcomes from RunOutcome, not these)
    "AGENT_STOPPED_PREFIX",
    "CANCELLED_MARKER",
    "EXTENSION_FAILED_PREFIX",
    "EXTENSION_MESSAGE_PREFIX",
    "LOOP_ABORT_PREFIX",
    "LOOP_NUDGE_PREFIX",
    "HELD_RESULT",
    "is_loop_injected",
]

_names = _Namespace(__name__, globals(), lazy={"Budget": "._hooks.budget"})
__getattr__ = _names.getattr
__dir__ = _names.dir
