"""The interactive session: read a prompt, stream the run, repeat.

Ctrl+C during a run aborts it (the conversation stays and the prompt comes back); at the
prompt, Ctrl+C twice in a row (or Ctrl+D, or ``/quit``) leaves. The session is saved after
every run.
"""

from __future__ import annotations

from contextlib import aclosing

from yoagent.core import RunFailedError, ToolCallRequest

from .commands import Commands, Conversation
from .confirm import Answer, parse_answer
from .interrupt import quiet_terminal, sigint_calls
from .line_input import LineInput

PROMPT = "❯ "
QUIT_HINT = "(press Ctrl+C again to quit, or type /quit)"


class Repl:
    """One interactive session on a :class:`Conversation`, reading from ``lines``."""

    def __init__(self, conversation: Conversation, lines: LineInput) -> None:
        self.conversation = conversation
        self.lines = lines
        self.commands = Commands(conversation)

    async def ask(self, request: ToolCallRequest, description: str) -> Answer:
        """The confirmation question for one guarded tool call (see :mod:`.confirm`)."""
        renderer = self.conversation.renderer
        await renderer.wait_tool_shown(request.tool_call_id)
        renderer.finish_block()
        renderer.line(f"  {description}", "yellow")
        try:
            reply = await self.lines.ask("  allow? [y]es / [n]o / [a]lways: ")
        except KeyboardInterrupt:
            return Answer.ABORT
        except EOFError:
            return Answer.NO
        return parse_answer(reply)

    def _on_sigint(self) -> None:
        agent = self.conversation.agent
        if agent.is_running:
            agent.abort()
        else:
            self.lines.interrupt()

    async def run(self) -> int:
        """Read and run prompts until the user leaves; returns the exit code (0)."""
        with sigint_calls(self._on_sigint):
            return await self._loop()

    async def _loop(self) -> int:
        armed = False
        renderer = self.conversation.renderer
        while True:
            try:
                text = await self.lines.read(PROMPT)
            except KeyboardInterrupt:
                if armed:
                    return 0
                armed = True
                renderer.notice(QUIT_HINT)
                continue
            except EOFError:
                return 0
            armed = False
            text = text.strip()
            if not text:
                continue
            if text.startswith("/"):
                if await self.commands.dispatch(text):
                    self.conversation.save()
                    return 0
                continue
            await self.run_task(text)

    async def run_task(self, text: str) -> None:
        """Run one prompt, drawing its events; Ctrl+C aborts it."""
        conversation = self.conversation
        agent = conversation.agent
        renderer = conversation.renderer
        with quiet_terminal():  # SIGINT aborts the run (see _on_sigint)
            try:
                async with aclosing(agent.stream(text)) as events:
                    async for event in events:
                        renderer.handle(event)
            except RunFailedError:
                pass  # the renderer has shown the failure from the events
            except Exception as error:  # the session survives a broken run
                renderer.error(f"{type(error).__name__}: {error}")
        renderer.finish_block()
        try:
            conversation.save()
        except OSError as error:
            renderer.error(f"could not save the session: {error}")
