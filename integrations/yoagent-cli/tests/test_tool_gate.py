"""``--tool-gate`` and the ``tool_gate`` config key: the real ``yoagent`` process with a
scripted decision endpoint on loopback judging its commands, writes and edits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_testing import RunCli
from decision_server import DecisionServer
from sse_server import Call, Reply, ScriptedServer, call, text

from yoagent.cli.settings import SettingsError, load_settings
from yoagent.cli.tool_gate import (
    GATED_TOOLS,
    PRESETS,
    build_tool_gate,
    missing_key_warning,
    parse_tool_gate,
)

DESTRUCTIVE_UNASKED = {"destructive": 0.97, "requested": 0.02}
HARMLESS = {"destructive": 0.03, "requested": 0.2}
DECISION_VARIABLES = (
    "TYPESAFE_API_KEY",
    "TYPESAFE_BASE_URL",
    "OPENCODE_API_KEY",
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_AUTH_TOKEN",
    "CLOUDFLARE_ACCOUNT_ID",
)


@pytest.fixture(autouse=True)
def _no_decision_keys(cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name in DECISION_VARIABLES:
        cli_env.pop(name, None)
        monkeypatch.delenv(name, raising=False)


def base(server: ScriptedServer) -> list[str]:
    return ["--base-url", server.url, "--model", "scripted-model", "--yes"]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body["messages"] if m.get("role") == "tool"]


def user_config(cli_env: dict[str, str], text: str) -> None:
    path = Path(cli_env["XDG_CONFIG_HOME"]) / "yoagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def project_config(workdir: Path, text: str) -> None:
    path = workdir / ".yoagent" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


# -- the real process ---------------------------------------------------------------------------


def test_the_gate_denies_a_destructive_command_and_the_denial_reaches_the_model(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    (workdir / "precious").mkdir()
    server.add(call("bash", command="rm -rf precious"), text("I did not delete it."))
    with DecisionServer(DESTRUCTIVE_UNASKED) as judge:
        result = run_cli(*base(server), "--tool-gate", judge.url, "-p", "what is in here?")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "I did not delete it."
    assert (workdir / "precious").is_dir()
    (denial,) = tool_results(server.requests[1])
    assert "tool-gate: this call looks destructive" in denial and "(p=0.97)" in denial
    (asked,) = judge.requests
    assert asked["state"]["user_request"] == "what is in here?"
    assert asked["state"]["tool_call"] == {
        "tool": "bash",
        "arguments": {"command": "rm -rf precious"},
    }
    assert set(asked["questions"]) == {"destructive", "requested"}


def test_a_gate_nobody_listens_on_says_the_connection_failed_not_timed_out(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("bash", command="touch made.txt"), text("It was denied."))
    result = run_cli(*base(server), "--tool-gate", "http://127.0.0.1:1", "-p", "make a file")
    assert result.returncode == 0, result.stderr
    assert not (workdir / "made.txt").exists()
    (denial,) = tool_results(server.requests[1])
    assert "transport error: ConnectError" in denial
    assert "timed out" not in denial and "timed out" not in result.stderr


def test_the_gate_runs_harmless_commands_and_never_judges_reads(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(
        Reply([Call("list_files", {"path": "."}), Call("bash", {"command": "touch made.txt"})]),
        text("Made it."),
    )
    with DecisionServer(HARMLESS) as judge:
        result = run_cli(*base(server), "--tool-gate", judge.url, "-p", "make a file")
    assert result.returncode == 0, result.stderr
    assert (workdir / "made.txt").exists()
    assert [r["state"]["tool_call"]["tool"] for r in judge.requests] == ["bash"]


def test_the_json_summary_counts_the_gates_requests(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("bash", command="touch made.txt"), text("Made it."))
    with DecisionServer(HARMLESS) as judge:
        result = run_cli(*base(server), "--tool-gate", judge.url, "--json", "-p", "make a file")
    assert result.returncode == 0, result.stderr
    assert len(judge.requests) == 1 and (workdir / "made.txt").exists()
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    # Two replies of the scripted model (100 in, 20 out each) and one judgment (120 in, 2 out).
    assert summary["usage"]["input"] == 2 * 100 + 120
    assert summary["usage"]["output"] == 2 * 20 + 2


def test_a_preset_reads_its_key_and_base_url_from_the_environment_at_the_call(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("write_file", path="notes.txt", content="hi\n"), text("Wrote it."))
    with DecisionServer(HARMLESS) as judge:
        env = {"TYPESAFE_BASE_URL": judge.url, "TYPESAFE_API_KEY": "ts-key-123"}
        result = run_cli(*base(server), "--tool-gate", "jev", "-p", "write notes", env=env)
    assert result.returncode == 0, result.stderr
    assert (workdir / "notes.txt").read_text() == "hi\n"
    (headers,) = judge.headers
    assert headers["authorization"] == "Bearer ts-key-123"
    assert "ts-key-123" not in result.stdout + result.stderr


def test_a_preset_without_its_key_warns_at_start_and_denies_every_gated_call(
    run_cli: RunCli, server: ScriptedServer, workdir: Path
) -> None:
    server.add(call("bash", command="touch made.txt"), text("It was refused."))
    with DecisionServer(HARMLESS) as judge:
        env = {"TYPESAFE_BASE_URL": judge.url}
        result = run_cli(*base(server), "--tool-gate", "jev", "-p", "make a file", env=env)
    assert result.returncode == 0, result.stderr
    assert "--tool-gate jev: TYPESAFE_API_KEY is not set" in result.stderr
    assert judge.requests == [] and not (workdir / "made.txt").exists()
    (denial,) = tool_results(server.requests[1])
    assert "tool-gate:" in denial and "TYPESAFE_API_KEY" in denial and "fails closed" in denial


def test_a_user_config_gate_applies_and_a_project_config_cannot_turn_it_off(
    run_cli: RunCli, server: ScriptedServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    (workdir / "precious").mkdir()
    server.add(call("bash", command="rm -rf precious"), text("Refused."))
    with DecisionServer(DESTRUCTIVE_UNASKED) as judge:
        user_config(cli_env, f"tool_gate = {json.dumps(judge.url)}\n")
        project_config(workdir, 'tool_gate = "off"\n')
        result = run_cli(*base(server), "-p", "tidy up")
    assert result.returncode == 0, result.stderr
    assert "'tool_gate' ignored: a project config cannot turn the tool gate off" in result.stderr
    assert (workdir / "precious").is_dir() and len(judge.requests) == 1


def test_the_flag_off_turns_the_users_gate_off(
    run_cli: RunCli, server: ScriptedServer, workdir: Path, cli_env: dict[str, str]
) -> None:
    server.add(call("bash", command="touch made.txt"), text("Done."))
    with DecisionServer(DESTRUCTIVE_UNASKED) as judge:
        user_config(cli_env, f"tool_gate = {json.dumps(judge.url)}\n")
        result = run_cli(*base(server), "--tool-gate", "off", "-p", "make a file")
    assert result.returncode == 0, result.stderr
    assert (workdir / "made.txt").exists() and judge.requests == []


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("sometimes", "a tool gate is jev, "),
        ("ftp://127.0.0.1/x", "a tool gate is jev, "),
        ("clef", "--tool-gate clef: needs CLOUDFLARE_ACCOUNT_ID"),
    ],
)
def test_a_bad_tool_gate_is_a_usage_error(run_cli: RunCli, value: str, problem: str) -> None:
    result = run_cli("--base-url", "http://127.0.0.1:9/v1", "--tool-gate", value, "-p", "x")
    assert result.returncode == 2
    assert problem in result.stderr and "Traceback" not in result.stderr


# -- the parts ----------------------------------------------------------------------------------


def test_values_are_presets_urls_or_off_and_never_echoed_when_wrong() -> None:
    assert parse_tool_gate(" JEV ") == "jev"
    assert parse_tool_gate("Off") == "off"
    assert parse_tool_gate("https://judge.example/v1") == "https://judge.example/v1"
    with pytest.raises(ValueError, match="a tool gate is") as caught:
        parse_tool_gate("key=sk-secret-123")
    assert "sk-secret" not in str(caught.value)


def test_the_cli_gate_judges_commands_writes_and_edits_only() -> None:
    gate = build_tool_gate("http://127.0.0.1:8000")
    assert gate.tools == GATED_TOOLS == {"bash", "write_file", "edit_file"}
    assert gate.model.capabilities().local
    clef = build_tool_gate("clef-flash", {"CLOUDFLARE_ACCOUNT_ID": "acct"})
    assert clef.model.model == "clef-flash"
    assert set(PRESETS) == {"jev", "jev-opencode", "jev-opencode-free", "clef", "clef-flash",
                            "gpt-6-luna"}  # fmt: skip


def test_the_missing_key_warning_names_the_variables() -> None:
    warning = missing_key_warning("clef", {})
    assert warning is not None and "CLOUDFLARE_API_TOKEN or CLOUDFLARE_AUTH_TOKEN" in warning
    assert missing_key_warning("clef", {"CLOUDFLARE_AUTH_TOKEN": "t"}) is None
    assert missing_key_warning("jev", {"TYPESAFE_API_KEY": "  "}) is not None
    assert missing_key_warning("http://127.0.0.1:8000", {}) is None


def _files(tmp_path: Path, user: str | None, project: str | None) -> tuple[Path, Path]:
    user_file = tmp_path / "user" / "config.toml"
    if user is not None:
        user_file.parent.mkdir(parents=True)
        user_file.write_text(user)
    repo = tmp_path / "repo"
    repo.mkdir()
    if project is not None:
        project_config(repo, project)
    return user_file, repo


@pytest.mark.parametrize(
    ("user", "project", "expected", "warning"),
    [
        (None, 'tool_gate = "jev"\n', "jev", None),
        ('tool_gate = "http://127.0.0.1:8000"\n', 'tool_gate = "jev"\n', "http://127.0.0.1:8000",
         "the user config's tool_gate is kept"),
        (None, 'tool_gate = "https://judge.evil.example"\n', None, "cannot point the tool gate"),
        ('tool_gate = "jev"\n', 'tool_gate = "OFF"\n', "jev", "cannot turn the tool gate off"),
        ('tool_gate = "off"\n', None, "off", None),
    ],
)  # fmt: skip
def test_a_project_config_may_only_turn_a_gate_on_with_a_preset(
    tmp_path: Path, user: str | None, project: str | None, expected: str | None, warning: str | None
) -> None:
    user_file, repo = _files(tmp_path, user, project)
    loaded = load_settings(repo, user_file)
    assert loaded.settings.tool_gate == expected
    gate_warnings = [w for w in loaded.warnings if "tool_gate" in w]
    if warning is None:
        assert gate_warnings == []
    else:
        (found,) = gate_warnings
        assert warning in found


def test_a_bad_tool_gate_in_a_config_file_names_the_file_and_key(tmp_path: Path) -> None:
    user_file, repo = _files(tmp_path, 'tool_gate = "maybe"\n', None)
    with pytest.raises(SettingsError, match=r"config\.toml: tool_gate: a tool gate is jev"):
        load_settings(repo, user_file)
