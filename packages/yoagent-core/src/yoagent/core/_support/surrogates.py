"""The surrogate policy: any ``str`` made safe to encode as UTF-8, one way everywhere.

Python text can hold lone surrogates, which UTF-8 cannot: a file name read from the OS
keeps each byte it could not decode as U+DC80..U+DCFF (``surrogateescape``), and a JSON
``\\ud800`` escape decodes to one. Encoding such text raises, so one odd file name in a
tool result would break every later request of a conversation. Text that is *shown or
sent* gets each undecodable OS byte as the four characters ``\\xNN`` (what Python's
``backslashreplace`` shows for the same byte read as bytes) and any other lone surrogate
as U+FFFD. JSON that is *stored and read back* (a session, a cassette) keeps each lone
surrogate as a ``\\uXXXX`` escape instead, which reads back as the same text.
"""

from __future__ import annotations

import re
from typing import Final

_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _shown(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def _shown_in_json(match: re.Match[str]) -> str:
    # Inside a JSON string the backslash is escaped, so the decoded text reads \xNN.
    code = ord(match.group())
    return f"\\\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def utf8_safe(text: str) -> str:
    """``text`` safe to encode as UTF-8: each undecodable OS byte (a lone surrogate
    U+DC80..U+DCFF) as ``\\xNN``, any other lone surrogate as U+FFFD.

    Valid text is returned unchanged (the common case costs one regex search).
    """
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(_shown, text)


def utf8_safe_json(json_text: str, *, lossless: bool = False) -> str:
    """JSON text (lone surrogates occur only inside its strings) safe to encode as UTF-8.

    By default each lone surrogate is replaced as :func:`utf8_safe` does, its backslash
    escaped so the decoded string reads ``\\xNN``: for a request body. With ``lossless``,
    each becomes a ``\\uXXXX`` escape, which decodes back to the same surrogate: for a
    file that is read back (a session, a cassette). (A high surrogate followed by a low
    one reads back, by JSON's rule, as the one character the pair encodes.)
    """
    if _SURROGATE.search(json_text) is None:
        return json_text
    return _SURROGATE.sub(_escaped if lossless else _shown_in_json, json_text)


def utf8_decode(data: bytes) -> str:
    """``data`` decoded as UTF-8, each byte that is not UTF-8 shown as ``\\xNN`` (the
    spelling :func:`utf8_safe` gives the same byte in an OS name)."""
    return data.decode("utf-8", errors="backslashreplace")
