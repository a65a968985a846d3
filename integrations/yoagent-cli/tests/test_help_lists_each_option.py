"""``yoagent --help`` as a user reads it: each option with its value's name and its
description, the usage line, the description and the epilog; and what each flag parses
its value into (the option table's types, actions and choices)."""

from __future__ import annotations

import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest

from yoagent.cli import arguments
from yoagent.cli.arguments import EPILOG, build_parser, package_version
from yoagent.cli.versions import version_text

OPTIONS = [
    ("-h, --help", "show this help message and exit"),
    ("-p TASK, --prompt TASK", "run one task and exit ('-' reads it from stdin)"),
    ("--json", "with -p: every event as a JSON line, then a summary line"),
    ("--provider NAME", "anthropic, openai, ollama, ..."),
    ("--model ID", "the model id (default: per provider)"),
    (
        "--base-url URL",
        "an OpenAI-compatible server, e.g. http://localhost:11434/v1 (no key needed)",
    ),
    ("--allow-path DIR", "let the file tools reach DIR too (repeatable)"),
    ("-y, --yes", "run writes and commands without asking"),
    (
        "--sandbox MODE",
        "where bash's commands may write: read-only, workspace-write (default: this folder "
        "and the --allow-path ones) or full-access (no sandbox)",
    ),
    ("--sandbox-network", "let sandboxed commands use the network (default: off)"),
    (
        "--tool-gate GATE",
        "a decision model judges each command, write and edit, denying what looks "
        "destructive and was not asked for: jev, jev-opencode, jev-opencode-free, clef, "
        "clef-flash, gpt-6-luna, an http(s) URL of a SystemOne server, or off",
    ),
    ("--skills DIR", "load skills (<DIR>/<name>/SKILL.md) (repeatable)"),
    ("--system FILE", "use FILE as the system prompt"),
    ("--max-turns N", "stop a run after N turns (default 50)"),
    ("--thinking LEVEL", "off, minimal, low, medium or high (default off)"),
    ("--resume [ID]", "continue the last session (or the one with this id)"),
    ("--mcp 'CMD ARGS'", "connect the stdio MCP server CMD ARGS (one quoted string; repeatable)"),
    ("--mcp-http URL", "connect the Streamable HTTP MCP server at URL (repeatable)"),
    (
        "--pricing MODE",
        "bundled (default: the prices yoagent ships), live (fetched, cached a day) or off",
    ),
    (
        "--record REPO",
        "record every run into the GASP agent repository REPO (created if new or empty)",
    ),
    ("--plain", "plain text output (no colours or Markdown)"),
    ("--hide-thinking", "do not show the model's thinking"),
    ("--version", "show program's version number and exit"),
]


def shown(invocation: str) -> str:
    """``invocation`` as this Python's argparse writes it: from 3.13 an option with a short
    and a long form names its value once (``-p, --prompt TASK``)."""
    short, _, long = invocation.partition(", ")
    if sys.version_info < (3, 13) or not long or " " not in short:
        return invocation
    return f"{short.split(' ')[0]}, {long}"


@pytest.fixture
def help_text(monkeypatch: pytest.MonkeyPatch) -> str:
    """``--help``'s text on a terminal wide enough that no description wraps."""
    monkeypatch.setenv("COLUMNS", "400")
    return build_parser().format_help()


def words(text: str) -> str:
    return " ".join(text.split())


def test_help_describes_each_option_with_the_name_of_its_value(help_text: str) -> None:
    options = help_text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0]
    listed = words(options)
    expected = " ".join(f"{shown(invocation)} {description}" for invocation, description in OPTIONS)
    assert listed == expected


def test_help_starts_with_the_usage_line_and_the_description(help_text: str) -> None:
    usage, description = help_text.split("\n\n")[:2]
    assert words(usage) == (
        "usage: yoagent [-h] [-p TASK] [--json] [--provider NAME] [--model ID] "
        "[--base-url URL] [--allow-path DIR] [-y] [--sandbox MODE] [--sandbox-network] "
        "[--tool-gate GATE] [--skills DIR] [--system FILE] [--max-turns N] "
        "[--thinking LEVEL] [--resume [ID]] [--mcp 'CMD ARGS'] [--mcp-http URL] "
        "[--pricing MODE] [--record REPO] [--plain] [--hide-thinking] [--version]"
    )
    assert description == (
        "A terminal coding agent. Without -p, opens an interactive session in the current folder."
    )


def test_help_ends_with_the_commands_config_files_keys_and_exit_codes(help_text: str) -> None:
    assert help_text.endswith(EPILOG + "\n")
    # The raw formatter keeps the epilog's lines as written.
    assert "\ncommands at the prompt (Tab completes them, and paths):\n  /help" in help_text


def test_version_prints_one_line_per_distribution_and_exits_0(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == version_text() + "\n"


def test_the_flags_without_a_value_default_to_false_and_the_lists_to_empty() -> None:
    args = build_parser().parse_args([])
    assert (args.json, args.yes, args.sandbox_network, args.plain, args.hide_thinking) == (
        False,
        False,
        False,
        False,
        False,
    )
    assert (args.mcp, args.mcp_http) == ([], [])
    assert (args.allow_path, args.skills, args.resume) == (None, None, None)


def test_each_flag_without_a_value_is_set_by_its_name() -> None:
    args = build_parser().parse_args(
        ["--json", "-y", "--sandbox-network", "--plain", "--hide-thinking"]
    )
    assert (args.json, args.yes, args.sandbox_network, args.plain, args.hide_thinking) == (
        True,
        True,
        True,
        True,
        True,
    )
    assert build_parser().parse_args(["--yes"]).yes is True


def test_the_path_flags_give_paths_and_the_repeatable_ones_keep_each() -> None:
    args = build_parser().parse_args(
        [
            "--allow-path",
            "a",
            "--allow-path",
            "b",
            "--skills",
            "s",
            "--system",
            "prompt.md",
            "--record",
            "repo",
            "--mcp",
            "python one.py",
            "--mcp",
            "two",
            "--mcp-http",
            "http://h/mcp",
        ]
    )
    assert args.allow_path == [Path("a"), Path("b")]
    assert all(isinstance(path, Path) for path in args.allow_path)
    assert args.skills == [Path("s")] and isinstance(args.skills[0], Path)
    assert args.system == Path("prompt.md") and isinstance(args.system, Path)
    assert args.record == Path("repo") and isinstance(args.record, Path)
    assert args.mcp == ["python one.py", "two"]
    assert args.mcp_http == ["http://h/mcp"]


def test_resume_alone_means_the_last_session_and_with_an_id_that_one() -> None:
    assert build_parser().parse_args(["--resume"]).resume == ""
    assert build_parser().parse_args(["--resume", "abc"]).resume == "abc"


def test_max_turns_is_a_whole_number_of_at_least_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert build_parser().parse_args(["--max-turns", "1"]).max_turns == 1
    assert build_parser().parse_args(["--max-turns", "12"]).max_turns == 12
    for value, message in [
        ("0", "argument --max-turns: must be at least 1"),
        ("-3", "argument --max-turns: must be at least 1"),
        ("two", "argument --max-turns: 'two' is not a whole number"),
    ]:
        with pytest.raises(SystemExit) as exited:
            build_parser().parse_args(["--max-turns", value])
        assert exited.value.code == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"yoagent: error: {message}"


def test_tool_gate_is_parsed_and_a_value_it_is_not_is_refused_with_the_choices(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert build_parser().parse_args(["--tool-gate", " JEV "]).tool_gate == "jev"
    assert build_parser().parse_args(["--tool-gate", "OFF"]).tool_gate == "off"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--tool-gate", "nope"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "yoagent: error: argument --tool-gate: a tool gate is jev, jev-opencode, "
        "jev-opencode-free, clef, clef-flash, gpt-6-luna, an http(s) URL of a SystemOne "
        "server, or off"
    )


@pytest.mark.parametrize(
    ("flag", "good", "choices"),
    [
        ("--sandbox", "read-only", "'read-only', 'workspace-write', 'full-access'"),
        ("--thinking", "high", "'off', 'minimal', 'low', 'medium', 'high'"),
        ("--pricing", "live", "'bundled', 'live', 'off'"),
    ],
)
def test_the_flags_with_choices_take_only_those(
    flag: str, good: str, choices: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = build_parser().parse_args([flag, good])
    assert getattr(args, flag[2:]) == good
    with pytest.raises(SystemExit):
        build_parser().parse_args([flag, "nope"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"yoagent: error: argument {flag}: invalid choice: 'nope' (choose from {choices})"
    )


def test_the_package_version_is_the_installed_one_else_0_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert package_version() == version("yoagent-cli")

    def missing(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr(arguments, "version", missing)
    assert package_version() == "0+unknown"
