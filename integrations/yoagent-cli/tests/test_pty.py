"""End to end: the real ``yoagent`` in a pseudo-terminal against the scripted server."""

from __future__ import annotations

from pathlib import Path

import pexpect
from pty_testing import PROMPT, Spawn, see, spawn
from sse_server import Call, Reply, ScriptedServer, Text, text

__all__ = ["spawn"]  # the fixture


def test_a_session_streams_asks_writes_survives_ctrl_c_and_quits(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    server.add(
        Reply(
            [
                Text("Sure, I will ", 0.05),
                Text("create hello.txt now.\n", 0.05),
                Call("write_file", {"path": "hello.txt", "content": "Hello from yoagent\n"}),
            ]
        ),
        text("Created ", "**hello.txt**."),
        Reply([Text(f"tick{i} ", 0.2) for i in range(300)]),
        text("Still here."),
    )
    child = spawn("--base-url", server.url, "--model", "scripted-model")
    see(child, PROMPT)

    child.send("create hello.txt\r")
    see(child, "create hello.txt now.")  # streamed text
    see(child, "• write_file(")  # the tool call line
    see(child, "write hello.txt (1 line, 19 bytes)")  # what it will do
    see(child, "allow?")
    assert not (workdir / "hello.txt").exists()
    child.send("y\r")
    see(child, "✓ write_file(")
    see(child, "hello.txt.")
    see(child, "tokens in 200 (cache hit 0%) · out 40")
    see(child, PROMPT)
    assert (workdir / "hello.txt").read_text() == "Hello from yoagent\n"

    child.send("count slowly\r")
    see(child, "tick3")
    child.sendintr()  # Ctrl+C during the slow stream
    see(child, "interrupted")
    see(child, PROMPT)
    assert child.isalive()
    assert "tick299" not in (child.before or "")

    child.send("are you there?\r")
    see(child, "Still here.")
    see(child, PROMPT)
    sent = "\n".join(str(m.get("content")) for m in server.requests[-1]["messages"])
    assert "create hello.txt" in sent  # the session kept its history
    assert "count slowly" in sent
    assert sent.endswith("are you there?")

    child.send("/quit\r")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_history_recall_and_ctrl_c_twice_at_the_prompt_exits(
    spawn: Spawn, server: ScriptedServer
) -> None:
    server.add(text("one"), text("two"))
    child = spawn("--base-url", server.url, "--model", "scripted-model")
    see(child, PROMPT)
    child.send("first question\r")
    see(child, "one")
    see(child, PROMPT)
    child.send("\x1b[A")  # up arrow: the previous prompt comes back
    child.send("\r")
    see(child, "two")
    see(child, PROMPT)
    assert server.requests[1]["messages"][-1]["content"] == "first question"

    child.sendintr()
    see(child, "press Ctrl+C again")
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    assert (child.exitstatus, child.signalstatus) == (0, None), child.before


def test_slash_commands_at_the_terminal(spawn: Spawn, server: ScriptedServer) -> None:
    server.add(text("answer one"))
    child = spawn("--base-url", server.url, "--model", "scripted-model")
    see(child, PROMPT)
    child.send("/help\r")
    see(child, "/sessions")
    see(child, PROMPT)
    child.send("question\r")
    see(child, "answer one")
    see(child, PROMPT)
    child.send("/sessions\r")
    see(child, "question")
    see(child, PROMPT)
    child.send("/model other-model\r")
    see(child, "model is now other-model")
    see(child, PROMPT)
    child.send("/clear\r")
    see(child, "new conversation")
    see(child, PROMPT)
    child.send("/resume\r")
    see(child, "resumed session")
    see(child, PROMPT)
    child.send("/bogus\r")
    see(child, "unknown command /bogus")
    see(child, PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
