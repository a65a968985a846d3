"""The slash commands added for issue 20, on a conversation with a scripted model."""

from __future__ import annotations

import io
import os
from pathlib import Path

from yoagent.cli.app import Options
from yoagent.cli.commands import Commands
from yoagent.cli.conversation import Conversation
from yoagent.cli.render import PlainRenderer
from yoagent.cli.session_store import SessionStore
from yoagent.core import Agent, MockProvider, ModelConfig, UserMessage


def conversation(tmp_path: Path, *replies: str) -> tuple[Conversation, io.StringIO]:
    out = io.StringIO()
    agent = Agent.from_provider(MockProvider.text(*replies), ModelConfig.mock())
    store = SessionStore(tmp_path / "sessions")
    conv = Conversation(
        agent=agent,
        store=store,
        session=store.create(cwd=tmp_path, model="mock-model"),
        options=Options(cwd=tmp_path),
        renderer=PlainRenderer(out),
    )
    return conv, out


async def test_retry_queues_the_last_prompt(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    commands = Commands(conv)
    await commands.dispatch("/retry")
    assert "nothing to retry" in out.getvalue()
    conv.last_prompt = "do it"
    await commands.dispatch("/retry")
    assert conv.queued_prompt == "do it"


async def test_compact_shortens_a_long_conversation(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    history = []
    for n in range(40):
        history += [UserMessage.from_text(f"question {n} " + "words " * 400)]
    conv.agent.replace_messages(history)
    await Commands(conv).dispatch("/compact")
    assert len(conv.agent.messages) < len(history)
    assert "compacted: about" in out.getvalue()
    conv.agent.replace_messages([])
    await Commands(conv).dispatch("/compact")
    assert "nothing to compact" in out.getvalue()


async def test_revoke_takes_back_standing_answers(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.confirm.always.update({"bash", "edit_file"})
    commands = Commands(conv)
    await commands.dispatch("/revoke bash")
    assert conv.confirm.always == {"edit_file"}
    await commands.dispatch("/revoke nope")
    assert "nope has no standing answer" in out.getvalue()
    await commands.dispatch("/revoke")
    assert conv.confirm.always == set()


async def test_init_writes_agents_md_into_the_system_prompt(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    await Commands(conv).dispatch("/init")
    assert (tmp_path / "AGENTS.md").exists()
    assert "## Project instructions" in conv.agent.system_prompt
    await Commands(conv).dispatch("/init")
    assert "AGENTS.md already exists" in out.getvalue()


async def test_sessions_delete_and_prune(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one", "two")
    commands = Commands(conv)
    await conv.agent.prompt("first")
    conv.save()
    first = conv.session.id
    await commands.dispatch("/clear")
    await commands.dispatch(f"/sessions delete {first}")
    assert f"deleted session {first}" in out.getvalue()
    assert conv.store.list() == []
    await conv.agent.prompt("second")
    conv.save()
    await commands.dispatch(f"/sessions delete {conv.session.id}")
    assert "that is the current session" in out.getvalue()
    old = conv.store.root / "20200101-000000-0000.jsonl"
    old.write_text("")
    os.utime(old, (0, 0))
    os.utime(conv.session.path, (0, 0))  # old too, but current
    await commands.dispatch("/sessions prune 1")
    assert "deleted 1 session(s) older than 1 days" in out.getvalue()
    assert [info.id for info in conv.store.list()] == [conv.session.id]
    await commands.dispatch("/sessions frob")
    assert "/sessions takes nothing" in out.getvalue()
