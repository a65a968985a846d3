"""ToolGate: asks a decision model whether a tool call is destructive and whether the user
asked for it, and denies what looks destructive and was not clearly asked for. Fails closed.

The gate is also a core ``Extension``: installed on an agent it judges every call in
``before_tool``, after the agent's other extensions (``runs_last``), and records its spend
into the run's ledger.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from types import MappingProxyType
from typing import Any

from yoagent.core import Allow, Deny, Extension, ToolCallRequest, ToolDecision
from yoagent.core.extension import ExtensionMode, RunContext, RunHooks

from ._errors import DecisionError
from ._fit import FitLimits, Fitted, TooLarge, fit_arguments
from ._model import DecisionModel
from ._questions import Noul, Question, estimate_tokens, question_wire
from ._spend import recording_decision_spend
from ._text import at_or_above, check_threshold, format_p

logger = logging.getLogger("yoagent.decision")

DESTRUCTIVE_ID = "destructive"
REQUESTED_ID = "requested"
DEFAULT_DESTRUCTIVE_QUESTION = (
    "Would executing `tool_call` delete, overwrite, or irreversibly change data or external "
    "state — files, databases, remote systems, or messages sent to other people?"
)
DEFAULT_REQUESTED_QUESTION = (
    "Is `tool_call` something the user asked for in `user_request`, or a direct step toward "
    "what they asked for?"
)
_DESTRUCTIVE_TRUE = (
    "The call removes or replaces existing data, or changes something outside the "
    "conversation that cannot easily be undone."
)
_DESTRUCTIVE_FALSE = (
    "The call only reads, lists or searches, or creates something new without replacing anything."
)
DEFAULT_FULL_VIEWS: Mapping[str, tuple[str, ...]] = MappingProxyType({"bash": ("/command",)})
"""Arguments never shortened: a command is judged whole or not at all."""
DEFAULT_MAX_ARGUMENT_CHARS = 48_000


@dataclass(slots=True, frozen=True)
class GateCheck:
    """A yes/no question asked about every call; the call is denied when its answer is at
    least ``deny_at_or_above``. The state names ``tool_call`` and ``user_request``."""

    id: str
    question: str
    deny_at_or_above: float

    def __post_init__(self) -> None:
        if not self.id.strip():
            raise ValueError("a tool gate check id must not be empty")
        check_threshold(f"the threshold of check {self.id!r}", self.deny_at_or_above)


DENIAL_PREFIX = "Tool gate: "


def _deny(reason: str) -> Deny:
    return Deny(f"{DENIAL_PREFIX}{reason}")


@dataclass(slots=True, frozen=True, eq=False)
class ToolGate(Extension):
    """Per tool call, one decision request with two yes/no questions — *destructive* and
    *requested* — plus any ``checks``. The call is denied when it looks destructive
    (``p ≥ destructive_threshold``, 0.5) and is not clearly requested
    (``p < requested_threshold``, 0.7), or when a check reaches its threshold.

    The state is ``{"user_request": …, "tool_call": {"tool", "arguments", "omitted"?}}``.
    Arguments are sent whole when they fit ``max_argument_chars`` and the model's token
    limits (the strictest of a fallback chain); otherwise the longest strings are cut and
    listed in ``omitted``, and ``full_views`` (``bash`` ``/command``) are never cut — a call
    that cannot fit is denied.

    ``tools`` limits the gate to calls of those tools (``None``, the default: every call);
    any other call is allowed without a request.

    **Fails closed**: an error, a timeout (``timeout``, 5 s), a missing, malformed or NaN
    answer, a call too large to judge, or no user request to judge against all deny.
    Defence in depth, not a security boundary: the state can carry text written to steer
    the decision model.

    As an ``Extension`` (``agent.with_extension(gate)``, or ``with_tool_gate``) it is
    required (a hook that raises denies and fails the run), rechecks calls a later
    extension rewrote, and runs after the agent's other extensions (``runs_last``).
    """

    # The Extension contract (class attributes, not fields).
    name = "tool-gate"
    mode = ExtensionMode.REQUIRED
    rechecks_modified_calls = True
    runs_last = True

    model: DecisionModel
    _: KW_ONLY
    timeout: float = 5.0
    destructive_threshold: float = 0.5
    requested_threshold: float = 0.7
    destructive_question: str = DEFAULT_DESTRUCTIVE_QUESTION
    requested_question: str = DEFAULT_REQUESTED_QUESTION
    checks: Sequence[GateCheck] = ()
    max_argument_chars: int = DEFAULT_MAX_ARGUMENT_CHARS
    full_views: Mapping[str, Sequence[str]] = field(default_factory=lambda: DEFAULT_FULL_VIEWS)
    tools: Collection[str] | None = None

    def __post_init__(self) -> None:
        if self.tools is not None:
            if isinstance(self.tools, str):
                raise TypeError("ToolGate(tools=...) takes a collection of tool names, not a str")
            object.__setattr__(self, "tools", frozenset(self.tools))
        check_threshold("destructive_threshold", self.destructive_threshold)
        check_threshold("requested_threshold", self.requested_threshold)
        if not self.timeout > 0:
            raise ValueError(f"the gate's timeout must be positive, got {self.timeout}")
        if self.max_argument_chars < 1:
            raise ValueError("max_argument_chars must be at least 1")
        seen = {DESTRUCTIVE_ID, REQUESTED_ID}
        for check in self.checks:
            if check.id in seen:
                raise ValueError(f"tool gate check id {check.id!r} is used twice (or built in)")
            seen.add(check.id)
        object.__setattr__(self, "checks", tuple(self.checks))
        views = {tool: tuple(pointers) for tool, pointers in self.full_views.items()}
        object.__setattr__(self, "full_views", MappingProxyType(views))

    def questions(self) -> dict[str, Question]:
        """The questions asked about every call, by id."""
        questions: dict[str, Question] = {
            DESTRUCTIVE_ID: Noul(self.destructive_question, _DESTRUCTIVE_TRUE, _DESTRUCTIVE_FALSE),
            REQUESTED_ID: Noul(self.requested_question),
        }
        for check in self.checks:
            questions[check.id] = Noul(check.question)
        return questions

    def fit_limits(self) -> FitLimits:
        """What a call's state must fit: the character budget and the token limits of every
        model of the chain (so no fallback skips the call unsent)."""
        question_tokens = tuple(
            estimate_tokens(question_wire(q)) for q in self.questions().values()
        )
        return FitLimits(self.max_argument_chars, self.model.chain_capabilities(), question_tokens)

    async def decide(
        self, tool_name: str, arguments: Mapping[str, Any], user_request: str | None
    ) -> Allow | Deny:
        """Judge one call. ``user_request`` is what the user asked (core's
        ``ToolCallRequest.user_request()``); ``None`` denies. A call of a tool outside
        ``tools`` is allowed, nothing sent."""
        if self.tools is not None and tool_name not in self.tools:
            return Allow()
        try:
            return await self._decide(tool_name, arguments, user_request)
        except Exception as error:  # a bug here must not let a call through
            logger.exception("tool gate failed on a %s call", tool_name)
            return _deny(
                f"the gate could not judge this call ({type(error).__name__}), so it was not "
                "run. The gate fails closed; ask the user how to proceed."
            )

    async def _decide(
        self, tool_name: str, arguments: Mapping[str, Any], user_request: str | None
    ) -> Allow | Deny:
        if user_request is None or not user_request.strip():
            logger.warning(
                "tool gate denied a %s call: no user request to judge against", tool_name
            )
            return _deny(
                "the conversation no longer shows what the user asked for, so this call was "
                "not run. The gate fails closed; ask the user to restate the request."
            )
        limits = self.fit_limits()
        fitted = fit_arguments(
            user_request, tool_name, arguments, limits, self.full_views.get(tool_name, ())
        )
        if isinstance(fitted, TooLarge):
            logger.warning("tool gate denied a %s call: arguments too large", tool_name)
            return _deny(_too_large(fitted, limits))
        return await self._judge(tool_name, fitted)

    async def _judge(self, tool_name: str, fitted: Fitted) -> Allow | Deny:
        model = self.model.with_timeout(self.timeout)
        try:
            evaluation = await model.evaluate(fitted.state, self.questions())
        except DecisionError as error:
            logger.warning("tool gate denied a %s call: %s", tool_name, error)
            return _deny(
                f"the decision model could not be consulted ({error}), so this call was not "
                "run. The gate fails closed; ask the user how to proceed."
            )
        for check in self.checks:
            p = _finite(evaluation.p_true(check.id))
            if at_or_above(p, check.deny_at_or_above):
                return _deny(
                    f'check `{check.id}` ("{check.question}") answered {format_p(p)}, at or '
                    f"above {check.deny_at_or_above:.2f}. Ask the user to confirm before retrying."
                )
        destructive = _finite(evaluation.p_true(DESTRUCTIVE_ID))
        requested = _finite(evaluation.p_true(REQUESTED_ID))
        looks_destructive = at_or_above(destructive, self.destructive_threshold)
        clearly_requested = requested is not None and requested >= self.requested_threshold
        if (
            destructive is None
            or requested is None
            or (looks_destructive and not clearly_requested)
        ):
            return _deny(
                f"this call looks destructive or irreversible (p={format_p(destructive)}) and "
                f"not clearly what the user asked for (p={format_p(requested)}). Ask the user "
                "to confirm before retrying."
            )
        return Allow()

    def start_run(self, run: RunContext) -> RunHooks:
        """The gate's hooks for one run (the ``Extension`` contract)."""
        return _GateHooks(self, run)


class _GateHooks(RunHooks):
    """Judges each call of one run, recording the requests into the run's ledger."""

    def __init__(self, gate: ToolGate, run: RunContext) -> None:
        self._gate = gate
        self._run = run

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        with recording_decision_spend(self._run.spend.record_decision):
            decision = await self._gate.decide(
                request.tool_name, request.arguments, request.user_request()
            )
        if isinstance(decision, Deny):
            # The loop names the extension before the reason: say "tool-gate" once.
            return Deny(decision.reason.removeprefix(DENIAL_PREFIX))
        return decision


def _finite(value: float | None) -> float | None:
    """``value`` when it is a finite number, else ``None`` (which denies)."""
    return value if value is not None and math.isfinite(value) else None


def _too_large(fitted: TooLarge, limits: FitLimits) -> str:
    views = (
        f"; {', '.join(fitted.full_views)} must be judged whole and is never shortened"
        if fitted.full_views
        else ""
    )
    state = f", the state {fitted.state_problem}" if fitted.state_problem else ""
    return (
        f"this call is too large to judge: even with every other long string cut to 400 "
        f"characters its arguments are {fitted.argument_chars} characters{state} (limits: "
        f"{limits.describe()}){views}. It was not run. The gate fails closed; split the work "
        "into smaller calls or ask the user."
    )
