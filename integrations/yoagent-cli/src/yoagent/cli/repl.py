"""The interactive session: read a prompt, stream the run, repeat.

Ctrl+C during a run aborts it (the conversation stays and the prompt comes back); at the
prompt, Ctrl+C twice in a row (or Ctrl+D, or ``/quit``) leaves. SIGTERM and SIGHUP (the
terminal closed) abort a run the same way — its tool calls are cancelled and the bash tool
ends their processes — then the session is saved and ``yoagent`` exits with 128 + the
signal's number. The session is saved after every run; what a failed or cancelled run
leaves behind is :mod:`.turns`'s rule.
"""

from __future__ import annotations

import time
from contextlib import aclosing

import anyio

from yoagent.core import RunFailedError, ToolCallRequest

from .commands import Commands
from .confirm import Answer, Reply, parse_answer
from .conversation import Conversation
from .interrupt import ExitRequest, exit_signals_call, quiet_terminal, sigint_calls
from .line_input import LineInput
from .preview import holds_hidden, preview
from .prices import PricingMode
from .safe_text import has_hidden
from .status import Status, context_used
from .turns import settle

PROMPT = "❯ "
QUIT_HINT = "(press Ctrl+C again to quit, or type /quit)"
QUESTION = "  allow? [y]es / [n]o / [a]lways: "
WHY_NOT = "  why not? (optional, the model reads it): "
HIDDEN_WARNING = (
    "  ⚠ this holds control or invisible characters, each shown as an escape such as \\x1b"
)


class Repl:
    """One interactive session on a :class:`Conversation`, reading from ``lines``."""

    def __init__(self, conversation: Conversation, lines: LineInput) -> None:
        self.conversation = conversation
        self.lines = lines
        self.commands = Commands(conversation)
        self._exit = ExitRequest()
        self._reading: anyio.CancelScope | None = None

    async def ask(self, request: ToolCallRequest, description: str) -> Reply:
        """The confirmation question for one guarded tool call (see :mod:`.confirm`): what
        it will do — the whole command, or the path and a diff — then the question."""
        conversation = self.conversation
        renderer = conversation.renderer
        await renderer.wait_tool_shown(request.tool_call_id)
        renderer.finish_block()
        renderer.exact("\n".join(f"  {line}" for line in description.split("\n")), "yellow")
        sandbox = conversation.changes.sandbox  # the file tools' own
        shown = await preview(request.tool_name, request.arguments, sandbox)
        if shown:
            renderer.diff(shown)
        if has_hidden(description) or holds_hidden(shown):
            renderer.line(HIDDEN_WARNING, "bold yellow")
        try:
            answer = parse_answer(await self.lines.ask(QUESTION))
        except KeyboardInterrupt:
            return Reply(Answer.ABORT)
        except EOFError:
            return Reply(Answer.NO)
        if answer is not Answer.NO:
            return Reply(answer)
        try:
            reason = await self.lines.ask(WHY_NOT)
        except (KeyboardInterrupt, EOFError):
            reason = ""
        return Reply(Answer.NO, reason.strip())

    def _on_sigint(self) -> None:
        agent = self.conversation.agent
        if agent.is_running:
            agent.abort()
        else:
            self.lines.interrupt()

    def _on_exit_signal(self, signum: int) -> None:
        agent = self.conversation.agent
        if agent.is_running:
            agent.abort()
        if self._reading is not None:
            self._reading.cancel()

    async def run(self) -> int:
        """Read and run prompts until the user leaves; returns the exit code (0, or 128 +
        the signal that ended it)."""
        with sigint_calls(self._on_sigint), exit_signals_call(self._on_exit_signal) as request:
            self._exit = request
            return await self._loop()

    def _leave(self) -> int:
        try:
            self.conversation.save()
        except OSError as error:
            self.conversation.renderer.error(f"could not save the session: {error}")
        return self._exit.exit_code if self._exit.signal is not None else 0

    async def _read(self) -> str | None:
        """The next line; ``None`` when an exit signal cancelled the read."""
        with anyio.CancelScope() as scope:
            self._reading = scope
            try:
                return await self.lines.read(PROMPT)
            finally:
                self._reading = None
        return None

    async def _loop(self) -> int:
        armed = False
        renderer = self.conversation.renderer
        while True:
            if self._exit.signal is not None:
                return self._leave()
            queued, self.conversation.queued_prompt = self.conversation.queued_prompt, None
            if queued is not None:
                await self.run_task(queued)
                continue
            try:
                text = await self._read()
            except KeyboardInterrupt:
                if armed:
                    return self._leave()
                armed = True
                renderer.notice(QUIT_HINT)
                continue
            except EOFError:
                return self._leave()
            if text is None:
                continue  # an exit signal: handled at the top
            armed = False
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                if await self.commands.dispatch(text):
                    return self._leave()
                continue
            await self.run_task(text)

    async def run_task(self, text: str) -> None:
        """Run one prompt, drawing its events; Ctrl+C aborts it."""
        conversation = self.conversation
        agent = conversation.agent
        renderer = conversation.renderer
        changes = conversation.changes
        conversation.last_prompt = text
        start = len(agent.messages)
        began = time.monotonic()
        changes.begin_turn()
        with quiet_terminal():  # SIGINT aborts the run (see _on_sigint)
            try:
                async with aclosing(agent.stream(text)) as events:
                    async for event in events:
                        renderer.handle(event)
                        changes.observe(event)
            except RunFailedError:
                pass  # the renderer has shown the failure from the events
            except Exception as error:  # the session survives a broken run
                renderer.error(f"{type(error).__name__}: {error}")
        renderer.finish_block()
        settled = settle(agent.messages, start)
        if settled.dropped:
            agent.replace_messages(settled.messages)
            renderer.notice("(nothing of this turn was kept; /retry sends the prompt again)")
        changes.end_turn(agent.messages, start)
        status = Status(
            stats=agent.last_run_stats,
            total=agent.stats,
            context_tokens=context_used(agent.messages),
            context_window=agent.model.context_window,
            elapsed=time.monotonic() - began,
            grants=sorted(conversation.confirm.always),
            show_unknown=conversation.options.pricing is not PricingMode.OFF,
        )
        renderer.notice(status.line())
        try:
            conversation.save()
        except OSError as error:
            renderer.error(f"could not save the session: {error}")
