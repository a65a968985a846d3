"""Slash commands in-process: each keeps the REPL going (``dispatch`` is false) and says
what it did word for word when there is nothing to do; ``/sessions`` counts the 21st."""

from __future__ import annotations

import os
import time
from pathlib import Path

from test_commands import conversation

from yoagent.cli.commands import Commands


def lines(text: str) -> list[str]:
    return text.splitlines()


async def test_nothing_to_save_retry_or_clear(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    commands = Commands(conv)
    assert await commands.dispatch("/save") is False
    assert await commands.dispatch("/retry") is False
    assert await commands.dispatch("/clear") is False
    assert lines(out.getvalue()) == [
        "nothing to save yet",
        "nothing to retry yet",
        "(new conversation)",
    ]


async def test_init_twice_refuses_the_second(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    commands = Commands(conv)
    assert await commands.dispatch("/init") is False
    assert (tmp_path / "AGENTS.md").exists()
    assert await commands.dispatch("/init") is False
    assert lines(out.getvalue())[-1] == "error: AGENTS.md already exists here; edit it instead"


async def test_cost_and_model_keep_going(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path, "one")
    await conv.agent.prompt("first")
    commands = Commands(conv)
    assert await commands.dispatch("/cost") is False
    assert await commands.dispatch("/model") is False


async def test_deleting_another_session_keeps_going(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.store.root.mkdir(parents=True)
    (conv.store.root / "20200101-000000-0001.jsonl").write_text("")
    assert await Commands(conv).dispatch("/sessions delete 20200101-000000-0001") is False
    assert lines(out.getvalue()) == ["deleted session 20200101-000000-0001"]
    assert conv.store.list() == []


async def test_twenty_one_sessions_show_twenty_and_count_one(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.store.root.mkdir(parents=True)
    for index in range(21):
        path = conv.store.root / f"20200101-000000-{index:04d}.jsonl"
        path.write_text("")
        stamp = time.time() - (index + 1) * 3600
        os.utime(path, (stamp, stamp))
    await Commands(conv).dispatch("/sessions")
    shown = lines(out.getvalue())
    assert len(shown) == 21
    assert shown[-1] == "  … and 1 older"
