"""One interactive conversation: the agent, where it is saved, its approvals and its changes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from yoagent.core import Agent, AgentMessage, AssistantMessage, SessionError, UserMessage
from yoagent.core.extension import is_loop_injected

from .app import Options, file_sandbox, system_prompt_for
from .changes import ChangeTracker
from .confirm import ConfirmMiddleware
from .mcp_servers import McpServers
from .model_list import ModelList
from .render import Renderer
from .session_store import SavedSession, SessionStore, moved_notice

EXCHANGE_LINES = 4
"""How many lines of the last prompt and reply ``--resume`` shows."""


def last_exchange(messages: Sequence[AgentMessage]) -> tuple[str, str] | None:
    """The newest prompt the user typed and the reply text that followed it."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage) and not is_loop_injected(message):
            replies = [m.text for m in messages[index + 1 :] if isinstance(m, AssistantMessage)]
            return message.text, "\n".join(text for text in replies if text).strip()
    return None


def _excerpt(text: str) -> list[str]:
    lines = text.strip().splitlines() or [""]
    if len(lines) > EXCHANGE_LINES:
        lines = [*lines[:EXCHANGE_LINES], f"… ({len(lines) - EXCHANGE_LINES} more lines)"]
    return lines


@dataclass(slots=True)
class Conversation:
    """What the commands act on (see :mod:`.commands`)."""

    agent: Agent
    store: SessionStore
    session: SavedSession
    options: Options
    renderer: Renderer
    confirm: ConfirmMiddleware = field(default_factory=lambda: ConfirmMiddleware(None))
    tracker: ChangeTracker | None = None
    servers: McpServers = field(default_factory=McpServers)
    """The MCP servers connected for the session (``/mcp``)."""
    models: ModelList = field(default_factory=ModelList)
    last_prompt: str | None = None
    """The prompt ``/retry`` sends again."""
    queued_prompt: str | None = None
    """A prompt a command asked the REPL to run next (``/retry``)."""

    def __post_init__(self) -> None:
        if self.tracker is None:
            self.tracker = ChangeTracker(self.options.cwd, file_sandbox(self.options))

    @property
    def changes(self) -> ChangeTracker:
        """The agent's file changes (always set after construction)."""
        assert self.tracker is not None
        return self.tracker

    def save(self) -> None:
        """Write the history to the session file."""
        moved = self.session.save(self.agent.messages)
        if moved is not None:
            self.renderer.notice(moved_notice(moved, self.session))

    def refresh_system_prompt(self) -> None:
        """Read the system prompt's parts again (after ``/init`` wrote AGENTS.md)."""
        self.agent.system_prompt = system_prompt_for(self.options)

    def new_conversation(self) -> None:
        """Save this one and start another (``/clear``)."""
        self.save()
        self.agent.reset()
        self.session = self.store.create(cwd=self.options.cwd, model=self.agent.model.id)
        self.changes.forget_all()
        self.last_prompt = None

    def show_last_exchange(self) -> None:
        """Print the newest prompt and its reply, shortened (after a resume)."""
        exchange = last_exchange(self.agent.messages)
        if exchange is None:
            return
        prompt, reply = exchange
        for index, line in enumerate(_excerpt(prompt)):
            self.renderer.line(f"{'you: ' if index == 0 else '     '}{line}", "bold")
        if reply:
            for line in _excerpt(reply):
                self.renderer.line(f"  {line}", "dim")

    def resume(self, key: str = "") -> None:
        """Continue a saved session (``""``: the latest, preferring this folder's)."""
        self.save()  # first: the session to resume may be this one
        info = self.store.latest(self.options.cwd) if not key else self.store.find(key)
        if info is None:
            raise SessionError("no saved session yet")
        session = self.store.open(info)
        messages = session.messages
        for warning in session.warnings:
            self.renderer.notice(f"warning: {warning}")
        self.agent.replace_messages(messages)
        self.session = session
        self.changes.forget_all()
        self.last_prompt = None
        prompts = sum(1 for m in messages if isinstance(m, UserMessage) and not is_loop_injected(m))
        title = f": {info.title}" if info.title else ""
        self.renderer.notice(f"resumed session {info.id} ({prompts} prompts){title}")
        self.show_last_exchange()
