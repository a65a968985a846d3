"""A web page where an error body was expected: summarised by its title, never shown raw.

A proxy, a web server or a captive portal answers a wrong path, a down upstream or a
missing login with an HTML page; shown as it is, the user reads tags and styles instead
of what went wrong.
"""

from __future__ import annotations

import re
from html import unescape
from typing import Final

_START: Final = re.compile(r"\s*(?:<\?xml[^>]*>\s*)?(?:<!doctype\s+html|<html[\s>])", re.IGNORECASE)
_TITLE: Final = re.compile(r"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
_TITLE_LIMIT: Final = 120


def html_summary(text: str, content_type: str = "") -> str | None:
    """``an HTML page (title: 502 Bad Gateway)`` (``an HTML page`` without a title) when
    ``text`` is a web page — its ``content_type`` says HTML, or it starts like one — else
    ``None``. The title is unescaped, its white space collapsed, and cut at 120 characters.
    """
    if "html" not in content_type.lower() and not _START.match(text):
        return None
    found = _TITLE.search(text)
    title = " ".join(unescape(found.group(1)).split()) if found else ""
    if len(title) > _TITLE_LIMIT:
        title = title[:_TITLE_LIMIT] + "…"
    return f"an HTML page (title: {title})" if title else "an HTML page"
