"""A conversation's own steps in-process: the last exchange ``--resume`` shows (which
prompt, which replies, how they are shortened and styled), resuming the latest session of
this folder or one by id, saving when the file moved, and starting a new conversation."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from test_commands import conversation

from yoagent.cli.app import Options
from yoagent.cli.conversation import Conversation, last_exchange
from yoagent.cli.rich_render import RichRenderer
from yoagent.cli.session_store import SessionStore
from yoagent.core import (
    AgentMessage,
    AssistantMessage,
    SessionError,
    TextContent,
    UserMessage,
)
from yoagent.core.extension import AGENT_STOPPED_PREFIX


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def said(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)] if text else [])


def test_the_last_exchange_is_the_newest_typed_prompt_and_every_reply_after_it() -> None:
    messages: list[AgentMessage] = [
        user("first"),
        said("old"),
        user("second"),
        said("one"),
        said(""),
        said("two"),
        user(f"{AGENT_STOPPED_PREFIX} by a hook"),
        said("three"),
    ]
    assert last_exchange(messages) == ("second", "one\ntwo\nthree")


def test_the_last_exchange_at_either_end_of_the_history() -> None:
    assert last_exchange([said("old"), user("now")]) == ("now", "")
    assert last_exchange([user("only"), said("reply")]) == ("only", "reply")
    assert last_exchange([said("x"), user("p"), said("r"), said("s")]) == ("p", "r\ns")
    assert last_exchange([said("x")]) is None
    assert last_exchange([user(f"{AGENT_STOPPED_PREFIX} by a hook")]) is None
    assert last_exchange([]) is None


def test_the_exchange_is_shown_four_lines_each_with_the_rest_counted(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    prompt = "\n".join(f"p{n}" for n in range(6))
    reply = "\n".join(f"r{n}" for n in range(4))
    conv.agent.replace_messages([user(prompt), said(reply)])
    conv.show_last_exchange()
    assert out.getvalue().splitlines() == [
        "you: p0",
        "     p1",
        "     p2",
        "     p3",
        "     … (2 more lines)",
        "  r0",
        "  r1",
        "  r2",
        "  r3",
    ]


def test_a_blank_prompt_is_one_empty_line_and_no_reply_shows_nothing(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.agent.replace_messages([user("  \n ")])
    conv.show_last_exchange()
    assert out.getvalue() == "you: \n"


def test_the_prompt_is_bold_and_the_reply_dim(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path)
    out = io.StringIO()
    conv.renderer = RichRenderer(
        Console(file=out, width=40, force_terminal=True, color_system="standard")
    )
    conv.agent.replace_messages([user("ask\nmore"), said("answer")])
    conv.show_last_exchange()
    assert out.getvalue() == (
        "\x1b[1myou: ask\x1b[0m\n\x1b[1m     more\x1b[0m\n\x1b[2m  answer\x1b[0m\n"
    )


def test_with_no_history_nothing_is_shown(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.show_last_exchange()
    assert out.getvalue() == ""


def saved(store: SessionStore, cwd: Path, *messages: AgentMessage) -> str:
    session = store.create(cwd=cwd, model="mock-model")
    session.save(list(messages))
    return session.id


def test_resume_takes_this_folders_latest_session_counts_its_prompts_and_shows_the_exchange(
    tmp_path: Path,
) -> None:
    conv, out = conversation(tmp_path)
    conv.last_prompt = "before"
    here = saved(
        conv.store,
        tmp_path,
        user("fix the bug"),
        said("done"),
        user(f"{AGENT_STOPPED_PREFIX} by a hook"),
        user("and test it"),
        said("tested"),
    )
    saved(conv.store, tmp_path / "elsewhere", user("newer, elsewhere"))
    conv.resume()
    assert out.getvalue().splitlines() == [
        f"resumed session {here} (2 prompts): fix the bug",
        "you: and test it",
        "  tested",
    ]
    assert conv.session.id == here
    assert conv.last_prompt is None
    assert len(conv.agent.messages) == 5


def test_resume_by_id_and_a_session_without_a_title(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    untitled = saved(conv.store, tmp_path / "other", said("only a reply"))
    saved(conv.store, tmp_path, user("here"))
    conv.resume(untitled)
    assert out.getvalue().splitlines() == [f"resumed session {untitled} (0 prompts)"]
    with pytest.raises(SessionError, match="no saved session 'nope'"):
        conv.resume("nope")


def test_resume_with_nothing_saved_says_so(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path)
    with pytest.raises(SessionError, match=r"^no saved session yet$"):
        conv.resume()


def test_resume_warns_of_a_cut_off_last_line(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    other = conv.store.create(cwd=tmp_path, model="mock-model")
    other.save([user("kept")])
    with other.path.open("a") as file:
        file.write('{"cut')
    conv.resume(other.id)
    first = out.getvalue().splitlines()[0]
    assert first.startswith(f"warning: session {other.path}: ")
    assert first.endswith("; skipped it, the rest is resumed")


def test_a_save_after_the_file_changed_on_disk_moves_and_says_so(tmp_path: Path) -> None:
    conv, out = conversation(tmp_path)
    conv.agent.replace_messages([user("one")])
    conv.save()
    old = conv.session.id
    conv.session.path.write_text(conv.session.path.read_text() + "\n")  # another writer
    conv.agent.replace_messages([user("one"), said("two")])
    conv.save()
    assert conv.session.id != old
    assert out.getvalue() == (
        f"session {old} was changed on disk by something else; "
        f"this conversation is saved as {conv.session.id}\n"
    )


def test_a_new_conversation_is_a_new_session_of_this_folder_and_model(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path)
    conv.last_prompt = "again"
    first = conv.session.id
    conv.new_conversation()
    assert conv.session.id != first
    assert (conv.session.cwd, conv.session.model) == (str(tmp_path), conv.agent.model.id)
    assert conv.last_prompt is None


def test_the_change_tracker_works_in_the_folder_and_the_allowed_paths(tmp_path: Path) -> None:
    conv, _ = conversation(tmp_path)
    (tmp_path / "more").mkdir()
    options = Options(cwd=tmp_path, allow_paths=[tmp_path / "more"])
    tracked = Conversation(
        agent=conv.agent,
        store=conv.store,
        session=conv.session,
        options=options,
        renderer=conv.renderer,
    )
    assert tracked.changes.cwd == tmp_path
    assert tracked.changes.sandbox.roots == (str(tmp_path), str(tmp_path / "more"))
