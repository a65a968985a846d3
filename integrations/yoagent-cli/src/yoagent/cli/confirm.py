"""The confirmation middleware: a write, an edit or a shell command waits for the user's yes.

Interactive mode asks before every call of a tool that is not known to only read: the
``write_file``, ``edit_file`` and ``bash`` calls, showing the command, or the path and a
diff, and every call of an MCP server's tool — an external side effect yoagent cannot see
into — showing its arguments (a server whose config table says ``confirm = false`` is
trusted: its tools run without asking). Answers: yes; no, with an optional reason the
model reads; always for this tool — a standing grant, listed in the status line and taken
back with ``/revoke``. ``--yes`` allows every call without asking. In ``-p`` mode nobody
can answer, so without ``--yes`` those calls are denied, and the model reads why.

A command that would run outside the OS sandbox says so in the question (``run outside
the sandbox: ...``). One that asks to leave it (``outside_sandbox``, after the sandbox
refused it) is asked about every time: neither ``--yes`` nor an "always" grant covers it,
and in ``-p`` mode it is denied (see :mod:`.sandbox`).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio

from yoagent.core import Allow, Deny, ToolCallRequest, ToolDecision

from .sandbox import asks_outside

READ_ONLY_TOOLS: frozenset[str] = frozenset({"read_file", "list_files", "search", "read_skill"})
"""The tools that only read: they never ask. Every other tool needs the user's yes."""

DECLINED = "the user declined"
NON_INTERACTIVE = (
    "{tool} is not allowed in a non-interactive run (yoagent -p) without --yes; "
    "tell the user what you would have done instead"
)
OUTSIDE_NEEDS_A_PERSON = (
    "running a command outside the sandbox needs the user's approval each time, and nobody "
    "can give it in a non-interactive run (yoagent -p), even with --yes; tell the user what "
    "the sandbox refused and what you would have run"
)


class Answer(enum.Enum):
    """What the user said to one confirmation."""

    YES = "yes"
    NO = "no"
    ALWAYS = "always"
    ABORT = "abort"


@dataclass(slots=True, frozen=True)
class Reply:
    """An answer and, for a no, why (sent to the model)."""

    answer: Answer
    reason: str = ""


Ask = Callable[[ToolCallRequest, str], Awaitable[Answer | Reply]]
"""Shows the question for a call (the request and its one-line description) and returns
the answer."""


def declined(reason: str = "") -> str:
    """What the model reads when the user said no (and why, when they said)."""
    reason = " ".join(reason.split())
    return f"{DECLINED}; they said: {reason}" if reason else DECLINED


def describe(request: ToolCallRequest, *, sandboxed: bool = True) -> str:
    """What a guarded call will do, for the person asked: the whole command, or the path.

    A command that runs outside the OS sandbox (``sandboxed`` false: ``--sandbox
    full-access``; or a call asking to leave it) says so. Nothing is shortened: the person
    approves exactly this (draw it with :meth:`~.render.Renderer.exact`, which shows
    control characters as escapes).
    """
    arguments: dict[str, Any] = request.arguments
    if request.tool_name == "bash":
        command = str(arguments.get("command", ""))
        if not sandboxed or asks_outside(request):
            return f"run outside the sandbox: {command}"
        return f"run: {command}"
    path = str(arguments.get("path", "?"))
    if request.tool_name == "write_file":
        content = str(arguments.get("content", ""))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        counted = f"{lines} line" if lines == 1 else f"{lines} lines"
        return f"write {path} ({counted}, {len(content.encode())} bytes)"
    if request.tool_name == "edit_file":
        edits = arguments.get("edits")
        count = len(edits) if isinstance(edits, list) else 1  # pyright: ignore[reportUnknownArgumentType]
        return f"edit {path} ({count} change{'s' if count != 1 else ''})"
    shown = json.dumps(arguments, ensure_ascii=False, indent=2, default=str)
    return f"call {request.tool_name} with {shown}"


class ConfirmMiddleware:
    """Tool middleware asking before guarded calls (see the module's docstring).

    ``ask`` is ``None`` in a non-interactive run. ``on_abort`` is called when the user
    answers by interrupting: the whole run should stop then. ``trusted`` names tools that
    run without asking although they are not read-only (a ``confirm = false`` server's).
    ``sandboxed`` says whether bash's commands run in the OS sandbox (the question says
    when one will not).
    """

    def __init__(
        self,
        ask: Ask | None,
        *,
        assume_yes: bool = False,
        on_abort: Callable[[], None] | None = None,
        on_denied: Callable[[ToolCallRequest, str], None] | None = None,
        trusted: Callable[[str], bool] | None = None,
        sandboxed: bool = True,
    ) -> None:
        self.ask = ask
        self.sandboxed = sandboxed
        self.assume_yes = assume_yes
        self.on_abort = on_abort
        self.on_denied = on_denied
        self.trusted = trusted
        self.always: set[str] = set()
        self._lock = anyio.Lock()

    def guards(self, tool_name: str) -> bool:
        """Whether a call of ``tool_name`` waits for the user's yes (or ``--yes``)."""
        trusted = self.trusted
        return tool_name not in READ_ONLY_TOOLS and not (trusted is not None and trusted(tool_name))

    def leaves(self, request: ToolCallRequest) -> bool:
        """Whether ``request`` asks to leave the OS sandbox: asked about every time, whatever
        ``--yes`` or a standing grant says."""
        return self.sandboxed and asks_outside(request)

    def waits(self, request: ToolCallRequest) -> bool:
        """Whether ``request`` needs a person's yes now: a call leaving the sandbox always;
        another guarded call unless ``--yes`` or an "always" grant covers it."""
        if self.leaves(request):
            return True
        name = request.tool_name
        return not self.assume_yes and self.guards(name) and name not in self.always

    async def __call__(self, request: ToolCallRequest) -> ToolDecision:
        if not self.waits(request):
            return Allow()
        leaves = self.leaves(request)
        ask = self.ask
        if ask is None:
            reason = (
                OUTSIDE_NEEDS_A_PERSON if leaves else NON_INTERACTIVE.format(tool=request.tool_name)
            )
            on_denied = self.on_denied
            if on_denied is not None:
                on_denied(request, reason)
            return Deny(reason)
        # Parallel calls ask one at a time.
        async with self._lock:
            if not leaves and request.tool_name in self.always:
                return Allow()
            reply = await ask(request, describe(request, sandboxed=self.sandboxed))
        if isinstance(reply, Answer):
            reply = Reply(reply)
        answer = reply.answer
        if answer is Answer.ALWAYS:
            if not leaves:  # a yes for this call only
                self.always.add(request.tool_name)
            return Allow()
        if answer is Answer.YES:
            return Allow()
        on_abort = self.on_abort
        if answer is Answer.ABORT and on_abort is not None:
            on_abort()
        return Deny(declined(reply.reason))


def parse_answer(text: str) -> Answer:
    """``y``/``yes`` → YES, ``a``/``always`` → ALWAYS, anything else → NO."""
    word = text.strip().lower()
    if word in ("y", "yes"):
        return Answer.YES
    if word in ("a", "always"):
        return Answer.ALWAYS
    return Answer.NO
