"""Tool names every provider accepts, made from an MCP server's tool names.

Providers take a tool name only if it matches ``^[a-zA-Z0-9_-]{1,64}$`` (the strictest
rule; one bad name fails the whole request), but a server may name a tool
``files.read``, ``fs/write`` or something 100 characters long. A server's name (after
the prefix) is kept when the whole fits; otherwise each run of other characters becomes
``_``, the name is cut to leave room, and it ends in ``_`` and 8 hex digits of a hash of
the server's name. The model's name depends only on the prefix and the server's name,
so a tool keeps it from one listing to the next and from one run to the next, and two
names that differ only in what was replaced (``files.read``, ``files/read``) stay apart.
The server is always called by its own name.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

PREFIX_SEPARATOR: Final = "__"
"""Between a prefix and the server's tool name: ``github__create_issue``."""

MAX_TOOL_NAME: Final = 64
"""The longest tool name every provider accepts."""

MAX_PREFIX: Final = 40
"""The longest prefix: room is left for the start of the tool's own name and a hash."""

_TOOL_NAME: Final = re.compile(r"[a-zA-Z0-9_-]{1,64}")
_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_-]+")
_PREFIX: Final = re.compile(rf"[a-zA-Z0-9_-]{{1,{MAX_PREFIX}}}")
_DIGEST: Final = 8


def check_prefix(prefix: str | None) -> None:
    """Refuse a prefix that would make tool names a provider rejects."""
    if prefix is not None and not _PREFIX.fullmatch(prefix):
        raise ValueError(
            f"prefix {prefix!r} must be 1 to {MAX_PREFIX} of a-z, A-Z, 0-9, '_' and '-' "
            f"(it starts every tool name: prefix{PREFIX_SEPARATOR}tool)"
        )


def is_tool_name(name: str) -> bool:
    """True for a name every provider accepts."""
    return bool(_TOOL_NAME.fullmatch(name))


def provider_tool_name(tool_name: str, prefix: str | None = None) -> str:
    """The name the model calls the server's tool ``tool_name`` by (see the module)."""
    head = f"{prefix}{PREFIX_SEPARATOR}" if prefix else ""
    whole = head + tool_name
    if tool_name and is_tool_name(whole):
        return whole
    digest = hashlib.sha256(tool_name.encode()).hexdigest()[:_DIGEST]
    room = MAX_TOOL_NAME - len(head) - len(digest) - 1
    safe = _UNSAFE.sub("_", tool_name)[:room]
    return f"{head}{safe}_{digest}"


def with_suffix(name: str, number: int) -> str:
    """``name`` ending in ``_<number>``, cut to stay within the limit (a collision's way out)."""
    suffix = f"_{number}"
    return name[: MAX_TOOL_NAME - len(suffix)] + suffix
