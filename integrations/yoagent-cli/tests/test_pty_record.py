"""``--record`` at a real terminal: a Ctrl+C during a run reaches the CLI, never the git
processes the recorder keeps (issue 27)."""

from __future__ import annotations

import io
from pathlib import Path

import git
import pexpect
from pty_testing import PROMPT, Spawn, see, spawn
from sse_server import Reply, ScriptedServer, Text, text

__all__ = ["spawn"]  # the fixture


def test_pty_ctrl_c_during_a_recorded_run_leaves_the_recording_working(
    spawn: Spawn, server: ScriptedServer, tmp_path: Path
) -> None:
    """The terminal's SIGINT goes to its whole foreground process group: git helpers
    started in it (gitpython's persistent ``cat-file``) died, and every later run then
    reported "GASP recording ... failed ... Broken pipe" although its commit was written."""
    repo = tmp_path / "agent-log"
    server.add(
        text("first answer"),
        Reply([Text(f"tick{i} ", 0.2) for i in range(300)]),
        text("after the interrupt"),
        text("and once more"),
    )
    child = spawn("--base-url", server.url, "--model", "scripted-model", "--record", str(repo))
    transcript = io.StringIO()
    child.logfile_read = transcript  # everything the terminal showed
    see(child, PROMPT)
    child.send("one\r")
    see(child, "first answer")
    see(child, PROMPT)
    child.send("count slowly\r")
    see(child, "tick3")
    child.sendintr()  # Ctrl+C during the run: SIGINT to the terminal's foreground group
    see(child, "interrupted")
    see(child, PROMPT)
    child.send("three\r")
    see(child, "after the interrupt")
    see(child, PROMPT)
    child.send("four\r")
    see(child, "and once more")
    see(child, PROMPT)
    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    shown = transcript.getvalue()
    assert "failed" not in shown and "Broken pipe" not in shown, shown
    assert child.exitstatus == 0
    subjects = git.Repo(repo).git.log("--reverse", "--format=%s").splitlines()
    outcomes = [s.rsplit(": ", 1)[1] for s in subjects if s.startswith("run ")]
    assert outcomes == ["completed", "aborted", "completed", "completed"]
