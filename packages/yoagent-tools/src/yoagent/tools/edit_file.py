"""EditFileTool: replace exact, unique snippets of a file, all edits or none."""

from __future__ import annotations

import difflib
import heapq
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import anyio
from pydantic import Field

from yoagent.core import ToolArguments, ToolContext, ToolError, ToolResult

from ._base import BuiltinTool
from ._diff import ChangedSpans, Span, unified_diff
from ._errors import ToolsError
from ._fs import decode_text, open_for_read, read_all, sandboxed_write, write_lock
from ._text import visible_name
from .sandbox import PathSandbox, StrPath

MAX_EDIT_BYTES: Final = 16 * 1024 * 1024
_DIFF_LINES: Final = 80
_MAX_COUNTED: Final = 100  # matches counted exactly before "more than" is said
_SIMILAR_ENOUGH: Final = 0.6
HINT_BUDGET_S: Final = 0.5
"""Wall time the "closest lines" hint may take; past it the best candidate so far is shown."""
_HINT_CANDIDATES: Final = 8  # windows compared character by character after the cheap pass
_HINT_CHARS: Final = 1500  # characters of each side a character comparison looks at
_HINT_MAX_LINES: Final = 200_000  # a bigger file gets no hint
_WORD: Final = re.compile(r"\w+")
_LINE_NUMBER_PREFIX: Final = re.compile(r"^ *\d+\t", re.MULTILINE)

_DESCRIPTION = """\
Edit a file by replacing an exact piece of its text with new text.

`old_text` must appear exactly once in the file, character for character
(whitespace and indentation included; without the line numbers read_file shows).
Include a few surrounding lines to make it unique. If it is not found, the answer
shows the closest lines of the file; if it is found several times, it says how
many times and where. To make several changes in one call, pass `edits` (a list
of {old_text, new_text}) instead: they are applied in order, each to the result of
the previous one, and if any fails, none is applied. The file keeps its line
endings (LF or CRLF) and encoding. To create a file, use write_file."""


class EditError(ToolsError, ToolError):
    """An edit could not be applied; the file was left unchanged."""


@dataclass(slots=True, frozen=True)
class Edit:
    """One replacement: ``old_text`` (exact, unique) becomes ``new_text``."""

    old_text: str
    new_text: str


@dataclass(slots=True, frozen=True)
class EditOutcome:
    """The edited bytes and what changed."""

    data: bytes
    diff: str
    encoding: str
    line_endings: str


def apply_edits(
    data: bytes,
    edits: list[Edit],
    *,
    shown: str = "the file",
    stop: Callable[[], bool] = lambda: False,
) -> EditOutcome:
    """Apply ``edits`` in order to the file content ``data``; all of them or none.

    Raises :class:`EditError` (naming the failed edit and why) when any edit's
    ``old_text`` is empty, missing or not unique, or the result cannot be encoded
    like the original. ``stop`` cuts the search for the closest lines short (a
    cancelled call); that search is bounded by :data:`HINT_BUDGET_S` anyway.
    """
    if not edits:
        raise EditError("edit_file: no edit given (pass old_text and new_text, or edits)")
    decoded = decode_text(data)
    text = decoded.text
    crlf = "\r\n" in text and text.count("\n") == text.count("\r\n")
    work = text.replace("\r\n", "\n") if crlf else text
    has_cr = "\r" in work
    changed = ChangedSpans()
    for index, edit in enumerate(edits):
        where = f"edit {index + 1} of {len(edits)}: " if len(edits) > 1 else ""
        old, new = edit.old_text, edit.new_text
        if crlf or not has_cr:
            old = old.replace("\r\n", "\n")
            new = new.replace("\r\n", "\n")
        if not old:
            raise EditError(f"edit_file: {where}old_text is empty; nothing to find in {shown}")
        if old == new:
            raise EditError(f"edit_file: {where}old_text and new_text are the same")
        first = work.find(old)
        if first < 0:
            raise EditError(f"edit_file: {where}{_not_found(work, old, shown, stop)}")
        positions = _positions(work, old, first)
        if len(positions) > 1:
            lines = ", ".join(str(work.count("\n", 0, pos) + 1) for pos in positions[:10])
            more = ", …" if len(positions) > 10 else ""
            times = f"more than {_MAX_COUNTED}" if len(positions) > _MAX_COUNTED else len(positions)
            raise EditError(
                f"edit_file: {where}old_text was found {times} times in {shown} "
                f"(starting on lines {lines}{more}); it must be unique: include more "
                f"surrounding lines. No edit was applied."
            )
        work = work[:first] + new + work[first + len(old) :]
        changed.replace(first, first + len(old), len(new))
    result = work.replace("\n", "\r\n") if crlf else work
    try:
        out = decoded.encode(result)
    except UnicodeEncodeError as error:
        raise EditError(
            f"edit_file: {shown} is {decoded.encoding}-encoded and the new text has "
            f"characters it cannot hold ({error.object[error.start : error.end]!r}). "
            f"No edit was applied."
        ) from None
    before = text.replace("\r\n", "\n") if crlf else text
    return EditOutcome(
        data=out,
        diff=_diff(before, work, changed.spans, shown),
        encoding=decoded.encoding,
        line_endings="CRLF" if crlf else "LF",
    )


def _positions(work: str, old: str, first: int) -> list[int]:
    """Where ``old`` starts in ``work``: up to ``_MAX_COUNTED`` + 1 places (more means "many")."""
    found = [first]
    while len(found) <= _MAX_COUNTED:
        nxt = work.find(old, found[-1] + 1)
        if nxt < 0:
            break
        found.append(nxt)
    return found


def _not_found(work: str, old: str, shown: str, stop: Callable[[], bool]) -> str:
    message = f"old_text was not found in {shown}. No edit was applied."
    hints: list[str] = []
    if _LINE_NUMBER_PREFIX.search(old) and all(
        _LINE_NUMBER_PREFIX.match(line) for line in old.split("\n") if line
    ):
        hints.append(
            "old_text seems to start its lines with the line numbers read_file shows; "
            "leave them out."
        )
    squeezed = " ".join(old.split())
    if squeezed and squeezed in " ".join(work.split()):
        hints.append("The text is there with different whitespace or indentation.")
    closest = _closest(work, old, stop)
    if closest is not None:
        start, ratio, lines = closest
        numbered = "\n".join(f"{start + i:>6}\t{line}" for i, line in enumerate(lines))
        hints.append(
            f"Did you mean lines {start}-{start + len(lines) - 1} "
            f"({round(ratio * 100)}% similar)?\n{numbered}"
        )
    return "\n".join([message, *hints])


def _closest(
    work: str, old: str, stop: Callable[[], bool] = lambda: False
) -> tuple[int, float, list[str]] | None:
    """The window of file lines most like ``old`` (1-based start, similarity, lines).

    Bounded whatever the input: a cheap pass scores every window by the words its lines
    share with ``old`` (one rolling sum, linear in the file), then only the best few
    windows are compared character by character (difflib, each side cut to
    :data:`_HINT_CHARS`), within :data:`HINT_BUDGET_S` and while ``stop()`` is false.
    """
    file_lines = work.split("\n")
    old_lines = old.strip("\n").split("\n")
    size = min(len(old_lines), len(file_lines))
    if size == 0 or len(file_lines) > _HINT_MAX_LINES:
        return None
    deadline = time.monotonic() + HINT_BUDGET_S
    wanted = set(_WORD.findall(old))
    scores = [_shared_words(line, wanted) for line in file_lines]
    window = sum(scores[:size])
    totals = [window]
    for start in range(1, len(file_lines) - size + 1):
        window += scores[start + size - 1] - scores[start - 1]
        totals.append(window)
    starts = heapq.nlargest(_HINT_CANDIDATES, range(len(totals)), key=lambda i: (totals[i], -i))
    target = "\n".join(old_lines)[:_HINT_CHARS]
    best_ratio = 0.0
    best_start = -1
    for start in starts:
        if stop() or time.monotonic() > deadline:
            break
        candidate = "\n".join(file_lines[start : start + size])[:_HINT_CHARS]
        matcher = difflib.SequenceMatcher(None, candidate, target, autojunk=False)
        if matcher.real_quick_ratio() <= best_ratio or matcher.quick_ratio() <= best_ratio:
            continue
        ratio = matcher.ratio()
        if ratio > best_ratio:
            best_ratio, best_start = ratio, start
    if best_start < 0 or best_ratio < _SIMILAR_ENOUGH:
        return None
    return best_start + 1, best_ratio, file_lines[best_start : best_start + size]


def _shared_words(line: str, wanted: set[str]) -> float:
    """How much of ``line`` is made of words of ``old_text`` (0 to 1; blank lines 0)."""
    words = _WORD.findall(line)
    if not words:
        return 0.0
    return sum(word in wanted for word in words) / len(words)


def _diff(before: str, after: str, spans: list[Span], shown: str) -> str:
    lines = unified_diff(before, after, spans, shown)
    if len(lines) > _DIFF_LINES:
        dropped = len(lines) - _DIFF_LINES
        lines = [*lines[:_DIFF_LINES], f"[... {dropped} more diff lines ...]"]
    return "\n".join(lines)


class EditItem(ToolArguments):
    """One replacement of ``edits``."""

    old_text: str = Field(description="Exact text to replace.")
    new_text: str = Field(description="The text to put in its place.")


class EditFileArguments(ToolArguments):
    """The arguments of ``edit_file``: ``old_text`` and ``new_text``, or ``edits``."""

    path: str = Field(description="The file to edit (relative, or absolute).")
    old_text: str = Field("", description="The exact text to replace; must occur exactly once.")
    new_text: str = Field("", description="The text to put in its place (may be empty to delete).")
    edits: list[EditItem] = Field(
        default_factory=list[EditItem],
        description="Several replacements, applied in order, all or none "
        "(instead of old_text/new_text).",
    )

    def to_edits(self) -> list[Edit]:
        """The edits asked for; a ToolError when both forms, or neither, were given."""
        single = {"old_text", "new_text"} & self.model_fields_set
        if self.edits:
            if single:
                raise ToolError("edit_file: pass either old_text/new_text or edits, not both")
            return [Edit(item.old_text, item.new_text) for item in self.edits]
        if single != {"old_text", "new_text"}:
            raise ToolError("edit_file: old_text and new_text are required (strings), or edits")
        return [Edit(self.old_text, self.new_text)]


class EditFileTool(BuiltinTool[EditFileArguments]):
    """The ``edit_file`` tool. Paths are checked by ``sandbox`` (unrestricted by default).

    Each call reads, edits and replaces the file while holding the file's write lock,
    so parallel edits of one file from this process apply one after the other.
    """

    def __init__(
        self, sandbox: PathSandbox | None = None, *, allowed_paths: list[StrPath] | None = None
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)
        super().__init__(
            name="edit_file",
            description=f"{_DESCRIPTION}\n\n{self.sandbox.paths_note()}",
            arguments=EditFileArguments,
        )

    async def run(self, arguments: EditFileArguments, ctx: ToolContext) -> ToolResult:
        """Apply the edits and write the file atomically."""
        path = arguments.path
        edits = arguments.to_edits()
        target = self.sandbox.check(path, tool="edit_file")
        shown = visible_name(path)
        outcome = await anyio.to_thread.run_sync(
            lambda: self._edit(shown, target, edits, lambda: ctx.cancelled)
        )
        count = f"{len(edits)} edits" if len(edits) > 1 else "1 edit"
        return ToolResult.from_text(
            f"Edited {shown} ({count} applied).\n{outcome.diff}",
            {
                "path": shown,
                "edits": len(edits),
                "diff": outcome.diff,
                "encoding": outcome.encoding,
                "line_endings": outcome.line_endings,
            },
        )

    def _edit(
        self, shown: str, target: str, edits: list[Edit], stop: Callable[[], bool]
    ) -> EditOutcome:
        nofollow = self.sandbox.restricted
        with write_lock(target):
            try:
                fd, st = open_for_read("edit_file", shown, target, nofollow=nofollow)
            except ToolError as error:
                if str(error).endswith("does not exist"):
                    raise ToolError(f"{error}; use write_file to create it") from None
                raise
            if st.st_size > MAX_EDIT_BYTES:
                os.close(fd)
                raise ToolError(
                    f"edit_file: {shown} is {st.st_size} bytes, more than {MAX_EDIT_BYTES}; "
                    "edit it with bash instead"
                )
            data = read_all(fd)
            outcome = apply_edits(data, edits, shown=shown, stop=stop)
            sandboxed_write("edit_file", shown, target, outcome.data, nofollow=nofollow)
        return outcome
