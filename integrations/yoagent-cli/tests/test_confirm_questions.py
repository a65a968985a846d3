"""The confirmation middleware in-process: each question's text when arguments are missing
or odd, the request the person is shown, who is told about a denial, and the short answers."""

from __future__ import annotations

from typing import Any

import pytest
from cli_testing import Asker

from yoagent.cli.confirm import (
    DECLINED,
    NON_INTERACTIVE,
    Answer,
    ConfirmMiddleware,
    Reply,
    declined,
    describe,
    parse_answer,
)
from yoagent.core import Allow, Deny, ToolCallRequest


def request(tool: str, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(tool_call_id=f"id-{tool}", tool_name=tool, arguments=arguments)


@pytest.mark.parametrize(
    ("call", "question"),
    [
        (request("bash"), "run: "),
        (request("write_file"), "write ? (0 lines, 0 bytes)"),
        (request("write_file", path="a.txt", content="one"), "write a.txt (1 line, 3 bytes)"),
        (request("write_file", path="a.txt", content="a\nb"), "write a.txt (2 lines, 3 bytes)"),
        (request("write_file", path="a.txt", content="é\n"), "write a.txt (1 line, 3 bytes)"),
        (request("edit_file", path="m.py", old_text="x", new_text="y"), "edit m.py (1 change)"),
        (request("edit_file", path="m.py", edits=[{"old_text": "x", "new_text": "y"}]),
         "edit m.py (1 change)"),
        (request("edit_file", path="m.py", edits=[]), "edit m.py (0 changes)"),
        (request("edit_file"), "edit ? (1 change)"),
    ],
)  # fmt: skip
def test_a_question_says_what_the_call_does_even_with_arguments_missing(
    call: ToolCallRequest, question: str
) -> None:
    assert describe(call) == question


def test_an_mcp_tools_question_shows_its_arguments_as_readable_json() -> None:
    call = request("notes_add", title="café", tags={"b"}, count=2)
    assert describe(call) == (
        'call notes_add with {\n  "title": "café",\n  "tags": "{\'b\'}",\n  "count": 2\n}'
    )


def test_declined_without_a_reason_is_the_plain_refusal() -> None:
    assert declined() == DECLINED == "the user declined"
    assert declined("  not   that\nfile ") == "the user declined; they said: not that file"


async def test_the_person_is_shown_the_call_itself() -> None:
    seen: list[ToolCallRequest] = []

    async def ask(req: ToolCallRequest, description: str) -> Answer:
        seen.append(req)
        return Answer.YES

    call = request("bash", command="make")
    assert await ConfirmMiddleware(ask)(call) == Allow()
    assert seen == [call]


async def test_a_denial_without_a_person_names_the_tool() -> None:
    decision = await ConfirmMiddleware(None)(request("write_file", path="a", content=""))
    assert decision == Deny(NON_INTERACTIVE.format(tool="write_file"))
    assert isinstance(decision, Deny) and decision.reason.startswith("write_file is not allowed")


async def test_a_plain_no_does_not_abort_the_run() -> None:
    aborted: list[bool] = []
    middleware = ConfirmMiddleware(Asker(Answer.NO), on_abort=lambda: aborted.append(True))
    assert await middleware(request("bash", command="ls")) == Deny(DECLINED)
    assert aborted == []


async def test_a_no_with_a_reason_tells_the_model_why() -> None:
    async def ask(req: ToolCallRequest, description: str) -> Reply:
        return Reply(Answer.NO, "use the test folder")

    decision = await ConfirmMiddleware(ask)(request("bash", command="rm x"))
    assert decision == Deny("the user declined; they said: use the test folder")


@pytest.mark.parametrize(
    ("text", "answer"),
    [("y", Answer.YES), ("YES", Answer.YES), (" a ", Answer.ALWAYS), ("A", Answer.ALWAYS),
     ("Always", Answer.ALWAYS), ("n", Answer.NO), ("ye", Answer.NO)],
)  # fmt: skip
def test_short_and_long_answers(text: str, answer: Answer) -> None:
    assert parse_answer(text) is answer
