"""Tool and argument names the providers accept, made from a document's names.

Tool names follow the strictest provider rule, ``^[a-zA-Z0-9_-]{1,64}$``: other
characters become ``_``, a name too long keeps its start and ends in a hash of the
whole (so two long names that share a start stay apart), and a name already taken gets
``_2``, ``_3``... Argument (property) names follow ``^[a-zA-Z0-9_.-]{1,64}$`` the same
way. The same document always gives the same names.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final

MAX_NAME: Final = 64
_TOOL_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_-]+")
_ARGUMENT_UNSAFE: Final = re.compile(r"[^a-zA-Z0-9_.-]+")


def operation_tool_name(operation_id: str | None, method: str, path: str) -> str:
    """The base name of an operation's tool: its operationId, else ``method_path``
    (``GET /pets/{petId}`` → ``get_pets_petId``)."""
    if operation_id:
        name = _clean(_TOOL_UNSAFE, operation_id)
        if name:
            return name
    segments = [segment.strip("{}") for segment in path.split("/") if segment]
    return _clean(_TOOL_UNSAFE, "_".join([method, *segments])) or method


def argument_name(raw: str) -> str:
    """A parameter's name as a schema property name (``filter[status]`` → ``filter_status``)."""
    return _clean(_ARGUMENT_UNSAFE, raw) or "arg"


class NameSet:
    """Hands out unique names of at most ``MAX_NAME`` characters, in the order asked."""

    def __init__(self) -> None:
        self._taken: set[str] = set()

    def claim(self, wanted: str) -> str:
        """``wanted`` (shortened if too long) or, if taken, the first free ``wanted_N``."""
        name = _fit(wanted, MAX_NAME)
        counter = 1
        while name in self._taken:
            counter += 1
            suffix = f"_{counter}"
            name = _fit(wanted, MAX_NAME - len(suffix)) + suffix
        self._taken.add(name)
        return name

    def __contains__(self, name: object) -> bool:
        return name in self._taken


def _clean(pattern: re.Pattern[str], raw: str) -> str:
    return pattern.sub("_", raw).strip("_")


def _fit(name: str, limit: int) -> str:
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{name[: limit - 9].rstrip('_')}_{digest}"
