"""CommandSandbox without a real mechanism: what its probe runs and reports, the texts it
gives the model and the logs, the command it wraps, and the ``.git`` protections its plan
makes (each launcher here is a small script standing in for ``bwrap``)."""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from yoagent.core.support import Command
from yoagent.tools import CommandSandbox, SandboxUnavailableError, command_sandbox
from yoagent.tools._mechanisms import Mechanism, Plan, Unavailable
from yoagent.tools.command_sandbox import _make_git_files

STDIN_IS_NULL = (
    '[ "$(readlink /proc/self/fd/0)" = /dev/null ] || { echo "stdin open" >&2; exit 9; }'
)


def script(folder: Path, body: str, name: str = "fake-bwrap") -> str:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def folders(base: Path, *names: str) -> list[Path]:
    made = [base / name for name in names]
    for folder in made:
        folder.mkdir()
    return made


class Launchers:
    """A stand-in for ``launcher``: each mechanism's program (or why it is unavailable), and
    the calls made."""

    def __init__(self, programs: dict[str, str | Exception]) -> None:
        self.programs = programs
        self.calls: list[tuple[str, list[str]]] = []

    def __call__(self, mechanism: Mechanism, writable: Sequence[str]) -> str:
        self.calls.append((mechanism, list(writable)))
        program = self.programs[mechanism]
        if isinstance(program, Exception):
            raise program
        return program


def fake(monkeypatch: pytest.MonkeyPatch, **programs: str | Exception) -> Launchers:
    launchers = Launchers(programs)
    monkeypatch.setattr(command_sandbox, "launcher", launchers)
    return launchers


def test_the_probe_runs_with_stdin_from_dev_null_and_is_done_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    ok = script(tmp_path, STDIN_IS_NULL)
    launchers = fake(monkeypatch, landlock=Unavailable("no landlock"), bubblewrap=ok)
    sandbox = CommandSandbox(writable_paths=[tmp_path], mechanisms=["landlock", "bubblewrap"])
    saved, (read_end, write_end) = os.dup(0), os.pipe()
    os.dup2(read_end, 0)  # whatever this process's stdin is, the probe's is /dev/null
    try:
        with caplog.at_level(logging.INFO, logger="yoagent.tools"):
            assert sandbox.resolve() == "bubblewrap"
            assert sandbox.resolve() == "bubblewrap"
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read_end, write_end):
            os.close(fd)
    temp = sandbox.temp_folder
    assert launchers.calls == [
        ("landlock", [str(tmp_path.resolve()), temp]),
        ("bubblewrap", [str(tmp_path.resolve()), temp]),
    ]
    infos = [r for r in caplog.records if r.levelno == logging.INFO]
    assert [r.getMessage() for r in infos] == [
        "bash sandbox: workspace-write via bubblewrap, network off"
    ]
    assert sandbox.describe() == "workspace-write via bubblewrap, network off"
    networked = CommandSandbox("read-only", network=True, mechanisms=["bubblewrap"])
    assert networked.describe() == "read-only via bubblewrap, network on"


def test_the_probes_failures_name_each_mechanism_and_are_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    noisy = script(tmp_path, "echo first >&2; echo second >&2; echo third >&2; exit 3")
    fake(monkeypatch, landlock=Unavailable("no landlock"), bubblewrap=noisy)
    sandbox = CommandSandbox("read-only", mechanisms=["landlock", "bubblewrap"])
    with (
        caplog.at_level(logging.WARNING, logger="yoagent.tools"),
        pytest.raises(SandboxUnavailableError) as info,
    ):
        sandbox.resolve()
    expected = (
        "the sandbox policy 'read-only' cannot be enforced here (landlock: no landlock; "
        "bubblewrap: third); commands are refused rather than run unsandboxed"
    )
    assert str(info.value) == expected
    assert [r.getMessage() for r in caplog.records] == [f"bash sandbox: {expected}"]
    with pytest.raises(SandboxUnavailableError) as again:
        sandbox.describe()
    assert str(again.value) == expected


def test_a_silent_failing_probe_is_named_by_its_exit_status(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake(monkeypatch, bubblewrap=script(tmp_path, "exit 4"))
    with pytest.raises(SandboxUnavailableError, match=r"\(bubblewrap: exit status 4\);"):
        CommandSandbox("read-only", mechanisms=["bubblewrap"]).resolve()


def test_a_probes_undecodable_error_is_shown_with_replacement_characters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake(monkeypatch, bubblewrap=script(tmp_path, r"printf 'bad \377 byte\n' >&2; exit 1"))
    with pytest.raises(SandboxUnavailableError, match="\\(bubblewrap: bad \ufffd byte\\);"):
        CommandSandbox("read-only", mechanisms=["bubblewrap"]).resolve()


def test_a_probe_that_hangs_is_stopped_at_the_probe_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command_sandbox, "PROBE_TIMEOUT", 0.2)
    fake(monkeypatch, bubblewrap=script(tmp_path, "exec sleep 1"))
    with pytest.raises(SandboxUnavailableError, match=r"bubblewrap: could not run it: .*timed out"):
        CommandSandbox("read-only", mechanisms=["bubblewrap"]).resolve()


def test_no_mechanism_at_all_is_said_in_full() -> None:
    with pytest.raises(SandboxUnavailableError) as info:
        CommandSandbox("read-only", mechanisms=[]).resolve()
    assert str(info.value) == (
        "the sandbox policy 'read-only' cannot be enforced here (no mechanism for this "
        "platform); commands are refused rather than run unsandboxed"
    )


def test_an_unknown_policy_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="unknown sandbox policy") as info:
        CommandSandbox("open")
    assert str(info.value) == (
        "unknown sandbox policy 'open'; one of read-only, workspace-write, full-access"
    )


def test_the_summary_of_each_policy(tmp_path: Path) -> None:
    one, two = folders(tmp_path, "one", "two")
    assert CommandSandbox("full-access").summary() == (
        "full-access: no sandbox; commands can reach whatever this process can"
    )
    assert CommandSandbox("read-only").summary() == (
        "read-only: commands read the whole file system and write nothing; the network is off"
    )
    assert CommandSandbox("read-only", network=True).summary() == (
        "read-only: commands read the whole file system and write nothing; the network is on"
    )
    assert CommandSandbox(writable_paths=[one, two]).summary() == (
        f"workspace-write: commands read the whole file system and write only under "
        f"{one}, {two} and their own temporary folder ($TMPDIR), .git hooks and config "
        f"excepted; the network is off"
    )
    assert CommandSandbox().summary() == (
        "workspace-write: commands read the whole file system and write only under their "
        "own temporary folder ($TMPDIR), .git hooks and config excepted; the network is off"
    )
    assert CommandSandbox("full-access").describe() == "full-access (no sandbox)"


def test_the_denial_note_names_the_mechanism_once_it_is_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake(monkeypatch, bubblewrap=script(tmp_path, "exit 0"))
    sandbox = CommandSandbox("read-only", mechanisms=["bubblewrap"])
    tail = (
        "'Permission denied', 'Read-only file system', 'Operation not permitted' or an "
        "unreachable network above most likely come from the sandbox, not from file permissions."
    )
    summary = sandbox.summary()
    before = sandbox.explain_denial("touch: Permission denied")
    assert before == f"NOTE: the sandbox refused part of this command ({summary}). {tail}"
    sandbox.resolve()
    after = sandbox.explain_denial("touch: Permission denied")
    assert after == (
        f"NOTE: the sandbox refused part of this command ({summary}, enforced by bubblewrap). "
        f"{tail}"
    )
    assert sandbox.explain_denial("exit 3") is None


def test_wrap_keeps_the_commands_environment_folder_and_descriptors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake(monkeypatch, bubblewrap=script(tmp_path, "exit 0"))
    monkeypatch.setenv("YOAGENT_WRAP_PROBE", "inherited")
    sandbox = CommandSandbox(writable_paths=[tmp_path], mechanisms=["bubblewrap"])
    temp = sandbox.temp_folder
    given = sandbox.wrap(Command(["true"], cwd=str(tmp_path), env={"A": "1"}, pass_fds=(7,)))
    assert given.env == {"A": "1", "TMPDIR": temp, "TMP": temp, "TEMP": temp}
    assert given.pass_fds == (7,) and given.cwd == str(tmp_path)
    argv = list(given.argv)
    assert argv[argv.index("--chdir") + 1] == str(tmp_path)
    inherited = sandbox.wrap(Command(["true"]))
    assert inherited.env is not None and inherited.env["YOAGENT_WRAP_PROBE"] == "inherited"
    assert inherited.env["TMP"] == temp and "--chdir" not in inherited.argv


def test_the_read_only_plan_carries_the_network_setting() -> None:
    assert CommandSandbox("read-only").plan() == Plan((), (), (), network=False)
    assert CommandSandbox("read-only", network=True).plan() == Plan((), (), (), network=True)


def test_a_writable_folder_replaced_by_a_link_is_left_out_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws, elsewhere = folders(tmp_path, "ws", "elsewhere")
    sandbox = CommandSandbox(writable_paths=[ws])
    ws.rmdir()
    ws.symlink_to(elsewhere)
    with caplog.at_level(logging.WARNING, logger="yoagent.tools"):
        plan = sandbox.plan()
    assert plan.write == (sandbox.temp_folder,)
    assert [r.getMessage() for r in caplog.records] == [
        f"bash sandbox: {ws.resolve().parent / 'ws'} is now a link; it is not writable"
    ]


def test_a_dot_git_link_is_left_unprotected_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    ws, real_git = folders(tmp_path, "ws", "real-git")
    (ws / ".git").symlink_to(real_git)
    with caplog.at_level(logging.WARNING, logger="yoagent.tools"):
        plan = CommandSandbox(writable_paths=[ws]).plan()
    assert plan.pin == () and plan.read_only == ()
    dot_git = ws.resolve() / ".git"
    assert [r.getMessage() for r in caplog.records] == [
        f"bash sandbox: {dot_git} is a link; it is not protected"
    ]
    assert os.listdir(real_git) == []


def test_a_dot_git_file_is_read_only(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("gitdir: /elsewhere\n")
    plan = CommandSandbox(writable_paths=[tmp_path]).plan()
    assert plan.read_only == (str(tmp_path.resolve() / ".git"),) and plan.pin == ()


def test_the_git_placeholders_are_made_inside_dot_git_with_their_modes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    mask = os.umask(0o022)
    try:
        plan = CommandSandbox(writable_paths=[ws]).plan()
    finally:
        os.umask(mask)
    git = ws.resolve() / ".git"
    assert sorted(os.listdir(git)) == ["commondir", "config", "config.worktree", "hooks", "info"]
    assert os.listdir(elsewhere) == []
    for name in ("hooks", "info"):
        assert stat.S_IMODE((git / name).stat().st_mode) == 0o755
    for name in ("config", "commondir", "config.worktree"):
        assert stat.S_IMODE((git / name).stat().st_mode) == 0o644
    assert (git / "commondir").read_text() == ".\n" and (git / "config").read_text() == ""
    assert plan.pin == (str(git),)
    assert set(plan.read_only) == {str(git / n) for n in os.listdir(git)}


def test_existing_git_files_are_never_written(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    git.mkdir()
    (git / "commondir").write_text("../common-folder\n")
    (git / "config").write_text("[core]\n")
    CommandSandbox(writable_paths=[tmp_path]).plan()
    assert (git / "commondir").read_text() == "../common-folder\n"
    assert (git / "config").read_text() == "[core]\n"


def test_git_files_are_made_never_through_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(NotADirectoryError):  # O_NOFOLLOW with O_DIRECTORY: ENOTDIR
        _make_git_files(str(link))
    assert os.listdir(real) == []


def test_git_files_are_made_only_in_a_folder_never_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    errors: list[BaseException] = []

    def make() -> None:
        try:
            _make_git_files(str(fifo))
        except OSError as error:
            errors.append(error)

    worker = threading.Thread(target=make, daemon=True)
    worker.start()
    worker.join(5)  # only a blocked open waits it out
    blocked = worker.is_alive()
    if blocked:  # opened for reading, it waits for a writer: give it one
        os.close(os.open(fifo, os.O_WRONLY))
        worker.join(2)
    assert not blocked
    assert len(errors) == 1 and isinstance(errors[0], NotADirectoryError)
