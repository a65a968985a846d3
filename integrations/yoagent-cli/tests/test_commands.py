"""Slash commands on a conversation (with a scripted model)."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path

from cli_testing import saved_messages

from yoagent.cli.app import Options
from yoagent.cli.commands import Commands, Conversation
from yoagent.cli.render import PlainRenderer
from yoagent.cli.session_store import SessionStore
from yoagent.core import (
    Agent,
    AssistantMessage,
    ExecutionLimits,
    MockProvider,
    ModelConfig,
    Session,
    StopReason,
    TextContent,
    ThinkingLevel,
    ToolCall,
    tool,
)


def conversation(tmp_path: Path, *replies: str) -> tuple[Conversation, io.StringIO]:
    out = io.StringIO()
    agent = Agent.from_provider(MockProvider.text(*replies), ModelConfig.mock())
    store = SessionStore(tmp_path / "sessions")
    options = Options(cwd=tmp_path)
    return (
        Conversation(
            agent=agent,
            store=store,
            session=store.create(cwd=tmp_path, model="mock-model"),
            options=options,
            renderer=PlainRenderer(out),
        ),
        out,
    )


async def test_quit_and_exit_end_the_repl(tmp_path: Path) -> None:
    commands = Commands(conversation(tmp_path)[0])
    assert await commands.dispatch("/quit") is True
    assert await commands.dispatch("/exit") is True
    assert await commands.dispatch("/help") is False


async def test_help_lists_every_command(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    await Commands(conv).dispatch("/help")
    for name in ("/help", "/quit", "/clear", "/model", "/cost", "/save", "/resume", "/sessions"):
        assert name in out.getvalue()


async def test_unknown_command_says_so(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch("/frobnicate now") is False
    assert "unknown command /frobnicate" in out.getvalue()


async def test_save_clear_sessions_and_resume(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "first answer")
    commands = Commands(conv)
    await conv.agent.prompt("first question")
    await commands.dispatch("/save")
    saved = conv.session.path
    assert len(saved_messages(saved)) == 2
    assert f"saved to {saved}" in out.getvalue()

    await commands.dispatch(f"/save {tmp_path / 'copy.jsonl'}")
    assert saved_messages(tmp_path / "copy.jsonl") == saved_messages(saved)

    await commands.dispatch("/clear")
    assert conv.agent.messages == []
    assert conv.session.path != saved

    await commands.dispatch("/sessions")
    assert "first question" in out.getvalue()

    await commands.dispatch("/resume")
    assert len(conv.agent.messages) == 2
    assert conv.session.path == saved
    assert "resumed session" in out.getvalue()


async def test_resume_without_sessions_is_an_error_not_a_crash(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    await Commands(conv).dispatch("/resume")
    assert "error: no saved session yet" in out.getvalue()


async def test_model_switches_within_the_provider(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.agent.model = ModelConfig(
        api=conv.agent.model.api, provider="openai", id="gpt-5.5", base_url="https://x/v1"
    )
    conv.agent.set_model = lambda config: setattr(conv.agent, "model", config)  # type: ignore[method-assign]
    commands = Commands(conv)
    await commands.dispatch("/model")
    assert "model gpt-5.5 (openai)" in out.getvalue()
    await commands.dispatch("/model gpt-4.1")
    assert conv.agent.model.id == "gpt-4.1"
    assert conv.agent.model.provider == "openai"


async def test_cost_and_thinking(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "hi")
    commands = Commands(conv)
    await conv.agent.prompt("hello")
    await commands.dispatch("/cost")
    assert "own calls     $0.0000  1 model call\n" in out.getvalue()
    await commands.dispatch("/thinking")
    assert conv.renderer.show_thinking is False
    await commands.dispatch("/thinking show")
    assert conv.renderer.show_thinking is True
    await commands.dispatch("/thinking high")
    assert conv.agent.thinking_level is ThinkingLevel.HIGH
    await commands.dispatch("/thinking loud")
    assert "error: /thinking takes" in out.getvalue()


async def test_a_history_the_agent_compacted_saves_and_resumes(tmp_path: Path) -> None:
    @tool
    async def read_chunk(n: int) -> str:
        """Read one chunk of a big file."""
        return f"chunk {n}: " + "lorem ipsum dolor sit amet " * 120

    def reading(n: int) -> AssistantMessage:
        return AssistantMessage(
            content=[ToolCall(id=f"c{n}", name="read_chunk", arguments={"n": n})],
            stop_reason=StopReason.TOOL_USE,
        )

    conv, _ = conversation(tmp_path)
    small = replace(ModelConfig.mock(), context_window=24_000, max_tokens=2_000)
    provider = MockProvider([reading(0), AssistantMessage(content=[TextContent(text="read")])])
    conv.agent = Agent.from_provider(
        provider,
        small,
        tools=[read_chunk],
        limits=ExecutionLimits(max_turns=None, max_total_tokens=None, max_duration=None),
    )
    await conv.agent.prompt("read the first chunk")
    conv.save()
    before = conv.session.path.read_text()

    provider.add(*(reading(n) for n in range(1, 60)), AssistantMessage(content=[]))
    await conv.agent.prompt("now read the rest")
    assert conv.agent.stats.compactions >= 1
    conv.save()
    assert conv.session.path.read_text().startswith(before)  # appended, not rewritten
    assert saved_messages(conv.session.path) == conv.agent.messages
    saved = Session.load(conv.session.path)
    assert len(saved) > len(conv.agent.messages)  # the pre-compaction branch is kept

    await Commands(conv).dispatch("/clear")
    await Commands(conv).dispatch("/resume")
    assert conv.agent.messages == saved_messages(conv.session.path)


async def test_resuming_the_current_session_keeps_saving_to_it(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one", "two", "three")
    await conv.agent.prompt("first")
    conv.save()
    path = conv.session.path
    await conv.agent.prompt("second")  # not saved yet
    await Commands(conv).dispatch("/resume")
    assert conv.session.path == path
    assert len(conv.agent.messages) == 4
    await conv.agent.prompt("third")
    conv.save()
    assert conv.session.path == path  # no conflict with its own earlier save
    assert "changed on disk" not in out.getvalue()
    assert saved_messages(path) == conv.agent.messages
