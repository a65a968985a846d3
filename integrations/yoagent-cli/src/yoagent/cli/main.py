"""``yoagent``: the command line (flags, exit codes) and the start of either mode.

Exit codes: 0 success, 1 the run failed, 2 a usage or configuration error, 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NoReturn, TextIO

import anyio
import platformdirs
from rich.console import Console

from yoagent.core import (
    AgentMessage,
    ProviderNotFoundError,
    SessionError,
    SkillSet,
    ThinkingLevel,
    ToolCallRequest,
    load_skills,
)

from .app import Options, build_agent, enable_pricing
from .commands import Conversation
from .config import ConfigError, ModelChoice, resolve_model
from .confirm import ConfirmMiddleware
from .line_input import LineInput, StreamInput, TerminalInput
from .oneshot import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_USAGE, run_once
from .render import PlainRenderer, Renderer, RichRenderer
from .repl import Repl
from .session_store import SavedSession, SessionStore


def _version() -> str:
    try:
        return version("yoagent-cli")
    except PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


EPILOG = """\
keys: the provider comes from --provider, else from the first key set among
ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, DEEPSEEK_API_KEY, XAI_API_KEY,
GROQ_API_KEY, ... ; --base-url needs no key.
In -p mode without --yes, file writes, edits and shell commands are refused.
exit codes: 0 success, 1 the run failed, 2 usage or configuration error, 130 interrupted."""


def build_parser() -> argparse.ArgumentParser:
    """The ``yoagent`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="yoagent",
        description="A terminal coding agent. Without -p, opens an interactive session "
        "in the current folder.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "-p", "--prompt", metavar="TASK", help="run one task and exit ('-' reads it from stdin)"
    )
    parser.add_argument(
        "--json", action="store_true", help="with -p: print every event as a JSON line"
    )
    parser.add_argument("--provider", metavar="NAME", help="anthropic, openai, ollama, ...")
    parser.add_argument("--model", metavar="ID", help="the model id (default: per provider)")
    parser.add_argument(
        "--base-url",
        metavar="URL",
        help="an OpenAI-compatible server, e.g. http://localhost:11434/v1 (no key needed)",
    )
    parser.add_argument(
        "--allow-path",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="let the file tools reach DIR too (repeatable)",
    )
    parser.add_argument(
        "-y", "--yes", action="store_true", help="run writes and commands without asking"
    )
    parser.add_argument(
        "--skills",
        action="append",
        default=[],
        type=Path,
        metavar="DIR",
        help="load skills (<DIR>/<name>/SKILL.md) (repeatable)",
    )
    parser.add_argument("--system", type=Path, metavar="FILE", help="use FILE as the system prompt")
    parser.add_argument(
        "--max-turns", type=_positive, metavar="N", help="stop a run after N turns (default 50)"
    )
    parser.add_argument(
        "--thinking",
        choices=[level.value for level in ThinkingLevel],
        default=ThinkingLevel.OFF.value,
        metavar="LEVEL",
        help="off, minimal, low, medium or high (default off)",
    )
    parser.add_argument(
        "--resume",
        nargs="?",
        const="",
        metavar="ID",
        help="continue the last session (or the one with this id)",
    )
    parser.add_argument(
        "--plain", action="store_true", help="plain text output (no colours or Markdown)"
    )
    parser.add_argument(
        "--hide-thinking", action="store_true", help="do not show the model's thinking"
    )
    parser.add_argument("--version", action="version", version=f"yoagent {_version()}")
    return parser


def _options(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Options:
    if args.json and args.prompt is None:
        parser.error("--json needs -p TASK")
    prompt: str | None = args.prompt
    if prompt == "-":
        prompt = sys.stdin.read()
    if prompt is not None and not prompt.strip():
        parser.error("-p needs a task")
    system: Path | None = args.system
    if system is not None and not system.is_file():
        parser.error(f"--system {system}: no such file")
    skills = _skills(args.skills)
    for path in args.allow_path:
        if not path.is_dir():
            parser.error(f"--allow-path {path}: not a folder")
    return Options(
        prompt=prompt,
        json=args.json,
        provider=args.provider,
        model=args.model,
        base_url=args.base_url,
        allow_paths=[path.resolve() for path in args.allow_path],
        yes=args.yes,
        skills=skills,
        system=system,
        max_turns=args.max_turns,
        thinking=ThinkingLevel(args.thinking),
        resume=args.resume,
        plain=args.plain,
        show_thinking=not args.hide_thinking,
        cwd=Path.cwd().resolve(),
    )


def _fancy(stream: TextIO, options: Options) -> bool:
    return (
        not options.plain
        and stream.isatty()
        and os.environ.get("TERM", "") not in ("dumb", "unknown")
    )


def _skills(dirs: list[Path]) -> SkillSet:
    """The skills in ``dirs``; each one skipped (and each folder missing) is a warning."""
    skills = load_skills(dirs)
    for problem in skills.problems:
        sys.stderr.write(f"yoagent: warning: --skills: {problem} (skipped)\n")
    return skills


def _session(store: SessionStore, options: Options, choice: ModelChoice) -> SavedSession:
    if options.resume is None:
        return store.create(cwd=options.cwd, model=choice.config.id)
    info = store.latest(options.cwd) if not options.resume else store.find(options.resume)
    if info is None:
        raise SessionError("no saved session to resume")
    return store.open(info)


def run(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if callable(reconfigure):
            reconfigure(errors="replace")
    parser = build_parser()
    args = parser.parse_args(argv)
    options = _options(args, parser)
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
    enable_pricing()
    store = SessionStore()
    try:
        session = _session(store, options, choice)
    except SessionError as error:
        sys.stderr.write(f"yoagent: {error}\n")
        return EXIT_USAGE
    for warning in session.warnings:
        sys.stderr.write(f"yoagent: warning: {warning}\n")
    history = session.messages
    try:
        if options.prompt is not None:
            return anyio.run(_one_shot, options, choice, session, history, backend="asyncio")
        return anyio.run(_interactive, options, choice, store, session, history, backend="asyncio")
    except ProviderNotFoundError as error:
        sys.stderr.write(f"yoagent: {error}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # Whoever read stdout stopped reading (`yoagent -p ... | head`): end quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED


async def _one_shot(
    options: Options, choice: ModelChoice, session: SavedSession, history: list[AgentMessage]
) -> int:
    assert options.prompt is not None
    progress: Renderer | None = None
    if not options.json and sys.stderr.isatty():
        if _fancy(sys.stderr, options):
            progress = RichRenderer(Console(file=sys.stderr, highlight=False), show_text=False)
        else:
            progress = PlainRenderer(sys.stderr, show_text=False)

    def denied(request: ToolCallRequest, reason: str) -> None:
        if not options.json:
            sys.stderr.write(f"yoagent: refused {request.tool_name}: {reason}\n")

    middleware = ConfirmMiddleware(None, assume_yes=options.yes, on_denied=denied)
    agent = build_agent(options, choice.config, [middleware])
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
            )
        except OSError as error:
            sys.stderr.write(f"yoagent: {error}\n")
            return EXIT_FAILED


async def _interactive(
    options: Options,
    choice: ModelChoice,
    store: SessionStore,
    session: SavedSession,
    history: list[AgentMessage],
) -> int:
    renderer: Renderer
    if _fancy(sys.stdout, options):
        renderer = RichRenderer(Console(highlight=False), show_thinking=options.show_thinking)
    else:
        renderer = PlainRenderer(sys.stdout, show_thinking=options.show_thinking)
    lines: LineInput
    if sys.stdin.isatty() and sys.stdout.isatty():
        data = Path(platformdirs.user_data_dir("yoagent", appauthor=False))
        lines = TerminalInput(data / "history")
    else:
        lines = StreamInput()
    middleware = ConfirmMiddleware(None, assume_yes=options.yes)
    agent = build_agent(options, choice.config, [middleware])
    async with agent:
        conversation = Conversation(
            agent=agent, store=store, session=session, options=options, renderer=renderer
        )
        repl = Repl(conversation, lines)
        middleware.ask = repl.ask
        middleware.on_abort = agent.abort
        config = choice.config
        where = f" at {config.base_url}" if options.base_url else ""
        renderer.notice(
            f"yoagent {_version()} · {config.id} ({config.provider}{where}) · {options.cwd}"
        )
        renderer.notice("/help for commands · Ctrl+C stops a run · Ctrl+C twice quits")
        if history:
            agent.replace_messages(history)
            renderer.notice(f"resumed session {session.id} ({len(history)} messages)")
        return await repl.run()


def main(argv: list[str] | None = None) -> NoReturn:
    """The console script."""
    sys.exit(run(argv))
