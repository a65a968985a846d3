"""Tool output as valid text: bytes that are not UTF-8 are shown as ``\\xNN``, never lost or raw.

A file name read from the OS is a ``str`` whose undecodable bytes are lone surrogates
(``surrogateescape``); output read from a pipe or a file is bytes. Neither may reach a
tool result as is: a lone surrogate cannot be encoded into a request body, so one odd
file name would break every later request of the conversation. Both are rendered with
the undecodable bytes escaped visibly, as Python's ``backslashreplace`` does.
"""

from __future__ import annotations

import re
from typing import Final

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def visible_bytes(data: bytes) -> str:
    """``data`` decoded as UTF-8, each undecodable byte shown as ``\\xNN``."""
    return data.decode("utf-8", errors="backslashreplace")


def visible_text(text: str) -> str:
    """``text`` safe to encode as UTF-8: the lone surrogates of undecodable bytes as ``\\xNN``.

    A name from the OS (``surrogateescape``) gets its raw bytes shown; any other lone
    surrogate (from a JSON ``\\udXXX`` escape) is shown as ``\\udXXX``. Valid text is
    returned unchanged (the common case costs one regex search).
    """
    if _SURROGATE.search(text) is None:
        return text
    try:
        raw = text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)
    return visible_bytes(raw)
