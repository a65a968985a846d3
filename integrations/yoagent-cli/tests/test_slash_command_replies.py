"""Slash commands in-process, each reply word for word: ``/thinking``, ``/revoke``,
``/diff``, ``/compact`` with too little to compact, ``/mcp`` without servers, ``/help``'s
closing line, and every one of them keeping the REPL going (``dispatch`` is false)."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_commands import conversation

from yoagent.cli.commands import Commands
from yoagent.core import ThinkingLevel


def lines(text: str) -> list[str]:
    return text.splitlines()


LEVELS = ", ".join(level.value for level in ThinkingLevel)


@pytest.mark.parametrize(
    ("start", "command", "shown", "said"),
    [
        (True, "/thinking hide", False, "thinking hidden"),
        (False, "/thinking HIDE", False, "thinking hidden"),
        (False, "/thinking show", True, "thinking shown"),
        (True, "/thinking", False, "thinking hidden"),
        (False, "/thinking", True, "thinking shown"),
    ],
)
async def test_thinking_shown_or_hidden(
    tmp_path: Path, start: bool, command: str, shown: bool, said: str
) -> None:
    conv, out = conversation(tmp_path)
    conv.renderer.show_thinking = start
    level = conv.agent.thinking_level.value
    assert await Commands(conv).dispatch(command) is False
    assert conv.renderer.show_thinking is shown
    assert lines(out.getvalue()) == [f"{said} (level {level})"]


async def test_thinking_levels_and_the_refusal(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    commands = Commands(conv)
    assert await commands.dispatch("/thinking high") is False
    assert conv.agent.thinking_level is ThinkingLevel.HIGH
    assert await commands.dispatch("/thinking loud") is False
    assert lines(out.getvalue()) == [
        "thinking level high",
        f"error: /thinking takes show, hide or a level ({LEVELS})",
    ]


async def test_revoke_word_for_word(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    commands = Commands(conv)
    assert await commands.dispatch("/revoke") is False
    conv.confirm.always.update({"write_file", "bash", "edit_file"})
    assert await commands.dispatch("/revoke bash") is False
    assert await commands.dispatch("/revoke search") is False
    assert await commands.dispatch("/revoke") is False
    assert conv.confirm.always == set()
    assert lines(out.getvalue()) == [
        "no standing 'always' answers",
        "revoked: bash (it asks again)",
        "error: search has no standing answer (standing: edit_file, write_file)",
        "revoked: edit_file, write_file (they ask again)",
    ]


async def test_diff_with_no_changes(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch("/diff") is False
    assert lines(out.getvalue()) == ["the agent has changed no files in this conversation"]


@pytest.mark.parametrize("prompts", [0, 1])
async def test_compact_with_too_little_to_compact(tmp_path: Path, prompts: int) -> None:
    conv, out = conversation(tmp_path, "one")
    for _ in range(prompts):
        await conv.agent.prompt("first")
    before = list(conv.agent.messages)
    assert await Commands(conv).dispatch("/compact") is False
    said = "nothing to compact yet" if prompts == 0 else "the conversation is already as short"
    assert lines(out.getvalue())[0].startswith(said)
    assert conv.agent.messages == before


async def test_mcp_without_servers_says_how_to_add_one(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch("/mcp") is False
    assert lines(out.getvalue()) == [
        "no MCP servers: add one with --mcp 'CMD ARGS', --mcp-http URL, or an "
        "[mcp_servers.NAME] table in the user config"
    ]


async def test_help_ends_with_the_keys(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    assert await Commands(conv).dispatch("/help") is False
    shown = lines(out.getvalue())
    assert all(line.startswith("  /") for line in shown[:-1])
    assert shown[-1] == (
        "  Ctrl+C stops the current run; at the prompt, Ctrl+C twice or Ctrl+D quits. "
        "Tab completes commands and paths."
    )
