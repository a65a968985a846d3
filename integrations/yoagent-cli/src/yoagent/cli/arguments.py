"""The command line: the ``yoagent`` flags, and the options they make with the config file.

A flag wins over the config file (a flag given for a list, ``--allow-path`` or
``--skills``, replaces the file's list; ``--mcp`` and ``--mcp-http`` add servers to the
file's); see :mod:`.settings` for the files.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from yoagent.core import SkillSet, ThinkingLevel, load_skills
from yoagent.tools import SandboxPolicy

from .app import Options
from .commands import commands_help
from .mcp_config import config_servers, flag_servers
from .prices import PricingMode
from .problems import base_url_problem
from .safe_text import write_inert
from .sandbox import DEFAULT as DEFAULT_SANDBOX
from .settings import LoadedSettings
from .tool_gate import CHOICES, OFF, build_tool_gate, missing_key_warning, parse_tool_gate
from .versions import version_text


def package_version() -> str:
    """The installed ``yoagent-cli`` version (``0+unknown`` in a source tree)."""
    try:
        return version("yoagent-cli")
    except PackageNotFoundError:  # running from a source tree
        return "0+unknown"


def _tool_gate(text: str) -> str:
    try:
        return parse_tool_gate(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


EPILOG = f"""\
commands at the prompt (Tab completes them, and paths):
{commands_help()}

config files: ~/.config/yoagent/config.toml (user), .yoagent/config.toml (project; wins
over the user file); flags win over both. MCP servers: [mcp_servers.NAME] tables (command,
args, env; or url, headers) in the user file. See docs/cli.md.
MCP tools ask before each call, like bash (--yes, or "always", skips the question).
keys: the provider comes from --provider, else from the first key set among
ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, DEEPSEEK_API_KEY, XAI_API_KEY,
GROQ_API_KEY, ... ; --base-url needs no key.
In -p mode without --yes, file writes, edits, shell commands and MCP tools are refused.
sandbox: commands write only in this folder (and --allow-path ones), no network; a
command the sandbox refused runs outside it only after you approve that one call.
exit codes: 0 success, 1 the run failed, 2 usage or configuration error (or an MCP server
that cannot start), 130 interrupted (143 SIGTERM, 129 SIGHUP)."""


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
        "--json",
        action="store_true",
        help="with -p: every event as a JSON line, then a summary line",
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
        type=Path,
        metavar="DIR",
        help="let the file tools reach DIR too (repeatable)",
    )
    parser.add_argument(
        "-y", "--yes", action="store_true", help="run writes and commands without asking"
    )
    parser.add_argument(
        "--sandbox",
        choices=[policy.value for policy in SandboxPolicy],
        metavar="MODE",
        help="where bash's commands may write: read-only, workspace-write (default: this "
        "folder and the --allow-path ones) or full-access (no sandbox)",
    )
    parser.add_argument(
        "--sandbox-network",
        action="store_true",
        help="let sandboxed commands use the network (default: off)",
    )
    parser.add_argument(
        "--tool-gate",
        type=_tool_gate,
        metavar="GATE",
        help=f"a decision model judges each command, write and edit, denying what looks "
        f"destructive and was not asked for: {CHOICES}",
    )
    parser.add_argument(
        "--skills",
        action="append",
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
        "--mcp",
        action="append",
        default=[],
        metavar="'CMD ARGS'",
        help="connect the stdio MCP server CMD ARGS (one quoted string; repeatable)",
    )
    parser.add_argument(
        "--mcp-http",
        action="append",
        default=[],
        metavar="URL",
        help="connect the Streamable HTTP MCP server at URL (repeatable)",
    )
    parser.add_argument(
        "--pricing",
        choices=[mode.value for mode in PricingMode],
        metavar="MODE",
        help="bundled (default: the prices yoagent ships), live (fetched, cached a day) or off",
    )
    parser.add_argument(
        "--record",
        type=Path,
        metavar="REPO",
        help="record every run into the GASP agent repository REPO (created if new or empty)",
    )
    parser.add_argument(
        "--plain", action="store_true", help="plain text output (no colours or Markdown)"
    )
    parser.add_argument(
        "--hide-thinking", action="store_true", help="do not show the model's thinking"
    )
    # One line per installed yoagent distribution (the parser's raw formatter keeps them).
    parser.add_argument("--version", action="version", version=version_text())
    return parser


def _skills(dirs: list[Path]) -> SkillSet:
    """The skills in ``dirs``; each one skipped (and each folder missing) is a warning."""
    skills = load_skills(dirs)
    for problem in skills.problems:
        write_inert(sys.stderr, f"yoagent: warning: skills: {problem} (skipped)")
    return skills


def make_options(
    args: argparse.Namespace, parser: argparse.ArgumentParser, loaded: LoadedSettings, cwd: Path
) -> Options:
    """The options of this run: the flags over the config files' settings. Usage errors
    exit 2; a config value that cannot be used raises
    :class:`~.settings.SettingsError`."""
    settings = loaded.settings
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
    base_url: str | None = args.base_url if args.base_url is not None else settings.base_url
    if args.base_url is not None and (problem := base_url_problem(args.base_url)):
        parser.error(f"--base-url: {problem}")
    allow_paths: list[Path] = (
        args.allow_path if args.allow_path is not None else settings.allow_paths
    )
    for path in allow_paths:
        if not path.is_dir():
            parser.error(f"--allow-path {path}: not a folder")
    thinking = ThinkingLevel(args.thinking) if args.thinking else settings.thinking
    show_thinking = settings.show_thinking if settings.show_thinking is not None else True
    try:
        from_flags = flag_servers(args.mcp, args.mcp_http)
    except ValueError as error:
        parser.error(str(error))
    pricing = args.pricing or settings.pricing or PricingMode.BUNDLED
    gate: str | None = args.tool_gate if args.tool_gate is not None else settings.tool_gate
    tool_gate = None
    if gate is not None and gate != OFF:
        try:
            tool_gate = build_tool_gate(gate)
        except ValueError as error:
            parser.error(f"--tool-gate {gate}: {error}")
        if warning := missing_key_warning(gate):
            write_inert(sys.stderr, f"yoagent: warning: {warning}")
    return Options(
        prompt=prompt,
        json=args.json,
        provider=args.provider or settings.provider,
        model=args.model or settings.model,
        base_url=base_url,
        allow_paths=[path.resolve() for path in allow_paths],
        yes=args.yes or settings.approvals == "never-ask",
        skills=_skills(args.skills if args.skills is not None else settings.skills),
        system=system,
        max_turns=args.max_turns if args.max_turns is not None else settings.max_turns,
        thinking=thinking if thinking is not None else ThinkingLevel.OFF,
        resume=args.resume,
        plain=args.plain,
        show_thinking=show_thinking and not args.hide_thinking,
        project_instructions=settings.project_instructions,
        pricing=PricingMode(pricing),
        prices_url=settings.prices_url,
        mcp_servers=[*config_servers(settings, loaded.user_file), *from_flags],
        tool_gate=tool_gate,
        sandbox=SandboxPolicy(args.sandbox or settings.sandbox or DEFAULT_SANDBOX),
        sandbox_network=args.sandbox_network or bool(settings.sandbox_network),
        record=args.record if args.record is not None else settings.record,
        cwd=cwd,
    )
