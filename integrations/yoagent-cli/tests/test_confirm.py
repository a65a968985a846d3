"""The confirmation middleware: who may write, edit and run commands."""

from __future__ import annotations

from typing import Any

import anyio
from cli_testing import Asker

from yoagent.cli.confirm import DECLINED, Answer, ConfirmMiddleware, describe, parse_answer
from yoagent.core import Allow, Deny, ToolCallRequest


def request(tool: str, **arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(tool_call_id=f"id-{tool}", tool_name=tool, arguments=arguments)


async def test_read_only_tools_are_never_asked_about() -> None:
    asker = Asker()
    middleware = ConfirmMiddleware(asker)
    for tool in ("read_file", "list_files", "search", "read_skill"):
        assert await middleware(request(tool, path="x")) == Allow()
    assert asker.asked == []


async def test_yes_allows_no_declines_and_shows_the_command() -> None:
    asker = Asker(Answer.YES, Answer.NO)
    middleware = ConfirmMiddleware(asker)
    assert await middleware(request("bash", command="rm -rf build")) == Allow()
    assert await middleware(request("write_file", path="a.txt", content="a\nb\n")) == Deny(DECLINED)
    assert asker.asked == ["run: rm -rf build", "write a.txt (2 lines, 4 bytes)"]


async def test_always_stops_asking_for_that_tool_only() -> None:
    asker = Asker(Answer.ALWAYS, Answer.YES)
    middleware = ConfirmMiddleware(asker)
    assert await middleware(request("edit_file", path="a", old_text="x", new_text="y")) == Allow()
    assert await middleware(request("edit_file", path="b", old_text="x", new_text="y")) == Allow()
    assert await middleware(request("bash", command="ls")) == Allow()
    assert len(asker.asked) == 2


async def test_assume_yes_never_asks() -> None:
    asker = Asker()
    middleware = ConfirmMiddleware(asker, assume_yes=True)
    assert await middleware(request("bash", command="make")) == Allow()
    assert asker.asked == []


async def test_without_a_person_guarded_calls_are_denied_with_the_way_out() -> None:
    denied: list[str] = []
    middleware = ConfirmMiddleware(None, on_denied=lambda req, reason: denied.append(req.tool_name))
    decision = await middleware(request("bash", command="make"))
    assert isinstance(decision, Deny)
    assert "--yes" in decision.reason
    assert denied == ["bash"]
    assert await ConfirmMiddleware(None, assume_yes=True)(request("bash", command="x")) == Allow()


async def test_interrupting_the_question_aborts_the_run() -> None:
    aborted: list[bool] = []
    middleware = ConfirmMiddleware(Asker(Answer.ABORT), on_abort=lambda: aborted.append(True))
    assert await middleware(request("bash", command="sleep 100")) == Deny(DECLINED)
    assert aborted == [True]


async def test_parallel_calls_ask_one_at_a_time() -> None:
    active = 0
    most = 0

    async def slow(req: ToolCallRequest, description: str) -> Answer:
        nonlocal active, most
        active += 1
        most = max(most, active)
        await anyio.sleep(0.01)
        active -= 1
        return Answer.YES

    middleware = ConfirmMiddleware(slow)
    async with anyio.create_task_group() as group:
        for index in range(3):
            group.start_soon(middleware, request("bash", command=f"echo {index}"))
    assert most == 1


def test_answers_and_descriptions() -> None:
    assert parse_answer(" Y ") is Answer.YES
    assert parse_answer("always") is Answer.ALWAYS
    assert parse_answer("") is Answer.NO
    assert parse_answer("nope") is Answer.NO
    edits = [{"old_text": "a", "new_text": "b"}, {"old_text": "c", "new_text": "d"}]
    assert describe(request("edit_file", path="m.py", edits=edits)) == "edit m.py (2 changes)"
