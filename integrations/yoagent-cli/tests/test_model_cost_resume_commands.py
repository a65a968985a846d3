"""``/model``, ``/cost``, ``/resume ID``, ``/diff`` and a command whose file operation
fails, in-process and word for word."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from test_commands import conversation

from yoagent.cli.changes import FileChange, Turn
from yoagent.cli.commands import Commands
from yoagent.cli.config import openai_compatible
from yoagent.cli.prices import why_unpriced
from yoagent.core import AssistantMessage, MockProvider, ModelConfig, TextContent, Usage
from yoagent.providers import models


def lines(text: str) -> list[str]:
    return text.splitlines()


def preset(provider: str) -> ModelConfig:
    return next(p for p in models.presets() if p.provider == provider)


async def test_model_lists_twelve_others_at_most(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conv, out = conversation(tmp_path)
    current = preset("openai")
    conv.agent.set_model(current)
    others = [f"m{index}" for index in range(14)]
    monkeypatch.setattr(conv.models, "ids", lambda model: [model.id, *others])
    assert await Commands(conv).dispatch("/model") is False
    assert lines(out.getvalue()) == [
        f"model {current.id} (openai)",
        f"  also: {', '.join(others[:12])}",
    ]


async def test_model_switches_within_the_provider(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.agent.set_model(preset("openai"))
    assert await Commands(conv).dispatch("/model gpt-5.5") is False
    assert (conv.agent.model.id, conv.agent.model.provider) == ("gpt-5.5", "openai")
    assert lines(out.getvalue()) == ["model is now gpt-5.5 (openai)"]


async def test_model_keeps_a_base_url_the_user_gave(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path)
    conv.options.base_url = "http://127.0.0.1:9/v1"
    conv.agent.set_model(openai_compatible("http://127.0.0.1:9/v1", "first"))
    assert await Commands(conv).dispatch("/model second") is False
    model = conv.agent.model
    assert (model.id, model.provider, model.base_url) == (
        "second",
        "openai-compatible",
        "http://127.0.0.1:9/v1",
    )


async def test_model_of_a_vendor_behind_a_base_url_keeps_the_url(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path)
    conv.options.base_url = "http://127.0.0.1:9/v1"
    conv.agent.set_model(replace(preset("openai"), base_url="http://127.0.0.1:9/v1"))
    assert await Commands(conv).dispatch("/model gpt-5.5") is False
    assert conv.agent.model.base_url == "http://127.0.0.1:9/v1"


async def test_cost_counts_every_prompt_token_and_says_why_unpriced(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    reply = AssistantMessage(
        content=[TextContent(text="a")],
        usage=Usage(input=100, output=20, cache_read=30, cache_write=5),
    )
    conv.agent.provider = MockProvider([reply])
    await conv.agent.prompt("q")
    assert await Commands(conv).dispatch("/cost") is False
    shown = lines(out.getvalue())
    assert shown[0] == "tokens in 135 · out 20 (this conversation)"
    reason = why_unpriced(conv.agent.model, conv.options.pricing)
    assert f"(cost unknown: {reason})" in shown


async def test_cost_with_nothing_spent_says_nothing_is_unknown(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch("/cost") is False
    assert not any("cost unknown" in line for line in lines(out.getvalue()))


async def test_resume_by_id_takes_that_session(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path, "one", "two")
    commands = Commands(conv)
    await conv.agent.prompt("first")
    conv.save()
    first = conv.session.id
    await commands.dispatch("/clear")
    await conv.agent.prompt("second")
    conv.save()
    assert await commands.dispatch(f"/resume {first}") is False
    assert conv.session.id == first


async def test_diff_shows_the_changes(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    changed = tmp_path / "a.txt"
    changed.write_text("new\n")
    conv.changes.turns.append(Turn(changes=[FileChange(changed, "a.txt", b"old\n", None)]))
    assert await Commands(conv).dispatch("/diff") is False
    shown = out.getvalue()
    assert "-old" in shown and "+new" in shown


async def test_a_failed_file_operation_is_an_error_line(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path, "one")
    await conv.agent.prompt("first")
    target = tmp_path / "missing" / "copy.jsonl"
    assert await Commands(conv).dispatch(f"/save {target}") is False
    (said,) = [line for line in lines(out.getvalue()) if line.startswith("error: ")]
    assert said.startswith("error: No such file or directory: ")
    assert not said.endswith(": ")
