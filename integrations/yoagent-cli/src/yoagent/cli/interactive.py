"""The start of an interactive session: renderer, line input, middleware, the banner."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import platformdirs
from rich.console import Console

from yoagent.core import AgentMessage, Extension

from .app import Options, build_agent, confirmation, file_sandbox
from .arguments import package_version
from .changes import ChangeTracker
from .commands import Commands
from .completion import PromptCompleter
from .config import ModelChoice
from .conversation import Conversation
from .instructions import find_instructions
from .line_input import LineInput, StreamInput, TerminalInput
from .mcp_servers import McpServers
from .problems import explain_failure, origin
from .render import PlainRenderer, Renderer
from .repl import Repl
from .rich_render import RichRenderer
from .sandbox import summary as sandbox_summary
from .session_store import SavedSession, SessionStore
from .settings import LoadedSettings

YES_WARNING = "--yes: writes, edits and shell commands run without asking"


def fancy(stream: TextIO, options: Options) -> bool:
    """Whether ``stream`` gets colours and Markdown."""
    return (
        not options.plain
        and stream.isatty()
        and os.environ.get("TERM", "") not in ("dumb", "unknown")
    )


def _banner(
    renderer: Renderer,
    options: Options,
    choice: ModelChoice,
    loaded: LoadedSettings,
    servers: McpServers,
) -> None:
    config = choice.config
    where = f" at {origin(config.base_url)}" if options.base_url else ""
    renderer.notice(
        f"yoagent {package_version()} · {config.id} ({config.provider}{where}) · {options.cwd}"
    )
    if options.yes:
        renderer.line(YES_WARNING, "bold yellow")
    if loaded.files:
        renderer.notice(f"config: {', '.join(str(path) for path in loaded.files)}")
    if options.project_instructions:
        files = find_instructions(options.cwd)
        if files:
            renderer.notice(f"instructions: {', '.join(str(f.path) for f in files)}")
    if servers.servers:
        renderer.notice(f"mcp: {servers.summary()} · /mcp lists their tools")
    if options.record is not None:
        renderer.notice(f"recording: every run into {options.record}")
    renderer.notice(sandbox_summary(options.sandbox, options.sandbox_network))
    renderer.notice("/help for commands · Tab completes · Ctrl+C stops a run · Ctrl+C twice quits")


async def interactive(
    options: Options,
    choice: ModelChoice,
    store: SessionStore,
    session: SavedSession,
    history: list[AgentMessage],
    loaded: LoadedSettings,
    servers: McpServers,
    extensions: Sequence[Extension] = (),
) -> int:
    """Run the interactive session on ``servers``' tools too; returns the exit code."""
    renderer: Renderer
    if fancy(sys.stdout, options):
        renderer = RichRenderer(Console(highlight=False), show_thinking=options.show_thinking)
    else:
        renderer = PlainRenderer(sys.stdout, show_thinking=options.show_thinking)
    confirm = confirmation(options, trusted=servers.trusted)
    tracker = ChangeTracker(options.cwd, file_sandbox(options))
    agent = build_agent(options, choice.config, [confirm, tracker], servers.sources, extensions)
    renderer.explain = lambda message: explain_failure(message.error_message, agent.model)
    async with agent:
        conversation = Conversation(
            agent=agent,
            store=store,
            session=session,
            options=options,
            renderer=renderer,
            confirm=confirm,
            tracker=tracker,
            servers=servers,
        )
        lines: LineInput
        if sys.stdin.isatty() and sys.stdout.isatty():
            completer = PromptCompleter(
                Commands.names(),
                options.cwd,
                {
                    "/model": lambda: conversation.models.ids(agent.model),
                    "/thinking": lambda: [
                        "show",
                        "hide",
                        "off",
                        "minimal",
                        "low",
                        "medium",
                        "high",
                    ],
                    "/resume": lambda: [info.id for info in store.list()],
                    "/revoke": lambda: sorted(confirm.always),
                    "/sessions": lambda: ["delete", "prune"],
                },
            )
            data = Path(platformdirs.user_data_dir("yoagent", appauthor=False))
            lines = TerminalInput(data / "history", completer)
        else:
            lines = StreamInput()
        repl = Repl(conversation, lines)
        confirm.ask = repl.ask
        confirm.on_abort = agent.abort
        _banner(renderer, options, choice, loaded, servers)
        if history:
            agent.replace_messages(history)
            renderer.notice(f"resumed session {session.id} ({len(history)} messages)")
            conversation.show_last_exchange()
        return await repl.run()
