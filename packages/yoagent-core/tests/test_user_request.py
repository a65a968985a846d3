"""user_request(): what the user asked, as approval middleware sees it."""

from __future__ import annotations

from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    Allow,
    AssistantMessage,
    ImageContent,
    MockProvider,
    ModelConfig,
    TextContent,
    ToolCallRequest,
    ToolDecision,
    UserMessage,
    tool,
)
from yoagent.core.context import COMPACTION_MARKER, SUMMARY_PREFIX
from yoagent.core.extension import (
    CANCELLED_MARKER,
    TurnContext,
    UserRequestParts,
    UserRequestSource,
)


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def said(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


def request(*messages: object, run_prompts: tuple[str, ...] = ()) -> ToolCallRequest:
    return ToolCallRequest(
        tool_call_id="c",
        tool_name="bash",
        arguments={},
        messages=tuple(messages),  # type: ignore[arg-type]
        run_prompts=run_prompts,
    )


def test_the_latest_real_user_message_is_the_request() -> None:
    parts = request(user("first"), said("ok"), user("delete the build folder")).user_request_parts()
    assert parts == UserRequestParts(latest="delete the build folder")
    assert parts.source is UserRequestSource.CONVERSATION


def test_loop_markers_are_skipped_and_a_compaction_boundary_is_never_crossed() -> None:
    history = request(user("tidy up"), said("done"), user(CANCELLED_MARKER))
    assert history.user_request() == "tidy up"
    compacted = request(user("old request"), user(f"{SUMMARY_PREFIX}\n- stuff"), said("x"))
    assert compacted.user_request() is None
    marker = request(user("old"), user(f"{COMPACTION_MARKER}3 dropped]"), said("x"))
    assert marker.user_request_parts() is None


def test_without_a_real_user_message_the_run_prompts_are_the_request() -> None:
    compacted = request(
        user(f"{SUMMARY_PREFIX}\n- earlier"), said("x"), run_prompts=("fix the tests",)
    )
    parts = compacted.user_request_parts()
    assert parts is not None and parts.latest == "fix the tests"
    assert parts.source is UserRequestSource.RUN_PROMPTS
    image_only = UserMessage(content=[ImageContent(data="", mime_type="image/png")])
    assert request(image_only, run_prompts=("see image",)).user_request() == "see image"
    assert request(image_only).user_request() is None


def test_a_short_answer_is_read_with_the_question_it_answers() -> None:
    history = request(
        user("clean the repo"),
        said("Should I also delete the `build?` folder?"),
        user("yes"),
    )
    parts = history.user_request_parts()
    assert parts is not None and parts.reply is not None
    assert parts.reply.question == "Should I also delete the `build?` folder?"
    assert parts.reply.earlier_request == "clean the repo"
    assert "clean the repo" in history.user_request()  # type: ignore[operator]
    # A question mark only inside code is not a question; a long answer stands alone.
    assert request(user("a"), said("Run `ls?`"), user("yes")).user_request_parts() == (
        UserRequestParts(latest="yes")
    )
    long = "yes, and then rebuild everything from scratch with the release flags on"
    assert request(user("a"), said("Go?"), user(long)).user_request_parts() == UserRequestParts(
        latest=long
    )


async def test_middleware_and_turn_hooks_see_the_request_the_loop_kept() -> None:
    seen: list[str | None] = []

    def gate(call_request: ToolCallRequest) -> ToolDecision:
        seen.append(call_request.user_request())
        return Allow()

    def hook(turn: TurnContext) -> list[str]:
        seen.append(turn.user_request())
        return []

    @tool
    async def step() -> str:
        """Do a step."""
        return "ok"

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("step")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[step],
        tool_middleware=[gate],
        turn_hooks=[hook],
    )
    await agent.prompt("please step once")
    assert seen == ["please step once"] * 3
