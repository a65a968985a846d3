"""Slash commands: ``/help``, ``/quit``, ``/clear``, ``/model``, ``/cost``, ``/save``,
``/resume``, ``/sessions`` and ``/thinking``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime

import anyio

from yoagent.core import Agent, SessionError, ThinkingLevel, UserMessage, is_loop_injected

from .app import Options
from .config import OPENAI_COMPATIBLE, model_config, openai_compatible
from .render import Renderer, status_line
from .session_store import SavedSession, SessionStore, moved_notice


@dataclass(slots=True)
class Conversation:
    """What the commands act on: the agent, where it is saved, and where output goes."""

    agent: Agent
    store: SessionStore
    session: SavedSession
    options: Options
    renderer: Renderer

    def save(self) -> None:
        """Write the history to the session file."""
        moved = self.session.save(self.agent.messages)
        if moved is not None:
            self.renderer.notice(moved_notice(moved, self.session))

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
        prompts = sum(1 for m in messages if isinstance(m, UserMessage) and not is_loop_injected(m))
        title = f": {info.title}" if info.title else ""
        self.renderer.notice(f"resumed session {info.id} ({prompts} prompts){title}")


Handler = Callable[[str], Awaitable[bool]]
"""A command's body: gets the text after the command, returns True to quit."""


class Commands:
    """The slash commands of one conversation."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._table: dict[str, tuple[Handler, str, str]] = {
            "/help": (self.help, "", "this list"),
            "/quit": (self.quit, "", "leave (so do Ctrl+D and Ctrl+C twice)"),
            "/exit": (self.quit, "", ""),
            "/clear": (self.clear, "", "start a new conversation"),
            "/model": (self.model, "[ID]", "show or switch the model (same provider)"),
            "/cost": (self.cost, "", "tokens and cost of this conversation"),
            "/save": (self.save, "[FILE]", "save the session now (or a copy to FILE)"),
            "/resume": (self.resume, "[ID]", "continue the last (or the given) session"),
            "/sessions": (self.sessions, "", "list saved sessions"),
            "/thinking": (
                self.thinking,
                "[show|hide|LEVEL]",
                "toggle showing thinking; LEVEL (off..high) sets how hard the model thinks",
            ),
        }

    @property
    def _out(self) -> Renderer:
        return self.conversation.renderer

    def names(self) -> list[str]:
        """Every command, for completion."""
        return list(self._table)

    async def dispatch(self, line: str) -> bool:
        """Run the command on ``line``; returns True when the REPL should end."""
        name, _, rest = line.strip().partition(" ")
        entry = self._table.get(name.lower())
        if entry is None:
            self._out.error(f"unknown command {name} (try /help)")
            return False
        try:
            return await entry[0](rest.strip())
        except SessionError as error:
            self._out.error(str(error))
        except OSError as error:
            self._out.error(f"{error.strerror or error}: {error.filename or ''}".rstrip(": "))
        return False

    async def help(self, _: str) -> bool:
        for name, (_handler, usage, text) in self._table.items():
            if text:
                self._out.line(f"  {f'{name} {usage}'.strip():<28} {text}")
        self._out.line(
            "  Ctrl+C stops the current run; at the prompt, Ctrl+C twice or Ctrl+D quits."
        )
        return False

    async def quit(self, _: str) -> bool:
        return True

    async def clear(self, _: str) -> bool:
        conversation = self.conversation
        conversation.save()
        conversation.agent.reset()
        conversation.session = conversation.store.create(
            cwd=conversation.options.cwd, model=conversation.agent.model.id
        )
        self._out.notice("(new conversation)")
        return False

    async def model(self, model_id: str) -> bool:
        agent = self.conversation.agent
        current = agent.model
        if not model_id:
            self._out.line(f"model {current.id} ({current.provider})")
            return False
        if current.provider == OPENAI_COMPATIBLE:
            config = openai_compatible(current.base_url, model_id)
        else:
            config = model_config(current.provider, model_id)
            if self.conversation.options.base_url:
                config.base_url = current.base_url
        agent.set_model(config)
        self._out.notice(f"model is now {config.id} ({config.provider})")
        return False

    async def cost(self, _: str) -> bool:
        stats = self.conversation.agent.stats
        self._out.line(f"{status_line(stats)} · turns {stats.turns}")
        if stats.is_unpriced():
            self._out.notice("(cost unknown: this model has no price configured)")
        return False

    async def save(self, target: str) -> bool:
        conversation = self.conversation
        conversation.save()
        path = conversation.session.path
        if target:
            destination = await anyio.Path(target).expanduser()
            await destination.write_bytes(conversation.session.session.to_jsonl().encode())
            self._out.notice(f"saved a copy to {destination}")
        elif path.exists():
            self._out.notice(f"saved to {path}")
        else:
            self._out.notice("nothing to save yet")
        return False

    async def resume(self, key: str) -> bool:
        self.conversation.resume(key)
        return False

    async def sessions(self, _: str) -> bool:
        found = self.conversation.store.list()
        if not found:
            self._out.notice("no saved sessions")
            return False
        current = self.conversation.session.id
        for info in found[:20]:
            when = datetime.fromtimestamp(info.modified).strftime("%Y-%m-%d %H:%M")
            mark = "*" if info.id == current else " "
            self._out.line(f"{mark} {info.id}  {when}  {info.cwd}  {info.title[:50]}")
        if len(found) > 20:
            self._out.notice(f"  … and {len(found) - 20} older")
        return False

    async def thinking(self, arg: str) -> bool:
        renderer = self.conversation.renderer
        agent = self.conversation.agent
        word = arg.lower()
        levels = {level.value: level for level in ThinkingLevel}
        if word in levels:
            agent.thinking_level = levels[word]
            self._out.notice(f"thinking level {word}")
            return False
        if word == "show":
            renderer.show_thinking = True
        elif word == "hide":
            renderer.show_thinking = False
        elif not word:
            renderer.show_thinking = not renderer.show_thinking
        else:
            self._out.error(f"/thinking takes show, hide or a level ({', '.join(levels)})")
            return False
        shown = "shown" if renderer.show_thinking else "hidden"
        self._out.notice(f"thinking {shown} (level {agent.thinking_level.value})")
        return False
