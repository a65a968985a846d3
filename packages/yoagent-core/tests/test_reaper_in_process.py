"""The watchdog's own code run in this process, with every signal it would send recorded
instead of sent: the lines it follows (added, removed, cleared, a line cut across reads,
an unfinished last line), what it kills at the end of its pipe and in which order, the
entries it cannot read, the marked-process search's rounds and count, and its start (the
signals it ignores, the fork that leaves it nobody's child).

The watchdog normally runs as a program of its own (``python -I -S reaper.py``), where a
test sees only what it killed; here each piece is called directly. (Added from mutation
testing: mutmut cannot see code that runs in another process, so none of these pieces
was reached by a test it could count.)"""

from __future__ import annotations

import signal
import types

import pytest

from yoagent.core._support import reaper


class _System:
    """What the watchdog asks of ``os``, scripted and recorded."""

    def __init__(self, reads: list[bytes | BaseException] | None = None) -> None:
        self.reads = list(reads or [])
        self.sent: list[tuple[str, int, int]] = []
        self.refuse: dict[int, BaseException] = {}
        self.forked = 0
        self.exited: list[int] = []

    def read(self, fd: int, size: int) -> bytes:
        assert (fd, size) == (7, 65536)
        if not self.reads:
            return b""
        step = self.reads.pop(0)
        if isinstance(step, BaseException):
            raise step
        return step

    def killpg(self, pgid: int, number: int) -> None:
        self._send("killpg", pgid, number)

    def kill(self, pid: int, number: int) -> None:
        self._send("kill", pid, number)

    def _send(self, how: str, target: int, number: int) -> None:
        if target in self.refuse:
            raise self.refuse[target]
        self.sent.append((how, target, number))

    def getpid(self) -> int:
        return 1000

    def fork(self) -> int:
        return self.forked

    def _exit(self, code: int) -> None:
        self.exited.append(code)
        raise _Exited


class _Exited(Exception):
    """``os._exit`` called: the process would end here."""


@pytest.fixture
def system(monkeypatch: pytest.MonkeyPatch) -> _System:
    fake = _System()
    monkeypatch.setattr(reaper, "os", fake)
    return fake


@pytest.fixture
def marked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    monkeypatch.setattr(reaper, "kill_marked", calls.append)
    return calls


KILL = signal.SIGKILL


# -- watch: the lines, then the kill at the pipe's end ----------------------------------------


def test_the_entries_still_listed_at_the_end_are_killed_groups_and_children_first(
    system: _System, marked: list[str]
) -> None:
    system.reads = [b"+g100\n+rabc\n+p200\n+g300\n-g300\n-p999\n+rdef\n", b"+p400\n"]
    reaper.watch(7)
    assert system.sent == [("killpg", 100, KILL), ("kill", 200, KILL), ("kill", 400, KILL)]
    assert marked == ["abc", "def"]


def test_a_line_cut_across_two_reads_is_read_whole_and_an_unfinished_last_line_is_not(
    system: _System, marked: list[str]
) -> None:
    system.reads = [b"+g1", b"00\n+p2", b"00\n-g", b"100\n+p300"]
    reaper.watch(7)
    assert system.sent == [("kill", 200, KILL)]
    assert marked == []


def test_stand_down_forgets_everything_listed_before_it(system: _System, marked: list[str]) -> None:
    system.reads = [b"+g100\n+rabc\n+p5\nx\n+p7\n"]
    reaper.watch(7)
    assert system.sent == [("kill", 7, KILL)]
    assert marked == []


def test_a_read_interrupted_by_a_signal_is_retried(system: _System, marked: list[str]) -> None:
    system.reads = [InterruptedError(), b"+p7\n"]
    reaper.watch(7)
    assert system.sent == [("kill", 7, KILL)]


def test_entries_it_cannot_read_or_kill_are_skipped_and_the_rest_killed(
    system: _System, marked: list[str]
) -> None:
    system.refuse = {11: ProcessLookupError(), 12: PermissionError()}
    system.reads = [
        "+g1\xff\n+gx\n+p\n+q5\n+g11\n+p12\n+g13\n+p14\n+rr\xe9\n".encode("latin-1"),
    ]
    reaper.watch(7)
    assert system.sent == [("killpg", 13, KILL), ("kill", 14, KILL)]
    assert marked == ["r\ufffd"]  # a run id that is not ASCII is still looked for


# -- kill_marked: the rounds ------------------------------------------------------------------


def test_marked_processes_are_killed_in_rounds_until_none_is_left(
    system: _System, monkeypatch: pytest.MonkeyPatch
) -> None:
    rounds = [[1000, 11, 12, 13], [14, 1000], [], [99]]
    monkeypatch.setattr(reaper, "_pids_with", lambda needle: rounds.pop(0))
    pauses: list[float] = []
    monkeypatch.setattr(reaper, "time", types.SimpleNamespace(sleep=pauses.append))
    system.refuse = {11: ProcessLookupError(), 12: PermissionError()}
    assert reaper.kill_marked("abc") == 2  # 13 and 14: 11 was gone, 12 not ours
    assert system.sent == [("kill", 13, KILL), ("kill", 14, KILL)]  # never itself (1000)
    assert pauses == [0.005, 0.01]
    assert rounds == [[99]]


# -- main: the start ----------------------------------------------------------------------------


@pytest.fixture
def handlers(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, object]]:
    calls: list[tuple[int, object]] = []
    monkeypatch.setattr(signal, "signal", lambda number, handler: calls.append((number, handler)))
    return calls


def test_the_started_process_ignores_interrupts_and_hangups_and_exits_at_once(
    system: _System, handlers: list[tuple[int, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    watched: list[int] = []
    monkeypatch.setattr(reaper, "watch", watched.append)
    system.forked = 4321  # the parent of the fork: exits, so the watchdog is nobody's child
    with pytest.raises(_Exited):
        reaper.main()
    ignored = signal.SIG_IGN
    assert handlers == [
        (signal.SIGINT, ignored),
        (signal.SIGHUP, ignored),
        (signal.SIGPIPE, ignored),
    ]
    assert system.exited == [0]
    assert watched == []


def test_the_forked_watchdog_follows_its_stdin(
    system: _System, handlers: list[tuple[int, object]], monkeypatch: pytest.MonkeyPatch
) -> None:
    watched: list[int] = []
    monkeypatch.setattr(reaper, "watch", watched.append)
    stdin = types.SimpleNamespace(fileno=lambda: 7)
    monkeypatch.setattr(reaper, "sys", types.SimpleNamespace(stdin=stdin))
    system.forked = 0
    reaper.main()
    assert system.exited == []
    assert watched == [7]
