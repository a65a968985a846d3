"""Tool wrappers: one records what a tool did, the other serves the recording instead of
running the tool (a replay with no side effects)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, cast

from yoagent.core import AgentTool, TextContent, ToolContext, ToolError, ToolResult

from ._codec import JsonObject, blocks_from_json, blocks_json, json_value
from ._errors import TestingError
from ._match import canonical_json
from ._records import RecordedTool

if TYPE_CHECKING:
    from ._writer import CassetteWriter


class ToolResultMismatch(TestingError, ToolError):
    """A tool call a replay has no recorded result for (or one recorded with another tool
    or other arguments). The model reads it as the call's error result."""

    def __init__(self, message: str, *, tool_call_id: str) -> None:
        super().__init__(message)
        self.tool_call_id = tool_call_id


class _Wrapper:
    """Shows the model exactly what the wrapped tool shows (so requests still match)."""

    __slots__ = ("tool",)

    def __init__(self, tool: AgentTool) -> None:
        self.tool = tool

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def description(self) -> str:
        return self.tool.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.tool.parameters

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tool!r})"


class RecordingTool(_Wrapper):
    """Runs the wrapped tool and records its result, failure and progress reports."""

    __slots__ = ("writer",)

    def __init__(self, tool: AgentTool, writer: CassetteWriter) -> None:
        super().__init__(tool)
        self.writer = writer

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        updates: list[JsonObject] = []

        def on_update(partial: ToolResult) -> None:
            updates.append(
                {
                    "kind": "update",
                    "content": blocks_json(list(partial.content)),
                    "details": json_value(partial.details),
                }
            )
            ctx.update(partial)

        def on_progress(text: str) -> None:
            updates.append({"kind": "progress", "text": text})
            ctx.progress(text)

        # The call's own context, but for the two reports recorded on their way through.
        inner = ToolContext(
            tool_call_id=ctx.tool_call_id,
            tool_name=ctx.tool_name,
            cancel=ctx.cancel,
            on_update=on_update,
            on_progress=on_progress,
            on_delegated_run=ctx.report_delegated_run,
            on_event=ctx.report_event,
            run_id=ctx.run_id,
            depth=ctx.depth,
            spend=ctx.spend,
            tree_extensions=ctx.tree_extensions,
        )

        def record(content: list[JsonObject], details: Any, is_error: bool) -> None:
            self.writer.write_tool(
                RecordedTool(
                    tool_call_id=ctx.tool_call_id,
                    tool_name=self.name,
                    arguments=json_value(arguments),
                    content=content,
                    details=json_value(details),
                    is_error=is_error,
                    updates=updates,
                )
            )

        try:
            outcome = cast(object, await self.tool.execute(arguments, inner))
        except ToolError as error:
            # What the loop shows the model for each kind of failure, recorded as its text.
            record(_text(str(error) or type(error).__name__), error.details, True)
            raise
        except Exception as error:
            record(_text(f"{type(error).__name__}: {error}"), None, True)
            raise
        if not isinstance(outcome, ToolResult):
            text = f"tool {self.name} returned {type(outcome).__name__}, not a ToolResult"
            record(_text(text), None, True)
            return cast(ToolResult, outcome)  # the loop reports it as it always does
        record(blocks_json(list(outcome.content)), outcome.details, False)
        return outcome


def _text(text: str) -> list[JsonObject]:
    return [{"type": "text", "text": text}]


class RecordedResults:
    """The recorded tool results of a cassette, each served once, by tool-call id."""

    __slots__ = ("_by_id", "mismatches", "source")

    def __init__(
        self,
        tools: Iterable[RecordedTool],
        *,
        source: str,
        mismatches: list[Any] | None = None,
    ) -> None:
        self._by_id: dict[str, deque[RecordedTool]] = {}
        for tool in tools:
            self._by_id.setdefault(tool.tool_call_id, deque()).append(tool)
        self.source = source
        self.mismatches: list[Any] = [] if mismatches is None else mismatches
        """Where a call that could not be served is reported (a replay's own list)."""

    def take(self, call_id: str, name: str, arguments: dict[str, Any]) -> RecordedTool:
        """The next recorded result of call ``call_id``. Raises :class:`ToolResultMismatch`
        when there is none, or it was recorded for another tool or other arguments."""
        queue = self._by_id.get(call_id)
        if not queue:
            problem = f"no recorded result for {name} call {call_id!r} in {self.source}"
        else:
            recorded = queue.popleft()
            given = json_value(arguments)
            if recorded.tool_name == name and canonical_json(recorded.arguments) == (
                canonical_json(given)
            ):
                return recorded
            problem = (
                f"{name} call {call_id!r} does not match its recording in {self.source}: "
                f"recorded {recorded.tool_name}({recorded.arguments}), got {name}({given})"
            )
        raise ToolResultMismatch(problem, tool_call_id=call_id)


class ReplayingTool(_Wrapper):
    """Serves the recorded result of each call instead of running the wrapped tool.

    A call with no recording fails with :class:`ToolResultMismatch`, or, when ``fallback``
    is given (the tool itself, or a :class:`RecordingTool`), runs there.
    """

    __slots__ = ("fallback", "results")

    def __init__(
        self, tool: AgentTool, results: RecordedResults, *, fallback: AgentTool | None = None
    ) -> None:
        super().__init__(tool)
        self.results = results
        self.fallback = fallback

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            recorded = self.results.take(ctx.tool_call_id, self.name, arguments)
        except ToolResultMismatch as mismatch:
            if self.fallback is not None:
                return await self.fallback.execute(arguments, ctx)
            self.results.mismatches.append(mismatch)
            raise
        for update in recorded.updates:
            _replay_update(update, ctx.update, ctx.progress)
        content = blocks_from_json(recorded.content)
        if recorded.is_error:
            text = "\n".join(block.text for block in content if isinstance(block, TextContent))
            raise ToolError(text, details=recorded.details)
        return ToolResult(content=list(content), details=recorded.details)


def _replay_update(
    update: JsonObject,
    on_update: Callable[[ToolResult], None],
    on_progress: Callable[[str], None],
) -> None:
    if update.get("kind") == "progress":
        on_progress(str(update.get("text", "")))
    elif update.get("kind") == "update":
        on_update(
            ToolResult(
                content=list(blocks_from_json(update.get("content", []))),
                details=update.get("details"),
            )
        )
