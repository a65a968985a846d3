"""Text that did not come from yoagent, made inert before it reaches the terminal.

Model text, tool arguments and output, file contents and server error messages may hold
escape sequences (clear the screen, move the cursor, set the window title, write the
clipboard with OSC 52) or characters that reorder or hide what is shown (a carriage
return, bidi overrides). :func:`inert` shows each such character as a visible escape
(``\\x1b``, ``\\r``, ``\\u202e``) instead, so the terminal prints it rather than obeys it.

``strict`` is for what a person approves (a command, a path, a diff): it must show exactly
what will run, so every invisible or format character is escaped too (and the question says
that the text holds some, since ``\\x1b`` could also be typed literally).
"""

from __future__ import annotations

import re
import unicodedata
from typing import TextIO

_BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
"""Characters that change the direction text is drawn in (the "Trojan Source" set)."""

# C0 controls but newline and tab, DEL, C1 controls, and the bidi controls.
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_STRICT_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def escape_char(char: str) -> str:
    """The visible form of one character: ``\\t``, ``\\r``, ``\\x1b``, ``\\u202e``."""
    named = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _strict_unsafe(char: str) -> bool:
    if char == "\n":
        return False
    return char == "\t" or unicodedata.category(char) in _UNSAFE_STRICT_CATEGORIES


def has_hidden(text: str) -> bool:
    """Whether ``text`` holds a character :func:`inert` would escape in strict mode."""
    return any(_strict_unsafe(char) for char in text)


def inert_parts(text: str, *, strict: bool = False) -> list[tuple[str, bool]]:
    """``text`` cut into runs of plain text and of escaped characters (``True``), so a
    renderer can mark the escapes apart from a literal backslash in the text."""
    unsafe = _strict_unsafe if strict else _loose_unsafe
    parts: list[tuple[str, bool]] = []
    plain: list[str] = []
    for char in text:
        if unsafe(char):
            if plain:
                parts.append(("".join(plain), False))
                plain = []
            parts.append((escape_char(char), True))
        else:
            plain.append(char)
    if plain:
        parts.append(("".join(plain), False))
    return parts


def inert(text: str, *, strict: bool = False) -> str:
    """``text`` with every character a terminal would act on shown as a visible escape.

    Newlines stay, and so do tabs unless ``strict``. With ``strict``, every control,
    format, private-use, unassigned or line-separator character is escaped too; say so
    beside the text (see :func:`has_hidden`), since ``\\x1b`` may also be typed literally.
    """
    if not strict:
        return _UNSAFE.sub(lambda match: escape_char(match.group()), text)
    return "".join(escape_char(char) if _strict_unsafe(char) else char for char in text)


def _loose_unsafe(char: str) -> bool:
    return _UNSAFE.match(char) is not None


# What JSON leaves raw in a string that a terminal may act on or that ends a line in
# JavaScript: DEL, C1 controls, the bidi controls, the line and paragraph separators (C0
# controls are escaped by every JSON encoder already).
_JSON_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}\u2028\u2029]")


def json_inert(line: str) -> str:
    """A serialized JSON line with every character a terminal may act on written as a
    ``\\uXXXX`` escape: the same JSON value, safe to print on a terminal."""
    return _JSON_UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", line)


def write_inert(stream: TextIO, text: str) -> None:
    """Write ``text`` and a newline to ``stream`` (stderr, mostly), inert."""
    stream.write(inert(text) + "\n")
    stream.flush()
