"""The confirmation middleware: a write, an edit or a shell command waits for the user's yes.

Interactive mode asks before each ``write_file``, ``edit_file`` and ``bash`` call, showing
the path or the command (answers: yes, no, always for this tool). ``--yes`` allows every
call without asking. In ``-p`` mode nobody can answer, so without ``--yes`` those calls are
denied, and the model reads why.
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from yoagent.core import Allow, Deny, ToolCallRequest, ToolDecision

GUARDED_TOOLS: frozenset[str] = frozenset({"write_file", "edit_file", "bash"})
"""The tools that change things: they need the user's yes."""

DECLINED = "the user declined"
NON_INTERACTIVE = (
    "{tool} is not allowed in a non-interactive run (yoagent -p) without --yes; "
    "tell the user what you would have done instead"
)


class Answer(enum.Enum):
    """What the user said to one confirmation."""

    YES = "yes"
    NO = "no"
    ALWAYS = "always"
    ABORT = "abort"


Ask = Callable[[ToolCallRequest, str], Awaitable[Answer]]
"""Shows the question for a call (the request and its one-line description) and returns
the answer."""


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def describe(request: ToolCallRequest) -> str:
    """What a guarded call will do, for the person asked: the command, or the path."""
    arguments: dict[str, Any] = request.arguments
    if request.tool_name == "bash":
        command = str(arguments.get("command", ""))
        return f"run: {_shorten(command, 2000)}"
    path = str(arguments.get("path", "?"))
    if request.tool_name == "write_file":
        content = str(arguments.get("content", ""))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        return f"write {path} ({lines} lines, {len(content.encode())} bytes)"
    if request.tool_name == "edit_file":
        edits = arguments.get("edits")
        count = len(edits) if isinstance(edits, list) else 1  # pyright: ignore[reportUnknownArgumentType]
        return f"edit {path} ({count} change{'s' if count != 1 else ''})"
    return f"{request.tool_name} {path}"


class ConfirmMiddleware:
    """Tool middleware asking before guarded calls (see the module's docstring).

    ``ask`` is ``None`` in a non-interactive run. ``on_abort`` is called when the user
    answers by interrupting: the whole run should stop then.
    """

    def __init__(
        self,
        ask: Ask | None,
        *,
        assume_yes: bool = False,
        on_abort: Callable[[], None] | None = None,
        on_denied: Callable[[ToolCallRequest, str], None] | None = None,
    ) -> None:
        self.ask = ask
        self.assume_yes = assume_yes
        self.on_abort = on_abort
        self.on_denied = on_denied
        self.always: set[str] = set()
        self._lock = anyio.Lock()

    async def __call__(self, request: ToolCallRequest) -> ToolDecision:
        if request.tool_name not in GUARDED_TOOLS or self.assume_yes:
            return Allow()
        if request.tool_name in self.always:
            return Allow()
        ask = self.ask
        if ask is None:
            reason = NON_INTERACTIVE.format(tool=request.tool_name)
            on_denied = self.on_denied
            if on_denied is not None:
                on_denied(request, reason)
            return Deny(reason)
        # Parallel calls ask one at a time.
        async with self._lock:
            if request.tool_name in self.always:
                return Allow()
            answer = await ask(request, describe(request))
        if answer is Answer.ALWAYS:
            self.always.add(request.tool_name)
            return Allow()
        if answer is Answer.YES:
            return Allow()
        on_abort = self.on_abort
        if answer is Answer.ABORT and on_abort is not None:
            on_abort()
        return Deny(DECLINED)


def parse_answer(text: str) -> Answer:
    """``y``/``yes`` → YES, ``a``/``always`` → ALWAYS, anything else → NO."""
    word = text.strip().lower()
    if word in ("y", "yes"):
        return Answer.YES
    if word in ("a", "always"):
        return Answer.ALWAYS
    return Answer.NO
