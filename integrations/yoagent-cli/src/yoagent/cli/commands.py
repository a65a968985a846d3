"""Slash commands: what each one does, and the table ``/help`` and ``yoagent --help`` list."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime

import anyio

from yoagent.core import ContextConfig, SessionError, ThinkingLevel
from yoagent.core.context import compact_after_overflow

from .config import OPENAI_COMPATIBLE, model_config, openai_compatible
from .conversation import Conversation
from .instructions import write_starter
from .prices import env_override_problem, why_unpriced
from .render import Renderer
from .status import cost_lines

COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("/help", "", "this list"),
    ("/quit", "", "leave (so do /exit, Ctrl+D and Ctrl+C twice)"),
    ("/retry", "", "send the last prompt again (after a failure or Ctrl+C)"),
    ("/undo", "", "take back the last turn: restore the files it wrote, drop it from the chat"),
    ("/diff", "", "what the agent's writes and edits changed in this session"),
    ("/compact", "", "shorten the conversation now (old tool output, then old turns)"),
    ("/clear", "", "start a new conversation (the old one stays saved)"),
    ("/model", "[ID]", "show the model, or switch (Tab completes ids)"),
    ("/thinking", "[show|hide|LEVEL]", "show or hide thinking; LEVEL (off..high) sets effort"),
    ("/revoke", "[TOOL]", "take back an 'always' answer (all of them without TOOL)"),
    ("/init", "", "write a starter AGENTS.md (project instructions) here"),
    ("/cost", "", "tokens and cost of this conversation, part by part"),
    ("/mcp", "", "the MCP servers: where from, their tools, or why one has gone"),
    ("/save", "[FILE]", "save the session now (or a copy to FILE)"),
    ("/resume", "[ID]", "continue the last (or the given) session"),
    ("/sessions", "[delete ID|prune DAYS]", "list saved sessions; delete one; delete old ones"),
)
"""Every command: name, arguments, what it does."""

ALIASES = {"/exit": "/quit"}


def commands_help() -> str:
    """The command list as text (for ``/help`` and ``yoagent --help``)."""
    return "\n".join(f"  {f'{name} {usage}'.strip():<34} {text}" for name, usage, text in COMMANDS)


Handler = Callable[[str], Awaitable[bool]]
"""A command's body: gets the text after the command, returns True to quit."""


class Commands:
    """The slash commands of one conversation."""

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self._handlers: dict[str, Handler] = {
            "/help": self.help,
            "/quit": self.quit,
            "/retry": self.retry,
            "/undo": self.undo,
            "/diff": self.diff,
            "/compact": self.compact,
            "/clear": self.clear,
            "/model": self.model,
            "/thinking": self.thinking,
            "/revoke": self.revoke,
            "/init": self.init,
            "/cost": self.cost,
            "/mcp": self.mcp,
            "/save": self.save,
            "/resume": self.resume,
            "/sessions": self.sessions,
        }

    @property
    def _out(self) -> Renderer:
        return self.conversation.renderer

    @staticmethod
    def names() -> list[str]:
        """Every command, for completion."""
        return [name for name, _, _ in COMMANDS]

    async def dispatch(self, line: str) -> bool:
        """Run the command on ``line``; returns True when the REPL should end."""
        name, _, rest = line.strip().partition(" ")
        name = name.lower()
        handler = self._handlers.get(ALIASES.get(name, name))
        if handler is None:
            self._out.error(f"unknown command {name} (try /help)")
            return False
        try:
            return await handler(rest.strip())
        except SessionError as error:
            self._out.error(str(error))
        except OSError as error:
            self._out.error(f"{error.strerror or error}: {error.filename or ''}".rstrip(": "))
        return False

    async def help(self, _: str) -> bool:
        for line in commands_help().splitlines():
            self._out.line(line)
        self._out.line(
            "  Ctrl+C stops the current run; at the prompt, Ctrl+C twice or Ctrl+D quits. "
            "Tab completes commands and paths."
        )
        return False

    async def quit(self, _: str) -> bool:
        return True

    async def retry(self, _: str) -> bool:
        prompt = self.conversation.last_prompt
        if prompt is None:
            self._out.notice("nothing to retry yet")
        else:
            self.conversation.queued_prompt = prompt
        return False

    async def undo(self, _: str) -> bool:
        conversation = self.conversation
        undone = conversation.changes.undo_last()
        if undone is None:
            self._out.notice("nothing to undo in this conversation")
            return False
        turn, report = undone
        for path in report.restored:
            self._out.line(f"  restored {path}", "green")
        for path in report.removed:
            self._out.line(f"  removed {path} (the agent created it)", "green")
        for problem in report.skipped:
            self._out.line(f"  left {problem}", "yellow")
        messages = conversation.agent.messages
        index = next((i for i, m in enumerate(messages) if m is turn.prompt), None)
        if index is None:
            self._out.notice("(the conversation was compacted since; it keeps that turn)")
        else:
            conversation.agent.replace_messages(messages[:index])
            self._out.notice("the last turn is out of the conversation")
        if not turn.changes:
            self._out.notice("(that turn changed no files)")
        return False

    async def diff(self, _: str) -> bool:
        lines = self.conversation.changes.session_diff()
        if not lines:
            self._out.notice("the agent has changed no files in this conversation")
        else:
            self._out.diff(lines)
        return False

    async def compact(self, _: str) -> bool:
        agent = self.conversation.agent
        before = agent.messages
        if len(before) < 2:
            self._out.notice("nothing to compact yet")
            return False
        result = compact_after_overflow(before, ContextConfig.for_model(agent.model))
        if result.level == 0 or result.tokens_after >= result.tokens_before:
            self._out.notice("the conversation is already as short as it can be made")
            return False
        agent.replace_messages(result.messages)
        self._out.notice(
            f"compacted: about {result.tokens_before:,} → {result.tokens_after:,} tokens "
            f"({len(before)} → {len(result.messages)} messages)"
        )
        return False

    async def clear(self, _: str) -> bool:
        self.conversation.new_conversation()
        self._out.notice("(new conversation)")
        return False

    async def model(self, model_id: str) -> bool:
        agent = self.conversation.agent
        current = agent.model
        if not model_id:
            self._out.line(f"model {current.id} ({current.provider})")
            others = [i for i in self.conversation.models.ids(current) if i != current.id]
            if others:
                self._out.notice(f"  also: {', '.join(others[:12])}")
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

    async def revoke(self, tool: str) -> bool:
        grants = self.conversation.confirm.always
        if not grants:
            self._out.notice("no standing 'always' answers")
        elif not tool:
            self._out.notice(f"revoked: {', '.join(sorted(grants))} (they ask again)")
            grants.clear()
        elif tool in grants:
            grants.discard(tool)
            self._out.notice(f"revoked: {tool} (it asks again)")
        else:
            self._out.error(
                f"{tool} has no standing answer (standing: {', '.join(sorted(grants))})"
            )
        return False

    async def init(self, _: str) -> bool:
        try:
            path = write_starter(self.conversation.options.cwd)
        except FileExistsError:
            self._out.error("AGENTS.md already exists here; edit it instead")
            return False
        self.conversation.refresh_system_prompt()
        self._out.notice(f"wrote {path}: fill it in; it is read at the start of every session")
        return False

    async def cost(self, _: str) -> bool:
        agent = self.conversation.agent
        stats = agent.stats
        usage = stats.total_usage()
        prompt = usage.input + usage.cache_read + usage.cache_write
        self._out.line(f"tokens in {prompt:,} · out {usage.output:,} (this conversation)")
        for line in cost_lines(stats):
            self._out.line(line)
        if stats.total_cost_usd() is None and not usage.is_zero():
            reason = why_unpriced(agent.model, self.conversation.options.pricing)
            self._out.notice(f"(cost unknown: {reason})")
        problem = env_override_problem()
        if problem is not None:
            self._out.error(problem)
        return False

    async def mcp(self, _: str) -> bool:
        servers = self.conversation.servers
        if not servers.servers:
            self._out.notice(
                "no MCP servers: add one with --mcp 'CMD ARGS', --mcp-http URL, or an "
                "[mcp_servers.NAME] table in the user config"
            )
            return False
        for line in await servers.report():
            self._out.line(line)
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

    async def sessions(self, arg: str) -> bool:
        store = self.conversation.store
        verb, _, rest = arg.partition(" ")
        if verb == "delete":
            if not rest.strip():
                self._out.error("/sessions delete takes a session id (see /sessions)")
                return False
            info = store.find(rest.strip())
            if info.id == self.conversation.session.id:
                self._out.error("that is the current session; /clear first")
                return False
            store.delete(info)
            self._out.notice(f"deleted session {info.id}")
            return False
        if verb == "prune":
            try:
                days = int(rest.strip() or "30")
            except ValueError:
                days = 0
            if days < 1:  # the store reads 0 as "no age limit": never what was asked here
                self._out.error("/sessions prune takes a number of days, 1 or more")
                return False
            gone = store.prune(max_age_days=days, keep={self.conversation.session.id})
            self._out.notice(f"deleted {len(gone)} session(s) older than {days} days")
            return False
        if verb:
            self._out.error("/sessions takes nothing, 'delete ID' or 'prune DAYS'")
            return False
        found = store.list()
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
