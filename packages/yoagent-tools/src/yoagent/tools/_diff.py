"""``edit_file``'s diff, built from the spans the edits replaced, not by diffing whole files.

difflib on the whole file before and after is slow on big files and, worse, wrong on
repetitive ones: its "autojunk" heuristic drops lines that occur often, so a one-line
change in ``"a\\nb\\n" * 100000`` came out as one hunk rewriting 150,000 lines. The
edits say exactly what changed, so :class:`ChangedSpans` keeps, for each replaced
region, where it is in the text before and after; :func:`unified_diff` turns those
regions into whole lines, compares only the lines inside each region (bounded, without
autojunk), and shows two lines of context around them, in unified diff format.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

CONTEXT_LINES: Final = 2
MAX_COMPARED_LINES: Final = 2000
"""A changed region with more lines than this (either side) is shown as all removed, then
all added, without a line-by-line comparison (which is quadratic at worst)."""


@dataclass(slots=True, frozen=True)
class Span:
    """A changed region: ``before[before_start:before_end]`` is ``after[after_start:after_end]``."""

    before_start: int
    before_end: int
    after_start: int
    after_end: int

    @property
    def growth(self) -> int:
        """How much longer the region is after than before."""
        return (self.after_end - self.after_start) - (self.before_end - self.before_start)


class ChangedSpans:
    """The regions a series of replacements changed, in both the original and the current text.

    Call :meth:`replace` with each replacement's position in the text as it then was;
    regions that overlap or touch are merged, so a later edit of text an earlier one
    wrote is one region.
    """

    __slots__ = ("spans",)

    def __init__(self) -> None:
        self.spans: list[Span] = []  # sorted, disjoint, not touching

    def replace(self, start: int, end: int, length: int) -> None:
        """Record that ``current[start:end]`` was replaced by ``length`` characters."""
        growth = length - (end - start)
        kept: list[Span] = []
        growth_before = 0  # of the regions wholly before this one
        merged_growth = 0
        low, high = start, end
        position = 0
        for span in self.spans:
            if span.after_end < start:
                kept.append(span)
                growth_before += span.growth
                position += 1
            elif span.after_start > end:
                kept.append(
                    Span(
                        span.before_start,
                        span.before_end,
                        span.after_start + growth,
                        span.after_end + growth,
                    )
                )
            else:
                low, high = min(low, span.after_start), max(high, span.after_end)
                merged_growth += span.growth
        new = Span(
            low - growth_before,
            high - growth_before - merged_growth,
            low,
            high + growth,
        )
        kept.insert(position, new)
        self.spans = kept


@dataclass(slots=True)
class _Lines:
    """A changed region as whole lines: ``before[b0:b1]`` became ``after[a0:a1]``."""

    b0: int
    b1: int
    a0: int
    a1: int


_Opcode = tuple[str, int, int, int, int]


def unified_diff(before: str, after: str, spans: list[Span], shown: str) -> list[str]:
    """The unified diff (``--- a/…``, ``+++ b/…``, ``@@`` hunks) of the changed ``spans``."""
    old = _split(before)
    new = _split(after)
    regions = _line_regions(before, after, spans, len(old), len(new))
    opcodes = list(_opcodes(old, new, regions))
    if not any(tag != "equal" for tag, *_ in opcodes):
        return []
    lines = [f"--- a/{shown}", f"+++ b/{shown}"]
    for group in _grouped(opcodes, CONTEXT_LINES):
        first, last = group[0], group[-1]
        lines.append(
            f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@",
        )
        for tag, b0, b1, a0, a1 in group:
            if tag == "equal":
                lines += [" " + line for line in old[b0:b1]]
                continue
            lines += ["-" + line for line in old[b0:b1]]
            lines += ["+" + line for line in new[a0:a1]]
    return lines


def _split(text: str) -> list[str]:
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # the text ends with a newline (or is empty): no line after it
    return lines


def _line_regions(
    before: str, after: str, spans: list[Span], old_count: int, new_count: int
) -> list[_Lines]:
    """The spans as whole-line regions, merged where they share a line, ends trimmed."""
    regions: list[_Lines] = []
    b_at = a_at = 0  # where the newline counts below have got to
    b_line = a_line = 0
    for span in spans:  # sorted: count each stretch between them once
        b_line += before.count("\n", b_at, span.before_start)
        a_line += after.count("\n", a_at, span.after_start)
        b_at, a_at = span.before_start, span.after_start
        b_last = b_line + before.count("\n", span.before_start, span.before_end)
        a_last = a_line + after.count("\n", span.after_start, span.after_end)
        region = _Lines(b_line, min(b_last + 1, old_count), a_line, min(a_last + 1, new_count))
        if regions and region.b0 < regions[-1].b1:  # they share a line
            regions[-1].b1, regions[-1].a1 = region.b1, region.a1
        else:
            regions.append(region)
    return regions


def _opcodes(old: list[str], new: list[str], regions: list[_Lines]) -> Iterator[_Opcode]:
    """difflib-style opcodes for the whole file: equal runs between the compared regions."""
    b_at = a_at = 0
    for region in regions:
        b0, b1, a0, a1 = region.b0, region.b1, region.a0, region.a1
        while b0 < b1 and a0 < a1 and old[b0] == new[a0]:
            b0, a0 = b0 + 1, a0 + 1
        while b1 > b0 and a1 > a0 and old[b1 - 1] == new[a1 - 1]:
            b1, a1 = b1 - 1, a1 - 1
        if b0 == b1 and a0 == a1:
            continue
        if b0 > b_at:
            yield ("equal", b_at, b0, a_at, a0)
        if b1 - b0 > MAX_COMPARED_LINES or a1 - a0 > MAX_COMPARED_LINES:
            yield ("replace", b0, b1, a0, a1)
        else:
            matcher = difflib.SequenceMatcher(None, old[b0:b1], new[a0:a1], autojunk=False)
            for tag, i0, i1, j0, j1 in matcher.get_opcodes():
                yield (tag, b0 + i0, b0 + i1, a0 + j0, a0 + j1)
        b_at, a_at = b1, a1
    if b_at < len(old):
        yield ("equal", b_at, len(old), a_at, len(new))


def _grouped(opcodes: list[_Opcode], context: int) -> Iterator[list[_Opcode]]:
    """The opcodes in hunks with ``context`` equal lines around changes (difflib's grouping)."""
    codes = list(opcodes)
    if codes[0][0] == "equal":
        tag, b0, b1, a0, a1 = codes[0]
        codes[0] = (tag, max(b0, b1 - context), b1, max(a0, a1 - context), a1)
    if codes[-1][0] == "equal":
        tag, b0, b1, a0, a1 = codes[-1]
        codes[-1] = (tag, b0, min(b1, b0 + context), a0, min(a1, a0 + context))
    group: list[_Opcode] = []
    for tag, b0, b1, a0, a1 in codes:
        if tag == "equal" and b1 - b0 > 2 * context:
            group.append((tag, b0, min(b1, b0 + context), a0, min(a1, a0 + context)))
            yield group
            group = []
            b0, a0 = max(b0, b1 - context), max(a0, a1 - context)
        group.append((tag, b0, b1, a0, a1))
    if group and not (len(group) == 1 and group[0][0] == "equal"):
        yield group


def _range(start: int, stop: int) -> str:
    """A unified diff range, as difflib writes it (``start,length``; 1-based)."""
    length = stop - start
    if length == 1:
        return str(start + 1)
    return f"{start + 1 if length else start},{length}"
