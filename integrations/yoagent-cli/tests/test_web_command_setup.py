"""``yoagent web``'s set-up in this process (``main.run(["web", ...])``), with yoagent-ui's
``to_web`` and ``serve`` replaced by fakes that keep what they were given: the flags it
refuses, where it listens, the agent each conversation gets, the run viewer alone when there
is no model, ``--record``, and each way it ends."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from in_process_cli import InProcess
from sse_server import ScriptedServer

from yoagent.cli.confirm import declined
from yoagent.cli.web import DEFAULT_PORT, HoldForThePage, web_parser
from yoagent.ui import UiError

WEB = sys.modules["yoagent.cli.web"]
URL = "http://127.0.0.1:8765/0123456789abcdef0123456789abcdef/"
READY = (
    f"yoagent web: open {URL}\n(the token in it is the key: share it with no one; Ctrl+C stops)\n"
)


@dataclass
class FakeUi:
    """Stands in for ``to_web`` and ``serve``; ``ending`` is raised from ``serve``."""

    ending: BaseException | None = None
    made: dict[str, Any] = field(default_factory=dict[str, Any])
    served: dict[str, Any] = field(default_factory=dict[str, Any])

    def to_web(self, factory: object, **kwargs: Any) -> str:
        self.made = {"factory": factory, **kwargs}
        return "the app"

    async def serve(self, app: object, **kwargs: Any) -> None:
        self.served = {"app": app, **kwargs}
        kwargs["on_ready"](URL)
        if self.ending is not None:
            raise self.ending


@pytest.fixture
def ui(monkeypatch: pytest.MonkeyPatch) -> FakeUi:
    fake = FakeUi()
    monkeypatch.setattr(WEB, "to_web", fake.to_web)
    monkeypatch.setattr(WEB, "serve", fake.serve)
    return fake


def test_it_serves_the_agent_on_loopback_and_says_where(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi
) -> None:
    result = yoagent.run("web", served=server)
    assert (result.code, result.out, result.err) == (0, READY, "")
    assert ui.served == {
        "app": "the app",
        "host": "127.0.0.1",
        "port": DEFAULT_PORT,
        "on_ready": ui.served["on_ready"],
    }
    assert DEFAULT_PORT == 8765
    assert ui.made["runs"] == []
    assert ui.made["title"] == f"yoagent — {yoagent.work.name}"
    assert ui.made["approvals"].denial is declined


def test_host_and_port_are_passed_on(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi
) -> None:
    result = yoagent.run("web", "--host", "0.0.0.0", "--port", "0", served=server)
    assert result.code == 0
    assert (ui.served["host"], ui.served["port"]) == ("0.0.0.0", 0)


def test_each_conversation_gets_a_fresh_agent_that_holds_for_the_page(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[tuple[Any, ...]] = []
    real = WEB.build_agent

    def build_agent(*args: Any) -> Any:
        built.append(args)
        return real(*args)

    monkeypatch.setattr(WEB, "build_agent", build_agent)
    assert yoagent.run("web", "--yes", served=server).code == 0
    assert built == []  # not before a conversation asks for one
    factory = ui.made["factory"]
    first, second = factory(), factory()
    assert first is not second
    assert first.model.id == "scripted-model"
    options, config, middleware, sources, extensions = built[0]
    assert options.yes is True
    assert config.id == "scripted-model"
    [hold] = middleware
    assert isinstance(hold, HoldForThePage)
    assert hold.confirm.assume_yes is True
    assert (list(sources), list(extensions)) == ([], [])


async def test_the_preview_is_the_terminal_s_diff_against_the_file_sandbox(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi
) -> None:
    # main.run starts its own event loop: run it in a worker thread from this async test.
    import anyio

    result = await anyio.to_thread.run_sync(lambda: yoagent.run("web", served=server))
    assert result.code == 0
    preview = ui.made["approvals"].preview
    shown = await preview("write_file", {"path": "new.txt", "content": "one\n"})
    assert shown == ["new file new.txt", "+one"]
    outside = await preview("write_file", {"path": "/etc/passwd", "content": "x"})
    assert outside == ["(no preview: /etc/passwd is outside the allowed paths)"]


def test_without_a_model_and_without_runs_it_is_a_usage_error(
    yoagent: InProcess, ui: FakeUi
) -> None:
    result = yoagent.run("web")
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("yoagent: no API key found.\n")
    assert ui.served == {}


def test_without_a_model_the_runs_are_served_alone(
    yoagent: InProcess, ui: FakeUi, tmp_path: Path
) -> None:
    runs = tmp_path / "runs"
    result = yoagent.run("web", "--runs", str(runs), "--runs", "second")
    assert (result.code, result.out) == (0, READY)
    assert result.err == "yoagent: no model to chat with: serving the run viewer only\n"
    assert ui.made["factory"] is None
    assert ui.made["runs"] == [runs, Path("second")]


def test_record_adds_the_repository_to_the_runs_and_records_the_chats(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    result = yoagent.run("web", "--record", str(repo), "--runs", "old", served=server)
    assert (result.code, result.err) == (0, "")
    assert ui.made["runs"] == [Path("old"), repo]
    assert (repo / "AGENT.md").is_file()
    made = ui.made["factory"]()
    assert made.model.id == "scripted-model"
    assert "yoagent session web" in (repo / "state" / "events.jsonl").read_text()


def test_record_without_a_model_only_shows_the_repository(
    yoagent: InProcess, ui: FakeUi, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    result = yoagent.run("web", "--record", str(repo), "--runs", "old")
    assert result.code == 0
    assert ui.made["runs"] == [Path("old"), repo]
    assert not repo.exists()  # nothing to record: not made


def test_record_alone_without_a_model_shows_the_repository_in_the_run_viewer(
    yoagent: InProcess, ui: FakeUi, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    result = yoagent.run("web", "--record", str(repo))
    assert (result.code, result.out) == (0, READY)
    assert result.err == "yoagent: no model to chat with: serving the run viewer only\n"
    assert ui.made["factory"] is None
    assert ui.made["runs"] == [repo]


def test_a_record_repository_from_the_config_file_does_not_hide_a_missing_key(
    yoagent: InProcess, ui: FakeUi, tmp_path: Path
) -> None:
    yoagent.user_config(f'record = "{tmp_path / "repo"}"\n')
    result = yoagent.run("web")
    assert (result.code, result.out) == (2, "")
    assert result.err.startswith("yoagent: no API key found.\n")
    assert ui.served == {}


def test_a_record_path_that_cannot_be_used_is_a_usage_error(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi
) -> None:
    (yoagent.work / "afile").write_text("x")
    result = yoagent.run("web", "--record", "afile", served=server)
    assert (result.code, result.err) == (2, "yoagent: --record afile: not a folder\n")
    assert ui.served == {}


@pytest.mark.parametrize(
    ("ending", "code", "err"),
    [
        (UiError("the port is taken"), 2, "yoagent: the port is taken\n"),
        (KeyboardInterrupt(), 130, ""),
    ],
)
def test_how_serving_ends(
    yoagent: InProcess,
    server: ScriptedServer,
    ui: FakeUi,
    ending: BaseException,
    code: int,
    err: str,
) -> None:
    ui.ending = ending
    result = yoagent.run("web", served=server)
    assert (result.code, result.out, result.err) == (code, READY, err)


def test_an_mcp_server_that_cannot_start_is_a_usage_error(
    yoagent: InProcess, server: ScriptedServer, ui: FakeUi
) -> None:
    result = yoagent.run("web", "--mcp", "/nonexistent/cmd", served=server)
    assert result.code == 2
    assert result.err == (
        "yoagent: --mcp: MCP server cmd: cannot start '/nonexistent/cmd': "
        "No such file or directory\n"
    )
    assert ui.served == {}


def test_a_bad_config_file_is_a_usage_error(yoagent: InProcess, ui: FakeUi) -> None:
    config = yoagent.user_config("max_turns = 0\n")
    result = yoagent.run("web")
    assert result.code == 2
    assert result.err == (
        f"yoagent: config: {config}: max_turns: Input should be greater than or equal to 1\n"
    )


@pytest.mark.parametrize("flag", [["-p", "hi"], ["--json"], ["--resume"], ["--resume", "id"]])
def test_the_terminal_only_flags_are_refused(
    yoagent: InProcess, ui: FakeUi, capsys: pytest.CaptureFixture[str], flag: list[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        yoagent.run("web", *flag)
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: yoagent web ")
    assert err.endswith(
        "yoagent web: error: -p, --json and --resume are for the terminal, not yoagent web\n"
    )


def test_the_web_parser_says_what_it_is() -> None:
    parser = web_parser()
    assert parser.prog == "yoagent web"
    assert parser.description == (
        "The agent in a local web page: chat, approve its edits, and look at recorded runs."
    )
    assert parser.epilog is None
    args = parser.parse_args([])
    assert (args.host, args.port, args.runs) == ("127.0.0.1", 8765, [])
    help_text = " ".join(parser.format_help().split())
    assert "listen on PORT (default 8765; 0: any free one)" in help_text
    assert "open a GASP repository or a cassette in the run viewer (repeatable)" in help_text
