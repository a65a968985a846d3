"""Driving the real ``yoagent`` in a pseudo-terminal against the scripted server.

The child is a :class:`pty_child.PtyChild` (pexpect's ``expect`` over the terminal's master
side), started without forking this multi-threaded test process: Python 3.12+ warns about
such a fork, and the forked child may deadlock.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

if sys.platform == "win32":  # pragma: no cover
    pytest.skip("pseudo-terminals need a POSIX system", allow_module_level=True)

from cli_testing import YOAGENT
from pty_child import PtyChild

PROMPT = "❯"  # prompt-toolkit moves the cursor over the space after it
_ESCAPES = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"

Spawn = Callable[..., PtyChild]


def shown(text: str) -> re.Pattern[str]:
    """``text`` as it appears on the terminal: styles may switch between any two characters."""
    return re.compile(_ESCAPES.join(re.escape(char) for char in text))


def see(child: PtyChild, text: str) -> None:
    """Wait until ``text`` is on the terminal."""
    child.expect(shown(text))


@pytest.fixture
def spawn(cli_env: dict[str, str], workdir: Path) -> Iterator[Spawn]:
    """Start ``yoagent *args`` in a 40×120 terminal in ``workdir`` (``env`` adds variables,
    ``unset`` removes some)."""
    children: list[PtyChild] = []

    def start(
        *args: str, env: dict[str, str] | None = None, unset: tuple[str, ...] = ()
    ) -> PtyChild:
        full = {**cli_env, "TERM": "xterm-256color", "PROMPT_TOOLKIT_NO_CPR": "1", **(env or {})}
        for name in unset:
            full.pop(name, None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            child = PtyChild(
                str(YOAGENT), args, cwd=workdir, env=full, timeout=15, dimensions=(40, 120)
            )
        forks = [str(w.message) for w in caught if "fork" in str(w.message)]
        assert forks == [], "the terminal's child was forked from a threaded process"
        children.append(child)
        return child

    yield start
    for child in children:
        if child.isalive():
            child.terminate(force=True)
        child.close()


def process_gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped counts as ended)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rpartition(")")[2].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True
    except OSError:  # no /proc: ask the kernel
        import os

        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        return False
