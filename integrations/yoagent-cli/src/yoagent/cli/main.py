"""``yoagent``: the start of either mode, and the exit codes.

Exit codes: 0 success, 1 the run failed, 2 a usage or configuration error, 130 interrupted
(128 + the signal's number for SIGTERM and SIGHUP).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import anyio
from rich.console import Console

from yoagent.core import AgentMessage, Extension, MissingApiKeyError, SessionError, ToolCallRequest
from yoagent.core.provider import ProviderNotFoundError
from yoagent.providers import models

from .app import Options, build_agent, confirmation
from .arguments import build_parser, make_options
from .config import ConfigError, ModelChoice, resolve_model
from .interactive import fancy, interactive
from .logs import report_library_warnings
from .mcp_servers import McpServers, McpStartError, connect_servers
from .oneshot import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, run_once
from .prices import PricingMode, enable_prices
from .problems import explain_failure
from .render import PlainRenderer, Renderer
from .rich_render import RichRenderer
from .safe_text import write_inert
from .session_store import SavedSession, SessionStore
from .settings import LoadedSettings, SettingsError, load_settings

if TYPE_CHECKING:
    from yoagent.gasp import RecordingExtension


def _session(store: SessionStore, options: Options, choice: ModelChoice) -> SavedSession:
    if options.resume is None:
        return store.create(cwd=options.cwd, model=choice.config.id)
    info = store.latest(options.cwd) if not options.resume else store.find(options.resume)
    if info is None:
        raise SessionError("no saved session to resume")
    return store.open(info)


def _prune(store: SessionStore, loaded: LoadedSettings, session: SavedSession) -> None:
    limits = loaded.settings.sessions
    try:
        store.prune(
            max_age_days=limits.max_age_days,
            max_total_mb=limits.max_total_mb,
            keep={session.id},
        )
    except OSError as error:  # never a reason not to start
        write_inert(sys.stderr, f"yoagent: warning: could not prune old sessions: {error}")


def run(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="replace")
    arguments = sys.argv[1:] if argv is None else argv
    if arguments[:1] == ["web"]:
        from .web import run_web  # the web app's packages only for `yoagent web`

        return run_web(arguments[1:])
    parser = build_parser()
    args = parser.parse_args(arguments)
    cwd = Path.cwd().resolve()
    try:
        loaded = load_settings(cwd)
    except SettingsError as error:
        write_inert(sys.stderr, f"yoagent: config: {error}")
        return EXIT_USAGE
    for warning in loaded.warnings:
        write_inert(sys.stderr, f"yoagent: warning: config: {warning}")
    try:
        options = make_options(args, parser, loaded, cwd)
    except SettingsError as error:
        write_inert(sys.stderr, f"yoagent: config: {error}")
        return EXIT_USAGE
    try:
        choice = resolve_model(
            provider=options.provider,
            model=options.model,
            base_url=options.base_url,
            env=os.environ,
        )
    except ConfigError as error:
        sys.stderr.write(str(error))
        return EXIT_USAGE
    for warning in choice.warnings:
        write_inert(sys.stderr, f"yoagent: warning: {warning}")
    report_library_warnings()
    store = SessionStore()
    try:
        session = _session(store, options, choice)
    except SessionError as error:
        write_inert(sys.stderr, f"yoagent: {error}")
        return EXIT_USAGE
    for warning in session.warnings:
        write_inert(sys.stderr, f"yoagent: warning: {warning}")
    recording: RecordingExtension | None = None
    if options.record is not None:
        from .record import RecordError, open_recording  # gitpython only when recording

        try:
            recording = open_recording(options.record, session.id)
        except RecordError as error:
            write_inert(sys.stderr, f"yoagent: {error}")
            return EXIT_USAGE
    _prune(store, loaded, session)
    extensions: list[Extension] = [] if recording is None else [recording]
    try:
        return anyio.run(
            _start, options, choice, store, session, loaded, extensions, backend="asyncio"
        )
    except ProviderNotFoundError as error:
        write_inert(sys.stderr, f"yoagent: {error}")
        return EXIT_USAGE
    except MissingApiKeyError:
        # A --base-url that is not on this machine or a private network, and no key.
        provider = choice.config.provider
        write_inert(
            sys.stderr,
            f"yoagent: no API key for {provider}: set {models.key_hint(provider)} "
            "(a --base-url that is not a local server needs one)",
        )
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Whoever read stdout stopped reading (`yoagent -p ... | head`): end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, sys.stdout.fileno())  # the interpreter's last flush goes nowhere
        finally:
            os.close(devnull)
        return EXIT_FAILED
    finally:
        if recording is not None:
            recording.close()  # the last run's commit, even after Ctrl+C


async def _start(
    options: Options,
    choice: ModelChoice,
    store: SessionStore,
    session: SavedSession,
    loaded: LoadedSettings,
    extensions: list[Extension],
) -> int:
    """Prices, then the MCP servers (connected in this task for the whole session), then
    either mode, on an agent with ``extensions``."""
    for warning in await enable_prices(options.pricing, prices_url=options.prices_url):
        write_inert(sys.stderr, f"yoagent: warning: {warning}")
    history = session.messages
    try:
        async with connect_servers(options.mcp_servers, options.cwd, loaded.user_file) as servers:
            if options.prompt is not None:
                return await _one_shot(options, choice, session, history, servers, extensions)
            return await interactive(
                options, choice, store, session, history, loaded, servers, extensions
            )
    except McpStartError as error:
        write_inert(sys.stderr, f"yoagent: {error}")
        return EXIT_USAGE


async def _one_shot(
    options: Options,
    choice: ModelChoice,
    session: SavedSession,
    history: list[AgentMessage],
    servers: McpServers,
    extensions: list[Extension],
) -> int:
    assert options.prompt is not None
    progress: Renderer | None = None
    if not options.json and sys.stderr.isatty():
        if fancy(sys.stderr, options):
            progress = RichRenderer(Console(file=sys.stderr, highlight=False), show_text=False)
        else:
            progress = PlainRenderer(sys.stderr, show_text=False)

    def denied(request: ToolCallRequest, reason: str) -> None:
        if not options.json:
            write_inert(sys.stderr, f"yoagent: refused {request.tool_name}: {reason}")

    middleware = confirmation(options, trusted=servers.trusted, on_denied=denied)
    agent = build_agent(options, choice.config, [middleware], servers.sources, extensions)
    if progress is not None:
        progress.explain = lambda message: explain_failure(message.error_message, agent.model)
    async with agent:
        if history:
            agent.replace_messages(history)
        try:
            return await run_once(
                agent,
                options.prompt,
                stdout=sys.stdout,
                stderr=sys.stderr,
                json_lines=options.json,
                progress=progress,
                session=session,
                show_unknown_cost=options.pricing is not PricingMode.OFF,
            )
        except BrokenPipeError:
            raise  # the reader of stdout went away: run() ends quietly
        except OSError as error:
            write_inert(sys.stderr, f"yoagent: {error}")
            return EXIT_FAILED


def main(argv: list[str] | None = None) -> NoReturn:
    """The console script."""
    sys.exit(run(argv))
