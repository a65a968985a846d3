"""The tool contract: what a tool is, what it gets while it runs, and what it returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from yoagent.core._cancel import CancelToken
from yoagent.core._types.content import TextContent, UserContent
from yoagent.core._types.stats import SessionStats


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


class ToolError(Exception):
    """Raised by a tool to fail the call with a message the model reads.

    The run goes on: the model gets an error result carrying ``str(error)``; ``details``
    (e.g. an exit code) go to the result's ``details`` for the application.
    """

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.details = details


class ToolContext:
    """What a running tool can see and do: its call, cancellation, and progress reports."""

    __slots__ = (
        "_on_delegated",
        "_on_progress",
        "_on_update",
        "cancel",
        "tool_call_id",
        "tool_name",
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
    ) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.cancel = cancel if cancel is not None else CancelToken()
        self._on_update = on_update
        self._on_progress = on_progress
        self._on_delegated = on_delegated_run

    @property
    def cancelled(self) -> bool:
        """True once the run was cancelled: stop work and return (or raise) soon."""
        return self.cancel.cancelled

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

        The figures go into the parent's ``SessionStats.sub_agents``, never into its own.
        """
        if self._on_delegated is not None:
            self._on_delegated(stats)


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
