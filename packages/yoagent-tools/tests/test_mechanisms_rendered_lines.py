"""Each sandbox mechanism's launcher and command line, word for word: which mechanisms a
platform tries, why a launcher is unavailable, where ``bwrap`` may be found, and the exact
Landlock, bubblewrap and Seatbelt lines a plan renders to."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from yoagent.tools import _mechanisms
from yoagent.tools._mechanisms import (
    CONFINEMENT_SOURCE,
    DEVICES,
    Plan,
    Unavailable,
    _holder,
    default_mechanisms,
    describe,
    launcher,
    render,
    seatbelt_profile,
)

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's launchers")
SYSTEM_BWRAP = shutil.which("bwrap", path="/usr/bin:/bin")
needs_system_bwrap = pytest.mark.skipif(SYSTEM_BWRAP is None, reason="no bwrap in /usr/bin")


@pytest.mark.parametrize(
    ("platform", "expected"),
    [("linux", ("landlock", "bubblewrap")), ("darwin", ("seatbelt",)), ("win32", ())],
)
def test_the_mechanisms_each_platform_tries(
    monkeypatch: pytest.MonkeyPatch, platform: str, expected: tuple[str, ...]
) -> None:
    monkeypatch.setattr(sys, "platform", platform)
    assert default_mechanisms() == expected


def test_seatbelt_runs_only_on_macos_with_sandbox_exec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = str(tmp_path / "sandbox-exec")
    monkeypatch.setattr(_mechanisms, "SEATBELT", missing)
    monkeypatch.setattr(sys, "platform", "darwin")
    with pytest.raises(Unavailable) as info:
        launcher("seatbelt", [])
    assert str(info.value) == f"Seatbelt needs macOS ({missing})"
    Path(missing).touch()
    assert launcher("seatbelt", []) == missing
    monkeypatch.setattr(sys, "platform", "linux")
    with pytest.raises(Unavailable, match="Seatbelt needs macOS"):
        launcher("seatbelt", [])


def test_landlock_and_bubblewrap_are_linux_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "platform", "darwin")
    for mechanism, said in (
        ("landlock", "Landlock is Linux only"),
        ("bubblewrap", "bubblewrap is Linux only"),
    ):
        with pytest.raises(Unavailable) as info:
            launcher(mechanism, [])  # type: ignore[arg-type]
        assert str(info.value) == said


@linux_only
def test_why_landlocks_launcher_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mechanisms, "landlock_abi", lambda: 1)
    assert launcher("landlock", []) == os.path.realpath(sys.executable)
    monkeypatch.setattr(_mechanisms, "landlock_abi", lambda: 0)
    with pytest.raises(Unavailable) as info:
        launcher("landlock", [])
    assert str(info.value) == "the kernel has no Landlock (or it is disabled)"
    monkeypatch.setattr(sys, "executable", "")
    with pytest.raises(Unavailable) as info:
        launcher("landlock", [])
    assert str(info.value) == "no Python interpreter to run the confinement step"


@linux_only
def test_a_standard_library_in_a_writable_folder_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_mechanisms, "landlock_abi", lambda: 1)
    library = os.path.dirname(os.path.realpath(os.__file__))
    if _holder(os.path.realpath(sys.executable), [library]) is not None:
        pytest.skip("the interpreter lies inside its standard library's folder here")
    with pytest.raises(Unavailable) as info:
        launcher("landlock", [library])
    assert str(info.value) == (
        f"its standard library {library} lies in the writable folder {library}: a command "
        f"could replace it and run the next command unconfined (run yoagent with a Python "
        f"installed outside the writable folders)"
    )


def fake_bwrap(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "bwrap"
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    return program


@linux_only
@needs_system_bwrap
def test_bwrap_is_taken_only_from_path_folders_outside_the_writable_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = fake_bwrap(tmp_path / "ws" / "bin")
    monkeypatch.setenv("PATH", f"{planted.parent}:/usr/bin:/bin")
    assert launcher("bubblewrap", [str(tmp_path / "ws")]) == os.path.realpath(SYSTEM_BWRAP or "")


@linux_only
@needs_system_bwrap
def test_bwrap_is_never_taken_from_a_relative_path_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_bwrap(tmp_path / "rel")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "rel:/usr/bin:/bin")
    assert launcher("bubblewrap", []) == os.path.realpath(SYSTEM_BWRAP or "")


@linux_only
@needs_system_bwrap
def test_without_path_bwrap_is_looked_for_in_the_default_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("PATH")
    assert launcher("bubblewrap", []) == os.path.realpath(SYSTEM_BWRAP or "")


@linux_only
def test_no_bwrap_at_all_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(Unavailable) as info:
        launcher("bubblewrap", [])
    assert str(info.value) == "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"


def test_a_writable_folder_holds_what_lies_beneath_it() -> None:
    assert _holder("/usr/bin/bwrap", ["/"]) == "/"
    assert _holder("/x/a", ["/x/"]) == "/x/"
    assert _holder("/xy/a", ["/x"]) is None


def test_each_mechanism_as_it_is_described(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_mechanisms, "landlock_abi", lambda: 6)
    assert describe("landlock") == "landlock (ABI 6)"
    assert describe("bubblewrap") == "bubblewrap"
    assert describe("seatbelt") == "seatbelt"


def test_the_landlock_line_runs_the_step_isolated_and_without_site() -> None:
    line = render("landlock", Plan(("/w",), (), (), False), ["true"], "/w", launcher="/py")
    assert line[:5] == ["/py", "-I", "-S", "-c", CONFINEMENT_SOURCE]
    assert line[-2:] == ["--", "true"]


def test_the_bubblewrap_line_word_for_word(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    plan = Plan(write=("/w", "/t"), read_only=("/w/.git/hooks",), pin=("/w/.git",), network=False)
    line = render("bubblewrap", plan, ["cmd", "arg"], "/w/sub", launcher="/usr/bin/bwrap")
    assert line == [
        "/usr/bin/bwrap", "--ro-bind", "/", "/", "--dev", "/dev",
        "--bind", "/w", "/w", "--bind", "/t", "/t", "--bind", "/w/.git", "/w/.git",
        "--ro-bind", "/w/.git/hooks", "/w/.git/hooks", "--unshare-net",
        "--cap-drop", "ALL", "--die-with-parent", "--chdir", "/w/sub", "--", "cmd", "arg",
    ]  # fmt: skip


def test_the_seatbelt_profile_and_line_word_for_word(tmp_path: Path) -> None:
    kept_folder = tmp_path / "hooks"
    kept_folder.mkdir()
    kept_file = str(tmp_path / "config")
    plan = Plan(
        write=("/w",), read_only=(str(kept_folder), kept_file), pin=("/w/.git",), network=False
    )
    profile, params = seatbelt_profile(plan)
    devices = " ".join(f'(literal (param "P{n}"))' for n in range(1, 1 + len(DEVICES)))
    after = 1 + len(DEVICES)
    assert profile == "\n".join(
        [
            "(version 1)",
            "(allow default)",
            f'(deny file-write* (require-not (require-any (subpath (param "P0")) {devices})))',
            f'(deny file-write* (subpath (param "P{after}")) (literal (param "P{after + 1}"))'
            f' (literal (param "P{after + 2}")))',
            '(deny network-outbound (remote ip "*:*"))',
            '(deny network-inbound (local ip "*:*"))',
        ]
    )
    assert list(params.values()) == ["/w", *DEVICES, str(kept_folder), kept_file, "/w/.git"]
    line = render("seatbelt", plan, ["true"], None, launcher="/sbx")
    defines = [word for name, value in params.items() for word in ("-D", f"{name}={value}")]
    assert line == ["/sbx", "-p", profile, *defines, "--", "true"]
    open_plan = Plan(write=("/w",), read_only=(), pin=(), network=True)
    assert seatbelt_profile(open_plan)[0].splitlines()[2:] == [
        f'(deny file-write* (require-not (require-any (subpath (param "P0")) {devices})))'
    ]
