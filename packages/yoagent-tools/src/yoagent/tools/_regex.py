"""The Python search engine's regular expressions: RE2, linear time, without the GIL.

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` on a long line runs for
minutes while holding the GIL, so neither a timeout nor a cancel can stop it (and
the whole process freezes). RE2 (``google-re2``) matches in time linear in the text,
releases the GIL while it runs, and speaks nearly ripgrep's dialect (no look-around,
no back-references), so both engines accept the same patterns.

Patterns are compiled for searching many lines at once, as ripgrep does: ``(?m)`` so
``^``/``$`` match at line boundaries, and ``never_nl`` so no match crosses a newline
(``\\s`` or ``[^a]`` included). A buffer of whole lines is searched in one call and
only the lines holding a match are looked at.
"""

from __future__ import annotations

from typing import Any, Final, cast

import re2  # pyright: ignore[reportMissingTypeStubs]

from yoagent.core import ToolError

_RE2_ERROR: Final = cast(type[Exception], re2.error)  # pyright: ignore[reportUnknownMemberType]
_MAX_MEM: Final = 64 << 20  # RE2's budget for its automata (the default 8 MiB is small)


class LineMatcher:
    """One compiled search pattern (a regex, or literal text)."""

    __slots__ = ("_regex",)

    def __init__(self, pattern: str, *, ignore_case: bool = False, literal: bool = False) -> None:
        options: Any = re2.Options()  # pyright: ignore[reportUnknownMemberType]
        options.never_nl = True
        options.never_capture = True
        options.case_sensitive = not ignore_case
        options.literal = literal
        options.max_mem = _MAX_MEM
        options.log_errors = False
        source = pattern if literal else f"(?m){pattern}"
        try:
            self._regex: Any = re2.compile(source, options)  # pyright: ignore[reportUnknownMemberType]
        except _RE2_ERROR as error:
            detail = _message(error)
            raise ToolError(
                f"search: invalid regular expression {pattern!r}: {detail} "
                "(the syntax is ripgrep's: no look-around or back-references)"
            ) from None

    def find(self, data: bytes, start: int, end: int) -> int | None:
        """Where the first match in ``data[start:end]`` begins, or ``None``.

        ``data`` outside the range is context: ``^`` does not match at ``start`` unless
        a newline (or the buffer's start) precedes it, nor ``$`` at ``end`` unless a
        newline (or the buffer's end) follows.
        """
        match = self._regex.search(data, start, end)
        if match is None:
            return None
        return cast(int, match.start())


def _message(error: BaseException) -> str:
    """RE2's error text (it arrives as bytes)."""
    first: object = error.args[0] if error.args else ""
    text = first.decode("utf-8", "replace") if isinstance(first, bytes) else str(first)
    return text or "not a valid pattern"
