"""What waits for a person in the browser, what they are shown of it, and what the model
reads when they say no: :class:`WebApprovals`.

A held call pauses the run (the pause/resume contract of ``docs/approvals.md``): the run
ends with an AG-UI interrupt per held call, the page shows each one, and the person's
answers resume the run. The calls held are those a hook defers — the agent's own tool
middleware and extensions, and :attr:`WebApprovals.hold` — so an application decides what
needs a yes (the terminal agent's ``yoagent web`` holds what its confirmations ask about).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from yoagent.core import ToolCallRequest, ToolDecision

Preview = Callable[[str, Mapping[str, Any]], Awaitable[list[str]]]
"""``(tool_name, arguments) -> lines``: what a held call would change, shown above the
person's answer (a unified diff for a write or an edit); no lines: nothing to show."""

Hold = Callable[[ToolCallRequest], ToolDecision | Awaitable[ToolDecision]]
"""Tool middleware: ``Defer(reason)`` holds a call for the browser, ``Allow()`` lets it run."""


@dataclass(slots=True, kw_only=True, frozen=True)
class WebApprovals:
    """The approval rules of a web app.

    ``hold`` is tool middleware added after the agent's own: the calls it defers wait for
    the person (``None``: only what the agent's own hooks defer). ``preview`` shows what a
    held call would change; ``denial`` turns what the person typed when they said no (maybe
    nothing) into what the model reads after ``Tool call denied: ``.
    """

    hold: Hold | None = None
    preview: Preview | None = None
    denial: Callable[[str], str] | None = None

    def denial_text(self, reason: str) -> str:
        """What the model reads of a person's no with ``reason``."""
        if self.denial is not None:
            return self.denial(reason)
        return reason or "denied by the user"
