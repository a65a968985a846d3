"""The real ``yoagent`` at a terminal with a real stdio MCP server (``--mcp``): the banner
names it, its tool asks before it runs like ``bash``, its result reaches the model, and
``/mcp`` lists it (issue 16)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pexpect
from pty_testing import PROMPT, Spawn, see, shown, spawn
from sse_server import ScriptedServer, call, text

__all__ = ["spawn"]  # the fixture

NOTES_SERVER = Path(__file__).parent / "notes_mcp_server.py"
STARTUP = 120  # seconds: importing the MCP SDK and starting a server, on a loaded machine


def test_pty_an_mcp_tool_asks_first_then_its_result_reaches_the_model(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    server.add(
        call("notes__add_note", text="buy milk"),
        text("Added."),
        call("notes__add_note", text="skip me"),
        text("Left it."),
    )
    command = shlex.join([sys.executable, str(NOTES_SERVER), "stdio"])
    child = spawn("--base-url", server.url, "--model", "scripted-model", "--mcp", command)
    child.expect(shown("mcp: notes (3 tools) · /mcp lists their tools"), timeout=STARTUP)
    see(child, PROMPT)
    child.send("note: buy milk\r")
    child.expect("allow\\?")
    question = child.before or ""
    assert "call notes__add_note with {" in question
    assert '"text": "buy milk"' in question
    assert not (workdir / "notes.txt").exists()  # nothing ran before the yes
    child.send("y\r")
    see(child, "Added.")
    see(child, PROMPT)
    assert (workdir / "notes.txt").read_text() == "buy milk\n"
    assert server.requests[1]["messages"][-1]["content"] == (
        "noted 'buy milk'; the notebook holds 1 note(s)"
    )

    child.send("another\r")
    see(child, "allow?")
    child.send("n\r")
    see(child, "why not?")
    child.send("not that one\r")
    see(child, "Left it.")
    see(child, PROMPT)
    assert (workdir / "notes.txt").read_text() == "buy milk\n"
    assert (
        "the user declined; they said: not that one"
        in (server.requests[3]["messages"][-1]["content"])
    )

    child.send("/mcp\r")
    see(child, "notes (python notes_mcp_server.py, from --mcp; calls itself notes): 3 tools")
    see(child, "notes__add_note, notes__owner, notes__shutdown")
    see(child, PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
