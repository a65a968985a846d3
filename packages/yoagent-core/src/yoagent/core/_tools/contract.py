"""The tool contract: what a tool is, what it gets while it runs, and what it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from yoagent.core._cancel import CancelToken
from yoagent.core._types.content import TextContent, UserContent
from yoagent.core._types.errors import YoagentError
from yoagent.core._types.events import AgentEvent, SubAgentEvent
from yoagent.core._types.stats import RunSpend, SessionStats


@dataclass(slots=True, kw_only=True)
class ToolResult:
    """What a tool produced: content for the model, ``details`` for the application."""

    content: list[UserContent] = field(default_factory=list[UserContent])
    details: Any = None

    @classmethod
    def from_text(cls, text: str, details: Any = None) -> ToolResult:
        """A result holding one text block."""
        return cls(content=[TextContent(text=text)], details=details)

    @property
    def text(self) -> str:
        """The result's text blocks joined by newlines."""
        return "\n".join(block.text for block in self.content if isinstance(block, TextContent))


class ToolError(YoagentError):
    """Raised by a tool to fail the call with a message the model reads.

    The run goes on: the model gets an error result carrying ``str(error)``; ``details``
    (e.g. an exit code) go to the result's ``details`` for the application.
    """

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


@dataclass(slots=True, kw_only=True, frozen=True)
class Delegation:
    """Where a delegated run sits in its tree (see ``ToolContext.child_delegation``)."""

    depth: int = 1
    """1 for a run delegated by a top-level run, one more per level below."""
    inherited: tuple[Any, ...] = ()
    """The tree extensions of the delegating runs (``Extension`` objects), outermost first."""
    parent_run_id: str | None = None
    call_id: str | None = None
    """The id of the delegating tool call."""


def _ignore_event(_: AgentEvent) -> None:
    return None


class ToolContext:
    """What a running tool can see and do: its call, cancellation, and progress reports.

    ``cancel`` is the call's own token: cancelled with the run, and cancellable by the tool
    alone (stopping its own work, not the run). A tool that delegates to another run
    reports that run's events (:meth:`report_event`) and spend
    (:meth:`report_delegated_run`), and builds it with :meth:`child_delegation`.
    """

    __slots__ = (
        "_cancel",
        "_on_delegated",
        "_on_event",
        "_on_progress",
        "_on_update",
        "_parent_cancel",
        "depth",
        "run_id",
        "spend",
        "tool_call_id",
        "tool_name",
        "tree_extensions",
    )

    def __init__(
        self,
        *,
        tool_call_id: str,
        tool_name: str,
        cancel: CancelToken | None = None,
        on_update: Callable[[ToolResult], None] | None = None,
        on_progress: Callable[[str], None] | None = None,
        on_delegated_run: Callable[[SessionStats], None] | None = None,
        on_event: Callable[[AgentEvent], None] | None = None,
        run_id: str = "",
        depth: int = 0,
        spend: RunSpend | None = None,
        tree_extensions: tuple[Any, ...] = (),
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self._parent_cancel = cancel
        self._cancel: CancelToken | None = None
        self._on_update = on_update
        self._on_progress = on_progress
        self._on_delegated = on_delegated_run
        self._on_event = on_event or _ignore_event
        self.run_id = run_id
        """The id of the run that made the call."""
        self.depth = depth
        """The depth of that run (0: top level)."""
        self.spend = spend if spend is not None else RunSpend(SessionStats())
        """The run's spend ledger: record side requests made for it (decisions, summaries)."""
        self.tree_extensions = tree_extensions
        """The extensions a run delegated by this call inherits."""

    @property
    def cancel(self) -> CancelToken:
        """This call's cancellation token (made on first use, a child of the run's)."""
        token = self._cancel
        if token is None:
            parent = self._parent_cancel
            token = parent.child() if parent is not None else CancelToken()
            self._cancel = token
        return token

    @property
    def cancelled(self) -> bool:
        """True once the run (or this call) was cancelled: stop work and return soon."""
        if self._cancel is not None:
            return self._cancel.cancelled
        return self._parent_cancel is not None and self._parent_cancel.cancelled

    def update(self, partial: ToolResult) -> None:
        """Report partial output (becomes a ``ToolExecutionUpdate`` event)."""
        if self._on_update is not None:
            self._on_update(partial)

    def progress(self, text: str) -> None:
        """Say what the tool is doing, for people (becomes a ``ProgressMessage`` event)."""
        if self._on_progress is not None:
            self._on_progress(text)

    def report_delegated_run(self, stats: SessionStats) -> None:
        """Report what a run this tool delegated to spent (call before returning or raising).

        The figures go into the parent's ``SessionStats.sub_agents`` (its summaries and
        decisions into ``compaction`` and ``decision``), never into its own, and onto this
        call's ``ToolExecutionEnd`` details.
        """
        if self._on_delegated is not None:
            self._on_delegated(stats)

    def report_event(self, event: AgentEvent) -> None:
        """Forward an event of a run this tool delegated to: it reaches this run's stream as
        a :class:`SubAgentEvent` tagged with this call (events already tagged by a deeper
        delegation pass through as they are)."""
        if isinstance(event, SubAgentEvent):
            self._on_event(event)
            return
        self._on_event(
            SubAgentEvent(
                tool_call_id=self.tool_call_id,
                tool_name=self.tool_name,
                depth=self.depth + 1,
                event=event,
            )
        )

    def child_delegation(self) -> Delegation:
        """Where a run delegated by this call sits: one level deeper, inheriting the tree
        extensions, with this run and call as its parent."""
        return Delegation(
            depth=self.depth + 1,
            inherited=self.tree_extensions,
            parent_run_id=self.run_id or None,
            call_id=self.tool_call_id,
        )


@runtime_checkable
class AgentTool(Protocol):
    """A tool the model can call.

    ``parameters`` is the JSON schema of the arguments object. ``execute`` returns a
    :class:`ToolResult`; it reports failure by raising :class:`ToolError` (any other
    exception is contained the same way, carrying its text).
    """

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
