"""``yoagent web``: the same agent in a local web page (yoagent-ui's web app), and the run
viewer for GASP repositories and cassettes.

The page asks before the same calls the terminal asks about (:mod:`.confirm`: every tool
that is not known to only read, an MCP server's unless trusted; ``--yes`` asks nothing but
a command asking to run outside the OS sandbox, which waits for a person every time),
shows the same description, the same diff of a write or an edit (:mod:`.preview`, against
the file tools' sandbox), and a no is read by the model in the same words
(:func:`.confirm.declined`). A held call pauses the run until the person answers in the
page. The server listens on 127.0.0.1 (``--host`` to choose another) and every path needs
the random token in the URL it prints.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

from yoagent.core import Agent, Allow, Defer, Extension, ToolCallRequest, ToolDecision
from yoagent.ui import UiError
from yoagent.ui.web import DEFAULT_HOST, WebApprovals, serve, to_web

from .app import Options, build_agent, confirmation, file_sandbox
from .arguments import build_parser, make_options
from .config import ConfigError, ModelChoice, resolve_model
from .confirm import ConfirmMiddleware, declined, describe
from .mcp_servers import McpStartError, connect_servers
from .oneshot import EXIT_INTERRUPTED, EXIT_USAGE
from .preview import preview
from .prices import enable_prices
from .safe_text import write_inert
from .settings import SettingsError, load_settings

if TYPE_CHECKING:
    from yoagent.gasp import RecordingExtension

DEFAULT_PORT = 8765


class HoldForThePage:
    """Tool middleware: a call the terminal would ask about waits for the page instead
    (``Defer`` with the terminal's description of it): a command asking to leave the OS
    sandbox every time, ``--yes`` or not."""

    def __init__(self, confirm: ConfirmMiddleware) -> None:
        self.confirm = confirm

    def __call__(self, request: ToolCallRequest) -> ToolDecision:
        confirm = self.confirm
        if not confirm.waits(request):
            return Allow()
        return Defer(describe(request, sandboxed=confirm.sandboxed))


def web_parser() -> argparse.ArgumentParser:
    """``yoagent web``'s flags: the agent's own (as ``yoagent``'s), and where to serve."""
    parser = build_parser()
    parser.prog = "yoagent web"
    parser.description = (
        "The agent in a local web page: chat, approve its edits, and look at recorded runs."
    )
    parser.epilog = None
    parser.add_argument("--host", default=DEFAULT_HOST, help="listen here (default 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"listen on PORT (default {DEFAULT_PORT}; 0: any free one)",
    )
    parser.add_argument(
        "--runs",
        action="append",
        type=Path,
        default=[],
        metavar="PATH",
        help="open a GASP repository or a cassette in the run viewer (repeatable)",
    )
    return parser


def run_web(argv: list[str]) -> int:
    """``yoagent web ARGS``; returns the exit code."""
    parser = web_parser()
    args = parser.parse_args(argv)
    if args.prompt is not None or args.json or args.resume is not None:
        parser.error("-p, --json and --resume are for the terminal, not yoagent web")
    cwd = Path.cwd().resolve()
    try:
        loaded = load_settings(cwd)
        options = make_options(args, parser, loaded, cwd)
    except SettingsError as error:
        write_inert(sys.stderr, f"yoagent: config: {error}")
        return EXIT_USAGE
    choice: ModelChoice | None
    try:
        choice = resolve_model(
            provider=options.provider,
            model=options.model,
            base_url=options.base_url,
            env=os.environ,
        )
    except ConfigError as error:
        if not args.runs and args.record is None:  # a config file's `record` asks for no viewer
            sys.stderr.write(str(error))
            return EXIT_USAGE
        write_inert(sys.stderr, "yoagent: no model to chat with: serving the run viewer only")
        choice = None
    runs: list[Path] = args.runs
    if options.record is not None:
        runs = [*runs, options.record]
    try:
        return anyio.run(_serve, options, choice, runs, args.host, args.port, backend="asyncio")
    except UiError as error:
        write_inert(sys.stderr, f"yoagent: {error}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED


async def _serve(
    options: Options, choice: ModelChoice | None, runs: list[Path], host: str, port: int
) -> int:
    for warning in await enable_prices(options.pricing, prices_url=options.prices_url):
        write_inert(sys.stderr, f"yoagent: warning: {warning}")
    extensions: list[Extension] = []
    recording: RecordingExtension | None = None
    if options.record is not None and choice is not None:
        from .record import RecordError, open_recording

        try:
            recording = open_recording(options.record, "web")
        except RecordError as error:
            write_inert(sys.stderr, f"yoagent: {error}")
            return EXIT_USAGE
        extensions.append(recording)
    sandbox = file_sandbox(options)

    async def show(tool_name: str, arguments: Mapping[str, Any]) -> list[str]:
        return await preview(tool_name, arguments, sandbox)

    def ready(url: str) -> None:
        print(f"yoagent web: open {url}", flush=True)
        print("(the token in it is the key: share it with no one; Ctrl+C stops)", flush=True)

    try:
        async with connect_servers(options.mcp_servers, options.cwd, None) as servers:
            hold = HoldForThePage(confirmation(options, trusted=servers.trusted))
            factory: Callable[[], Agent] | None = None
            if choice is not None:
                config = choice.config

                def build() -> Agent:
                    return build_agent(options, config, [hold], servers.sources, extensions)

                factory = build
            app = to_web(
                factory,
                runs=runs,
                approvals=WebApprovals(preview=show, denial=declined),
                title=f"yoagent — {options.cwd.name}",
            )
            await serve(app, host=host, port=port, on_ready=ready)
    except McpStartError as error:
        write_inert(sys.stderr, f"yoagent: {error}")
        return EXIT_USAGE
    finally:
        if recording is not None:
            recording.close()
    return 0
