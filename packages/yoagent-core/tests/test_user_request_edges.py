"""user_request_parts at its edges: a question followed by code, an empty history, the run's
prompts kept in every answer, the short-reply bound exactly, and the walks back to the
question and to the request before it (what stops them, what they skip)."""

from __future__ import annotations

from yoagent.core import AssistantMessage, TextContent, UserMessage
from yoagent.core._hooks.user_request import (
    SHORT_REPLY_CHARS,
    ReplyContext,
    UserRequestParts,
    UserRequestSource,
    user_request_parts,
)
from yoagent.core._types.markers import SUMMARY_PREFIX, stopped_marker
from yoagent.core._types.messages import AgentMessage


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def said(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


MARKER = user(stopped_marker("cancelled"))


def reply_to(*messages: AgentMessage) -> ReplyContext | None:
    parts = user_request_parts(messages)
    assert parts is not None
    return parts.reply


def test_a_question_followed_by_inline_code_is_still_a_question() -> None:
    assert reply_to(user("req"), said("Run it? `make all`"), user("yes")) == ReplyContext(
        question="Run it? `make all`", earlier_request="req"
    )


def test_a_question_followed_by_a_code_block_is_still_a_question() -> None:
    question = "Shall I run this?\n```\nls -la\n```"
    assert reply_to(user("req"), said(question), user("yes")) == ReplyContext(
        question=question, earlier_request="req"
    )


def test_an_empty_history_falls_back_to_the_run_prompts() -> None:
    assert user_request_parts([], ["fix it", "", "and test"]) == UserRequestParts(
        latest="fix it\n\nand test",
        source=UserRequestSource.RUN_PROMPTS,
        run_prompts=("fix it", "and test"),
    )


def test_a_conversation_request_keeps_the_run_prompts() -> None:
    parts = user_request_parts([user("delete the build folder")], ["p1"])
    assert parts == UserRequestParts(latest="delete the build folder", run_prompts=("p1",))


def test_a_reply_as_long_as_the_bound_is_read_on_its_own() -> None:
    answer = "y" * SHORT_REPLY_CHARS
    assert reply_to(user("req"), said("Proceed?"), user(answer)) is None
    assert reply_to(user("req"), said("Proceed?"), user(answer[1:])) is not None


def test_two_user_messages_in_a_row_have_no_question() -> None:
    assert reply_to(user("do x"), user("yes")) is None


def test_a_real_user_message_between_the_question_and_the_reply_ends_the_walk() -> None:
    assert reply_to(user("req"), said("Proceed?"), user("other"), user("yes")) is None


def test_a_summary_between_the_question_and_the_reply_ends_the_walk() -> None:
    history = (user("req"), said("Proceed?"), user(f"{SUMMARY_PREFIX}\n- x"), user("yes"))
    assert reply_to(*history) is None


def test_a_loop_marker_between_the_question_and_the_reply_is_stepped_over() -> None:
    history = (user("first"), user("req"), said("Proceed?"), MARKER, user("yes"))
    assert reply_to(*history) == ReplyContext(question="Proceed?", earlier_request="req")


def test_the_request_is_looked_for_message_by_message_past_markers_and_replies() -> None:
    history = (user("req"), said("earlier talk"), MARKER, said("Proceed?"), user("yes"))
    assert reply_to(*history) == ReplyContext(question="Proceed?", earlier_request="req")


def test_a_question_with_nothing_real_before_it_has_no_request() -> None:
    assert reply_to(MARKER, said("Proceed?"), user("yes")) is None


def test_a_summary_before_the_question_ends_the_search_for_the_request() -> None:
    history = (user("old"), user(f"{SUMMARY_PREFIX}\n- x"), said("Proceed?"), user("yes"))
    assert reply_to(*history) is None


def test_the_request_one_message_past_a_marker_is_found() -> None:
    history = (user("req"), MARKER, said("Proceed?"), user("yes"))
    assert reply_to(*history) == ReplyContext(question="Proceed?", earlier_request="req")
