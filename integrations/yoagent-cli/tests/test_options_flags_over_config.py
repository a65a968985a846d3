"""``make_options``: each option from its flag, else from the config files' settings, else
its default; and each usage error word for word (exit 2)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from yoagent.cli.app import Options
from yoagent.cli.arguments import build_parser, make_options
from yoagent.cli.prices import PricingMode
from yoagent.cli.settings import LoadedSettings, Settings, SettingsError
from yoagent.core import ThinkingLevel
from yoagent.tools import SandboxPolicy

MODEL_FLAGS = ("--provider", "openai", "--model", "gpt-x", "--base-url", "http://127.0.0.1:9/v1")
"""The flags choosing the model, each over its setting."""


def options(
    cwd: Path, *argv: str, settings: Settings | None = None, user_file: Path | None = None
) -> Options:
    parser = build_parser()
    loaded = LoadedSettings(settings=settings or Settings(), user_file=user_file)
    return make_options(parser.parse_args(list(argv)), parser, loaded, cwd)


def refused(capsys: pytest.CaptureFixture[str], cwd: Path, *argv: str) -> str:
    """The error line of a usage error (which exits 2)."""
    with pytest.raises(SystemExit) as exited:
        options(cwd, *argv)
    assert exited.value.code == 2
    return capsys.readouterr().err.splitlines()[-1]


def test_without_flags_or_settings_each_option_is_its_default(tmp_path: Path) -> None:
    got = options(tmp_path)
    assert got == Options(cwd=tmp_path, skills=got.skills)
    assert got.tool_gate is None
    assert got.thinking is ThinkingLevel.OFF
    assert got.show_thinking is True
    assert got.pricing is PricingMode.BUNDLED


def test_each_flag_reaches_its_option(tmp_path: Path) -> None:
    system = tmp_path / "system.md"
    system.write_text("You are terse.")
    (tmp_path / "more").mkdir()
    got = options(
        tmp_path,
        "-p",
        "fix it",
        "--json",
        *MODEL_FLAGS,
        "--allow-path",
        str(tmp_path / "more"),
        "--yes",
        "--system",
        str(system),
        "--max-turns",
        "7",
        "--thinking",
        "high",
        "--resume",
        "abc",
        "--plain",
        "--pricing",
        "live",
        "--record",
        "repo",
        "--sandbox",
        "read-only",
        "--sandbox-network",
        "--mcp",
        "python server.py",
        "--mcp-http",
        "http://127.0.0.1:9/mcp",
    )
    assert (got.prompt, got.json, got.provider, got.model) == ("fix it", True, "openai", "gpt-x")
    assert got.base_url == "http://127.0.0.1:9/v1"
    assert got.allow_paths == [(tmp_path / "more").resolve()]
    assert (got.yes, got.system, got.max_turns) == (True, system, 7)
    assert (got.thinking, got.resume, got.plain) == (ThinkingLevel.HIGH, "abc", True)
    assert got.pricing is PricingMode.LIVE
    assert got.record == Path("repo")
    assert (got.sandbox, got.sandbox_network) == (SandboxPolicy.READ_ONLY, True)
    assert [(spec.source, spec.argv, spec.url) for spec in got.mcp_servers] == [
        ("--mcp", ("python", "server.py"), None),
        ("--mcp-http", (), "http://127.0.0.1:9/mcp"),
    ]


def test_the_settings_fill_what_no_flag_gives(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    settings = Settings(
        provider="anthropic",
        model="claude-x",
        base_url="http://127.0.0.1:9/v1",
        allow_paths=[tmp_path / "shared"],
        approvals="never-ask",
        max_turns=9,
        thinking=ThinkingLevel.LOW,
        show_thinking=False,
        project_instructions=False,
        pricing=PricingMode.OFF,
        prices_url="https://prices.example/p.json",
        record=Path("recorded"),
        sandbox=SandboxPolicy.FULL_ACCESS,
        sandbox_network=True,
    )
    got = options(tmp_path, settings=settings)
    assert (got.provider, got.model, got.base_url) == (
        "anthropic",
        "claude-x",
        "http://127.0.0.1:9/v1",
    )
    assert got.allow_paths == [(tmp_path / "shared").resolve()]
    assert (got.yes, got.max_turns, got.thinking) == (True, 9, ThinkingLevel.LOW)
    assert (got.show_thinking, got.project_instructions) == (False, False)
    assert (got.pricing, got.prices_url) == (PricingMode.OFF, "https://prices.example/p.json")
    assert (got.record, got.sandbox, got.sandbox_network) == (
        Path("recorded"),
        SandboxPolicy.FULL_ACCESS,
        True,
    )


def test_a_flag_wins_over_the_settings(tmp_path: Path) -> None:
    (tmp_path / "flag").mkdir()
    (tmp_path / "file").mkdir()
    settings = Settings(
        provider="anthropic",
        model="claude-x",
        base_url="http://127.0.0.1:8/v1",
        allow_paths=[tmp_path / "file"],
        max_turns=9,
        thinking=ThinkingLevel.LOW,
        pricing=PricingMode.OFF,
        record=Path("file-repo"),
        sandbox=SandboxPolicy.FULL_ACCESS,
        tool_gate="jev",
        approvals="ask",
    )
    got = options(
        tmp_path,
        *MODEL_FLAGS,
        "--allow-path",
        str(tmp_path / "flag"),
        "--max-turns",
        "3",
        "--thinking",
        "medium",
        "--pricing",
        "live",
        "--record",
        "flag-repo",
        "--sandbox",
        "read-only",
        "--tool-gate",
        "off",
        settings=settings,
    )
    assert (got.provider, got.model, got.base_url) == ("openai", "gpt-x", "http://127.0.0.1:9/v1")
    assert got.allow_paths == [(tmp_path / "flag").resolve()]
    assert (got.max_turns, got.thinking, got.pricing) == (3, ThinkingLevel.MEDIUM, PricingMode.LIVE)
    assert (got.record, got.sandbox, got.tool_gate) == (
        Path("flag-repo"),
        SandboxPolicy.READ_ONLY,
        None,
    )
    assert got.yes is False


def test_the_model_and_pricing_flags_alone_need_no_settings(tmp_path: Path) -> None:
    got = options(tmp_path, "--model", "m-1", "--pricing", "off")
    assert (got.model, got.pricing) == ("m-1", PricingMode.OFF)


def test_hide_thinking_hides_it_whatever_the_settings_say(tmp_path: Path) -> None:
    shown = Settings(show_thinking=True)
    assert options(tmp_path, settings=shown).show_thinking is True
    assert options(tmp_path, "--hide-thinking", settings=shown).show_thinking is False
    assert options(tmp_path, "--hide-thinking").show_thinking is False


def test_a_prompt_of_a_dash_is_read_from_stdin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("the task\nin two lines\n"))
    assert options(tmp_path, "-p", "-").prompt == "the task\nin two lines\n"


def test_the_usage_errors_of_the_prompt_word_for_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert refused(capsys, tmp_path, "--json") == "yoagent: error: --json needs -p TASK"
    assert refused(capsys, tmp_path, "-p", " \n") == "yoagent: error: -p needs a task"
    monkeypatch.setattr("sys.stdin", io.StringIO("\n"))
    assert refused(capsys, tmp_path, "-p", "-") == "yoagent: error: -p needs a task"


def test_the_usage_errors_of_paths_urls_servers_and_gates_word_for_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "missing.md"
    assert refused(capsys, tmp_path, "--system", str(missing)) == (
        f"yoagent: error: --system {missing}: no such file"
    )
    assert refused(capsys, tmp_path, "--base-url", "ftp://x") == (
        "yoagent: error: --base-url: 'ftp://x': only http:// and https:// servers are supported"
    )
    assert refused(capsys, tmp_path, "--allow-path", str(missing)) == (
        f"yoagent: error: --allow-path {missing}: not a folder"
    )
    assert refused(capsys, tmp_path, "--mcp", " ") == (
        "yoagent: error: --mcp needs a command, e.g. --mcp 'python server.py'"
    )
    monkeypatch.delenv("CLOUDFLARE_ACCOUNT_ID", raising=False)
    assert refused(capsys, tmp_path, "--tool-gate", "clef") == (
        "yoagent: error: --tool-gate clef: needs CLOUDFLARE_ACCOUNT_ID (the Workers AI account id)"
    )


def test_a_settings_folder_that_is_missing_is_refused_as_the_flag_would_be(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "gone"
    with pytest.raises(SystemExit):
        options(tmp_path, settings=Settings(allow_paths=[missing]))
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"yoagent: error: --allow-path {missing}: not a folder"
    )


def test_a_tool_gate_is_built_from_the_flag_or_else_the_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    from_flag = options(tmp_path, "--tool-gate", "gpt-6-luna", settings=Settings(tool_gate="jev"))
    assert from_flag.tool_gate is not None
    assert from_flag.tool_gate.model.model == "gpt-6-luna"
    from_file = options(tmp_path, settings=Settings(tool_gate="jev"))
    assert from_file.tool_gate is not None
    assert from_file.tool_gate.model.model == "jev-latest"
    assert options(tmp_path, settings=Settings(tool_gate="off")).tool_gate is None
    url = options(tmp_path, "--tool-gate", "http://127.0.0.1:8000")
    assert url.tool_gate is not None
    assert url.tool_gate.model.backend.endpoint_url() == "http://127.0.0.1:8000/v1/systemone"
    assert capsys.readouterr().err == ""


def test_a_preset_without_its_key_is_a_warning_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    got = options(tmp_path, "--tool-gate", "jev")
    assert got.tool_gate is not None
    assert capsys.readouterr().err == (
        "yoagent: warning: --tool-gate jev: TYPESAFE_API_KEY is not set; every command, "
        "write and edit will be denied until it is\n"
    )


def test_skills_come_from_the_flag_or_else_the_settings_and_a_missing_folder_is_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    skill = tmp_path / "mine" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up.\n---\nTidy.\n")
    from_flag = options(
        tmp_path, "--skills", str(tmp_path / "mine"), settings=Settings(skills=[tmp_path / "x"])
    )
    assert [found.name for found in from_flag.skills] == ["tidy"]
    assert capsys.readouterr().err == ""
    from_file = options(tmp_path, settings=Settings(skills=[tmp_path / "mine"]))
    assert [found.name for found in from_file.skills] == ["tidy"]
    options(tmp_path, "--skills", str(tmp_path / "gone"))
    assert capsys.readouterr().err == (
        f"yoagent: warning: skills: {tmp_path / 'gone'}: skills directory does not exist "
        "(skipped)\n"
    )


def test_the_config_files_servers_come_before_the_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings.model_validate(
        {"mcp_servers": {"notes": {"command": "notes-server", "args": ["--fast"]}}}
    )
    got = options(tmp_path, "--mcp", "other", settings=settings)
    assert [(spec.name, spec.source, spec.argv) for spec in got.mcp_servers] == [
        ("notes", "config", ("notes-server", "--fast")),
        (None, "--mcp", ("other",)),
    ]
    monkeypatch.delenv("NOTES_TOKEN", raising=False)
    unset = Settings.model_validate(
        {"mcp_servers": {"notes": {"command": "notes-server", "args": ["${NOTES_TOKEN}"]}}}
    )
    user_file = tmp_path / "config.toml"
    with pytest.raises(SettingsError) as error:
        options(tmp_path, settings=unset, user_file=user_file)
    assert str(error.value).startswith(f"{user_file}: mcp_servers.notes.args[0]")
