"""Advisor: at most one skill hint and one tool hint per user request, from one batched
decision request. Advisory only — it never blocks, never removes a tool, and on any
failure adds nothing.

The advisor is also a core ``Extension``: installed on an agent it adds its note to each
model request in ``before_model`` (from the turn's user request and offered tools) and
records its spend into the run's ledger.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Protocol

from yoagent.core import Extension
from yoagent.core.extension import ModelVerdict, Proceed, RunContext, RunHooks, TurnContext

from ._errors import DecisionError, DecisionErrorKind
from ._model import DecisionModel
from ._questions import Choice, Noul, Question, QuestionKind
from ._spend import recording_decision_spend
from ._text import check_threshold, truncate_head, truncate_middle

logger = logging.getLogger("yoagent.decision")

MAX_REQUEST_CHARS = 8_000
MAX_DESCRIPTION_CHARS = 300


class Described(Protocol):
    """Anything with a name and a description (core's ``Skill`` and ``AgentTool``)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


@dataclass(slots=True, frozen=True)
class _Memo:
    key: tuple[object, ...]
    note: str | None


@dataclass(slots=True, eq=False)
class Advisor(Extension):
    """Suggests a skill to load and the tools likely needed, as a note for the model.

    Per user request it sends at most one request, batching a skill Choice (the skills plus
    ``none``) with a yes/no "does this need a skill" question and — only with at least
    ``tool_hint_min_tools`` tools — a tool Choice; the note is memoized on the request, so
    the later turns of one request send nothing. A skill is named when the need is at least
    ``skill_need_threshold`` (0.3) and the Choice's confidence at least
    ``skill_confidence_threshold`` (0.5); at most ``max_tool_hints`` (3) tools with
    probability at least ``tool_hint_min_probability`` (0.1). With no skills and fewer than
    40 tools it asks nothing. Failures (2 s timeout) are logged and add nothing.

    As an ``Extension`` (``with_decision_model``, or ``agent.with_extension(advisor)``) it
    is advisory and runs after the agent's other extensions (``runs_last``: a budget that
    stops the run does so before the advisor asks).
    """

    # The Extension contract (class attributes, not fields).
    name = "advisor"
    runs_last = True

    model: DecisionModel
    _: KW_ONLY
    skills: Sequence[Described] = ()
    skill_hint: bool = True
    skill_need_threshold: float = 0.3
    skill_confidence_threshold: float = 0.5
    tool_hint: bool = True
    tool_hint_min_tools: int = 40
    max_tool_hints: int = 3
    tool_hint_min_probability: float = 0.1
    timeout: float = 2.0
    _skills: tuple[tuple[str, str], ...] = field(init=False, repr=False)
    _memo: _Memo | None = field(init=False, repr=False, default=None)
    _lock: threading.Lock = field(init=False, repr=False, default_factory=threading.Lock)
    _said: set[str] = field(init=False, repr=False, default_factory=set[str])

    def __post_init__(self) -> None:
        check_threshold("skill_need_threshold", self.skill_need_threshold)
        check_threshold("skill_confidence_threshold", self.skill_confidence_threshold)
        check_threshold("tool_hint_min_probability", self.tool_hint_min_probability)
        if not self.timeout > 0:
            raise ValueError(f"the advisor's timeout must be positive, got {self.timeout}")
        seen: set[str] = set()
        skills: list[tuple[str, str]] = []
        for skill in self.skills:
            if skill.name not in seen:
                seen.add(skill.name)
                skills.append((skill.name, truncate_head(skill.description, MAX_DESCRIPTION_CHARS)))
        self._skills = tuple(skills)

    def _none_option(self) -> str:
        return "no_skill" if any(name == "none" for name, _ in self._skills) else "none"

    def _say_once(self, key: str, message: str, *args: object) -> None:
        with self._lock:
            if key in self._said:
                return
            self._said.add(key)
        logger.warning(message, *args)

    async def advise(self, user_request: str | None, tools: Iterable[Described] = ()) -> str | None:
        """The note for this request's turns (``None``: nothing to add)."""
        tool_list = list(tools)
        capabilities = self.model.capabilities()
        choice_ok = capabilities.supports(QuestionKind.CHOICE)
        too_many_skills = len(self._skills) >= capabilities.max_choice_options
        if self.skill_hint and self._skills and too_many_skills:
            self._say_once(
                "too-many-skills",
                "decision advisor: skill hint off, %d skills exceed the backend's %d options",
                len(self._skills),
                capabilities.max_choice_options - 1,
            )
        want_skill = (
            self.skill_hint
            and bool(self._skills)
            and choice_ok
            and capabilities.supports(QuestionKind.NOUL)
            and not too_many_skills
        )
        want_tools = (
            self.tool_hint
            and choice_ok
            and max(self.tool_hint_min_tools, 2)
            <= len(tool_list)
            <= capabilities.max_choice_options
        )
        if not user_request or not (want_skill or want_tools):
            return None
        key = (
            user_request,
            want_skill,
            tuple(tool.name for tool in tool_list) if want_tools else (),
        )
        memo = self._memo
        if memo is not None and memo.key == key:
            return memo.note
        note = await self._ask(user_request, tool_list if want_tools else [], want_skill)
        self._memo = _Memo(key, note)
        return note

    def start_run(self, run: RunContext) -> RunHooks:
        """The advisor's hooks for one run (the ``Extension`` contract)."""
        return _AdvisorHooks(self, run)

    def _questions(self, tools: Sequence[Described], want_skill: bool) -> dict[str, Question]:
        questions: dict[str, Question] = {}
        if want_skill:
            options: dict[str, str | None] = dict(self._skills)
            options[self._none_option()] = "No listed skill fits the request."
            questions["skill"] = Choice(
                "Which of these skills, if any, is the right one to load to help with the "
                "user's latest request in `request`?",
                options,
            )
            questions["skill_needed"] = Noul(
                "Would a careful expert handling `request` consult a specific documented "
                "procedure or set of commands, rather than answering from general understanding?"
            )
        if tools:
            described: dict[str, str | None] = {}
            for tool in tools:
                text = truncate_head(tool.description, MAX_DESCRIPTION_CHARS)
                described.setdefault(tool.name, text if text.strip() else tool.name)
            questions["tools"] = Choice(
                "Which of these tools will the assistant most likely need next to carry out "
                "`request`?",
                described,
            )
        return questions

    async def _ask(self, request: str, tools: Sequence[Described], want_skill: bool) -> str | None:
        state = {"request": truncate_middle(request, MAX_REQUEST_CHARS)}
        model = self.model.with_timeout(self.timeout)
        try:
            evaluation = await model.evaluate(state, self._questions(tools, want_skill))
        except DecisionError as error:
            if error.kind is DecisionErrorKind.MISSING_API_KEY:
                self._say_once(
                    "missing-key",
                    "decision advisor off: the decision model's API key is missing (set %s)",
                    error.variable,
                )
            else:
                logger.warning("decision advisor skipped this request: %s", error)
            return None
        lines: list[str] = []
        skill = evaluation.choice("skill")
        needed = evaluation.p_true("skill_needed")
        if (
            want_skill
            and skill is not None
            and needed is not None
            and needed >= self.skill_need_threshold
            and skill.choice != self._none_option()
            and skill.confidence >= self.skill_confidence_threshold
        ):
            lines.append(
                f"Relevant to the current request: {skill.choice}. Ignore this if it does not "
                "fit what the user actually asked for."
            )
        picked = evaluation.choice("tools")
        if picked is not None:
            named = [name for name, p in picked.ranked() if p >= self.tool_hint_min_probability][
                : self.max_tool_hints
            ]
            if named:
                lines.append(
                    f"Tools likely relevant to the current request: {', '.join(named)}. This is "
                    "a hint only; every tool remains available."
                )
        return "\n".join(lines) if lines else None


class _AdvisorHooks(RunHooks):
    """Adds the advisor's note to one run's requests, recording its spend there."""

    def __init__(self, advisor: Advisor, run: RunContext) -> None:
        self._advisor = advisor
        self._run = run

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        with recording_decision_spend(self._run.spend.record_decision):
            note = await self._advisor.advise(turn.user_request(), turn.tools)
        return Proceed(notes=[note] if note else [])
