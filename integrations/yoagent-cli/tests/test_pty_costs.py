"""The real ``yoagent`` at a terminal, pricing a model the bundled snapshot prices: a cost
per turn in the status line, and the conversation's in ``/cost`` (issues 15 and 20).

The scripted server answers as OpenAI's ``gpt-5.5`` (``--provider openai --base-url``): the
snapshot's $5 per million input tokens and $30 per million output tokens price each of its
replies (100 tokens in, 20 out) at exactly $0.0011.
"""

from __future__ import annotations

from pathlib import Path

import pexpect
from pty_testing import PROMPT, Spawn, see, spawn
from sse_server import ScriptedServer, text

__all__ = ["spawn"]  # the fixture

PRICED = ["--provider", "openai", "--model", "gpt-5.5"]


def test_pty_each_turn_shows_its_cost_and_cost_adds_up_the_conversation(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    server.add(text("first answer"), text("second answer"))
    child = spawn(*PRICED, "--base-url", server.url)
    see(child, "gpt-5.5 (openai at http://127.0.0.1:")
    see(child, PROMPT)
    child.send("one\r")
    see(child, "first answer")
    see(child, "tokens in 100 (cache hit 0%) · out 20")
    # The first turn: its cost is the conversation's, said once (the line ends there).
    child.expect(r"· \$0\.0011(?:\x1b\[[0-9;]*m)*\r\n")
    see(child, PROMPT)
    child.send("two\r")
    see(child, "second answer")
    see(child, "$0.0011 (total $0.0022)")
    see(child, PROMPT)
    child.send("/cost\r")
    see(child, "tokens in 200 · out 40 (this conversation)")
    see(child, "own calls     $0.0022  2 model calls")
    see(child, "sub-agents    $0.0000  0 runs")
    see(child, "compaction    $0.0000  0 requests")
    see(child, "total         $0.0022")
    see(child, PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)


def test_pty_an_unpriced_model_says_cost_unknown_and_cost_says_why(
    spawn: Spawn, server: ScriptedServer, workdir: Path
) -> None:
    server.add(text("hello"))
    child = spawn("--base-url", server.url, "--model", "scripted-model")
    see(child, PROMPT)
    child.send("hi\r")
    see(child, "hello")
    see(child, "· cost unknown")
    see(child, PROMPT)
    child.send("/cost\r")
    see(child, "total         unknown")
    see(child, "(cost unknown: openai-compatible models are never priced")
    see(child, PROMPT)
    child.sendeof()
    child.expect(pexpect.EOF)
