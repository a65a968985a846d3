"""File names as one line of valid text.

A file name read from the OS is a ``str`` whose undecodable bytes are lone surrogates
(``surrogateescape``); output read from a pipe or a file is bytes. Neither may reach a
tool result as is: a lone surrogate cannot be encoded into a request body, so one odd
file name would break every later request of the conversation. Both go through the
floor's surrogate policy (``yoagent.core.support.utf8_safe`` and ``utf8_decode``), which
shows each undecodable byte as ``\\xNN``.

A file name is also shown with its control characters escaped (:func:`visible_name`):
a name may hold a newline, and ``a.txt\nsrc/x.py:1:password = 'hunter2'`` printed as
is would add a fake line to a listing or to search results. The same holds for a path
the model passed: each tool names it through :func:`visible_name` once, right after the
sandbox check, and only that spelling goes into its results and errors.
"""

from __future__ import annotations

import re
from typing import Final

from yoagent.core.support import utf8_safe

_CONTROL: Final = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_SHORT_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible_name(name: str) -> str:
    """A path to print on one line: the floor's ``utf8_safe``, control characters escaped.

    ``\\n``, ``\\r`` and ``\\t`` are shown as such, other C0/C1 controls and DEL as
    ``\\xNN``, the Unicode line and paragraph separators as ``\\u2028``/``\\u2029``;
    so no name can start a line of its own in a tool's output.
    """
    text = utf8_safe(name)
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_escape_control, text)


def _escape_control(match: re.Match[str]) -> str:
    char = match.group()
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
