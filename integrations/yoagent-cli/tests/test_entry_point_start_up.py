"""``main.run``'s start-up in this process: the output streams made to replace what they
cannot encode, ``sys.argv`` when no arguments are given, each warning of the config, the
model, the prices and a resumed session, each refusal's exit code and text, old sessions
pruned by age, a reader that stopped reading, and the session's model."""

from __future__ import annotations

import io
import os

import pytest
from in_process_cli import MAIN, InProcess, Terminal, aged
from sse_server import ScriptedServer, text

from yoagent.cli.session_store import SessionStore


def test_stdout_and_stderr_replace_what_they_cannot_encode(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    streams = {
        name: io.TextIOWrapper(io.BytesIO(), encoding="ascii") for name in ("stdout", "stderr")
    }
    for name, stream in streams.items():
        monkeypatch.setattr(f"sys.{name}", stream)
    server.add(text("café"))
    assert yoagent.run("-p", "x", served=server).code == 0
    assert [stream.errors for stream in streams.values()] == ["replace", "replace"]
    stdout = streams["stdout"]
    stdout.flush()
    assert stdout.buffer.getvalue() == b"caf?\n"  # type: ignore[attr-defined]


def test_the_arguments_default_to_sys_argv(
    yoagent: InProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["yoagent", "--resume", "nosuch", "-p", "x"])
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    capsys.readouterr()
    assert MAIN.run() == 2
    assert capsys.readouterr().err == "yoagent: no saved session 'nosuch' (see /sessions)\n"


def test_main_exits_with_run_s_code(
    yoagent: InProcess, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with pytest.raises(SystemExit) as exited:
        MAIN.main(["--resume", "nosuch", "-p", "x"])
    assert exited.value.code == 2


def test_each_config_warning_is_a_line_and_the_run_goes_on(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    config = yoagent.user_config("bogus = 1\nother = 2\n")
    server.add(text("ok"))
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out) == (0, "ok\n")
    assert result.err == (
        f"yoagent: warning: config: {config}: unknown key 'bogus' (ignored)\n"
        f"yoagent: warning: config: {config}: unknown key 'other' (ignored)\n"
    )


def test_a_config_file_that_cannot_be_read_is_a_usage_error(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    config = yoagent.user_config("model = [\n")
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out) == (2, "")
    assert result.err == (
        f"yoagent: config: {config}: not valid TOML (Invalid value (at end of document))\n"
    )
    assert server.requests == []


def test_a_config_value_that_cannot_be_used_is_a_usage_error(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    config = yoagent.user_config("max_turns = 0\n")
    result = yoagent.run("-p", "x", served=server)
    assert result.code == 2
    assert result.err == (
        f"yoagent: config: {config}: max_turns: Input should be greater than or equal to 1\n"
    )


def test_no_key_and_no_base_url_says_what_to_set(yoagent: InProcess) -> None:
    for mode in (("-p", "x"), ()):
        result = yoagent.run(*mode)
        assert (result.code, result.out) == (2, "")
        assert result.err.startswith(
            "yoagent: no API key found.\nSet ANTHROPIC_API_KEY or OPENAI_API_KEY"
        )
        assert result.err.endswith(
            "  yoagent --base-url http://localhost:11434/v1 --model llama3.2\n"
        )


def test_an_unknown_provider_is_a_usage_error(yoagent: InProcess) -> None:
    result = yoagent.run("--provider", "nosuch", "-p", "x")
    assert result.code == 2
    assert result.err.startswith("yoagent: unknown provider 'nosuch'; known providers: anthropic, ")


def test_a_remote_base_url_without_a_key_names_the_variable(yoagent: InProcess) -> None:
    for mode in (("-p", "x"), ()):
        result = yoagent.run("--provider", "anthropic", "--base-url", "https://gw.example", *mode)
        assert (result.code, result.out) == (2, "")
        assert result.err == (
            "yoagent: no API key for anthropic: set ANTHROPIC_API_KEY or YOAGENT_API_KEY or "
            "API_KEY (a --base-url that is not a local server needs one)\n"
        )


def test_a_server_that_lists_no_models_is_a_warning_and_the_fallback_model(
    yoagent: InProcess,
) -> None:
    with ScriptedServer([text("ok")], serves=("chat/completions",)) as server:
        result = yoagent.run("--base-url", server.url, "-p", "x")
    assert (result.code, result.out) == (0, "ok\n")
    [line] = result.err.splitlines()
    assert line.startswith(f"yoagent: warning: could not list the models at {server.url}/models")
    assert line.endswith("pass --model NAME to choose one")


def test_a_price_table_that_is_refused_is_a_warning(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("YOAGENT_PRICES", '{"schema": 1, "providers": []')
    server.add(text("ok"))
    result = yoagent.run("-p", "x", served=server)
    assert (result.code, result.out) == (0, "ok\n")
    [line] = result.err.splitlines()
    assert line.startswith("yoagent: warning: YOAGENT_PRICES (inline JSON) was ignored: ")


def test_a_cut_off_session_line_is_a_warning_on_resume(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("one"), text("two"))
    yoagent.run("-p", "first", served=server)
    [info] = SessionStore().list()
    with info.path.open("a") as file:
        file.write('{"type": "mess')
    result = yoagent.run("--resume", "-p", "again", served=server)
    assert (result.code, result.out) == (0, "two\n")
    [line] = result.err.splitlines()
    assert line.startswith(f"yoagent: warning: session {info.path}: ")
    assert line.endswith("; skipped it, the rest is resumed")


def test_the_session_records_the_folder_and_the_model(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("ok"))
    yoagent.run("-p", "what is here", served=server)
    [info] = SessionStore().list()
    assert (info.cwd, info.model, info.title) == (
        str(yoagent.work.resolve()),
        "scripted-model",
        "what is here",
    )


def test_sessions_older_than_the_limit_are_pruned_but_not_this_one(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("one"), text("two"))
    yoagent.run("-p", "old", served=server)
    [old] = SessionStore().list()
    aged(old.path, days=3)
    yoagent.user_config("[sessions]\nmax_age_days = 2\n")
    assert yoagent.run("-p", "new", served=server).code == 0
    assert [info.title for info in SessionStore().list()] == ["new"]


def test_sessions_within_the_limit_are_kept(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(text("one"), text("two"))
    yoagent.run("-p", "old", served=server)
    [old] = SessionStore().list()
    aged(old.path, days=1)
    yoagent.user_config("[sessions]\nmax_age_days = 2\n")
    assert yoagent.run("-p", "new", served=server).code == 0
    assert sorted(info.title for info in SessionStore().list()) == ["new", "old"]


def test_a_reader_that_stops_reading_ends_the_run_quietly_with_1(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    read, write = os.pipe()
    os.close(read)  # `yoagent -p ... | head` once head has exited
    with open(write, "w", encoding="utf-8") as stdout:
        monkeypatch.setattr("sys.stdout", stdout)
        server.add(text("an answer nobody reads"))
        result = yoagent.run("-p", "x", served=server)
        stdout.write("after\n")  # stdout is the null device now: no second broken pipe
        stdout.flush()
    assert (result.code, result.err) == (1, "")


def test_pricing_off_says_nothing_of_an_unknown_cost(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    server.add(text("ok"))
    assert yoagent.run("--plain", "--pricing", "off", "-p", "x", served=server).code == 0
    [status] = stderr.getvalue().splitlines()
    assert status.startswith("tokens in 100 (cache hit 0%) · out 20 · ")
    assert "cost" not in status


def test_a_failed_call_is_explained_on_a_terminal_stderr(
    yoagent: InProcess, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from sse_server import Reply

    stderr = Terminal()
    monkeypatch.setattr("sys.stderr", stderr)
    server.add(Reply(status=400, error="no such model"))
    assert yoagent.run("--plain", "-p", "x", served=server).code == 1
    where = server.url.removesuffix("/v1")
    assert f"{where} rejected the request for scripted-model" in stderr.getvalue()
