"""The sub-agent tool's edges: each way a child's run becomes an error result, word for
word, and what a stopped child returns; the tool's construction (its defaults, the bound on
``max_depth``, a bad tool named, everything ``from_config`` passes on) and its builders;
the child's system prompt with shared state; the depth limit's text; what the parent's
stream hears while the child runs. (Added from mutation testing: each pins a behaviour a
surviving mutant changed.)"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEvent,
    MockProvider,
    ModelConfig,
    ProgressMessage,
    ToolContext,
    ToolError,
    ToolExecutionUpdate,
    ToolResultMessage,
    tool,
)
from yoagent.core._loop.settings import RunSettings
from yoagent.core._shared_state.store import SharedState
from yoagent.core._sub_agent import DEFAULT_MAX_DEPTH, SubAgentTool, _answer  # pyright: ignore[reportPrivateUsage]
from yoagent.core._types.content import TextContent
from yoagent.core._types.limits import ExecutionLimits
from yoagent.core._types.messages import AssistantMessage, StopReason, UserMessage
from yoagent.core._types.outcome import RunEnd, RunOutcome, StopCause
from yoagent.core.provider import ProviderRegistry

MARKER = "[Agent stopped: turn limit reached]"


def _reply(
    text: str = "", stop: StopReason = StopReason.STOP, error: str | None = None
) -> AssistantMessage:
    content = [TextContent(text=text)] if text else []
    return AssistantMessage(content=content, stop_reason=stop, error_message=error)


def _error(messages: list[Any], outcome: RunOutcome) -> str:
    with pytest.raises(ToolError) as raised:
        _answer(messages, outcome)
    return str(raised.value)


COMPLETED = RunOutcome(end=RunEnd.COMPLETED)
STOPPED = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.TURN_LIMIT, reason="turn limit reached")


# -- the child's answer -------------------------------------------------------------------------


def test_a_child_cancelled_with_a_reply_or_without_is_an_error() -> None:
    cancelled = "the sub-agent was cancelled before it finished"
    assert _error([_reply("half")], RunOutcome(end=RunEnd.CANCELLED)) == cancelled
    assert _error([_reply("half", StopReason.ABORTED)], COMPLETED) == cancelled
    assert _error([UserMessage.from_text("task")], COMPLETED) == cancelled


def test_a_child_that_failed_says_why_or_that_it_is_unknown() -> None:
    assert _error([_reply(stop=StopReason.ERROR, error="boom")], COMPLETED) == (
        "the sub-agent failed: boom"
    )
    assert _error([_reply(stop=StopReason.ERROR)], COMPLETED) == (
        "the sub-agent failed: unknown error"
    )


def test_a_child_that_refused_gives_its_text_or_reason() -> None:
    refused = StopReason.REFUSAL
    assert _error([_reply("no thanks", refused, "policy")], COMPLETED) == (
        "the sub-agent refused: no thanks"
    )
    assert _error([_reply("", refused, "policy")], COMPLETED) == "the sub-agent refused: policy"
    assert _error([_reply("", refused)], COMPLETED) == "the sub-agent refused:"


def test_a_child_stopped_for_looping_is_an_error_with_the_marker() -> None:
    looped = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.LOOP, reason="repeated tool calls")
    assert _error([_reply("x")], looped) == (
        "the sub-agent stopped: [Agent stopped: repeated tool calls]"
    )


def test_a_child_stopped_by_a_limit_returns_its_text_and_the_marker() -> None:
    assert _answer([_reply("so far")], STOPPED).text == f"so far\n\n{MARKER}"
    assert _answer([_reply("")], STOPPED).text == MARKER
    assert _answer([_reply("done")], COMPLETED).text == "done"


def test_a_child_stopped_without_a_reason_or_a_reply_says_so() -> None:
    bare = RunOutcome(end=RunEnd.STOPPED, cause=StopCause.BUDGET)
    assert _error([], bare) == "the sub-agent stopped before answering: [Agent stopped: ]"


# -- construction and builders ------------------------------------------------------------------


def _tool(**options: Any) -> SubAgentTool:
    return SubAgentTool(
        "helper", "Helps.", provider=MockProvider(), model=ModelConfig.mock(), **options
    )


def test_a_sub_agent_has_no_system_prompt_by_default_and_takes_depth_one() -> None:
    helper = _tool(max_depth=1)
    assert (helper.system_prompt, helper.max_depth, helper.shared_state) == ("", 1, None)
    assert _tool().max_depth == DEFAULT_MAX_DEPTH
    assert helper.with_max_depth(1) is helper and helper.max_depth == 1
    assert helper.with_max_depth(3).max_depth == 3


@pytest.mark.parametrize("build", ["init", "builder"])
def test_a_depth_under_one_is_refused_by_name(build: str) -> None:
    with pytest.raises(ValueError, match=r"^max_depth must be >= 1, got 0$"):
        _tool(max_depth=0) if build == "init" else _tool().with_max_depth(0)


def test_a_bad_tool_is_named_as_one_of_the_sub_agents_tools() -> None:
    with pytest.raises(TypeError, match=r"^SubAgentTool tools\[0\] is not a tool: 42"):
        _tool(tools=[42])


def test_settings_and_shared_state_given_are_kept() -> None:
    limits = ExecutionLimits(max_turns=3)
    state = SharedState()
    helper = _tool(settings=RunSettings(limits=limits), shared_state=state)
    assert helper.settings.limits == limits
    assert helper.shared_state is state


def test_context_and_tree_extensions_are_set_by_their_builders() -> None:
    class Quiet:
        name = "quiet"

        def start_run(self, run: object) -> None:
            return None

    helper = _tool()
    assert helper.with_context("off") is helper
    assert helper.settings.context == "off"
    extension = Quiet()
    assert helper.with_tree_extension(extension) is helper  # type: ignore[arg-type]
    assert helper.settings.tree_extensions == (extension,)


def test_from_config_passes_everything_on() -> None:
    provider = MockProvider()
    registry = ProviderRegistry(load_entry_points=False)
    config = ModelConfig.mock()
    registry.register(config.api, lambda c: provider)
    state = SharedState()
    limits = ExecutionLimits(max_turns=4)

    @tool
    async def noop() -> str:
        """Nothing."""
        return ""

    helper = SubAgentTool.from_config(
        "helper",
        "Helps.",
        config,
        registry=registry,
        system_prompt="Be brief.",
        tools=[noop],
        settings=RunSettings(limits=limits),
        shared_state=state,
        max_depth=5,
    )
    assert (helper.name, helper.description) == ("helper", "Helps.")
    assert helper.provider is provider and helper.model == config
    assert helper.system_prompt == "Be brief."
    assert [t.name for t in helper.tools] == ["noop"]
    assert helper.settings.limits == limits
    assert helper.shared_state is state and helper.max_depth == 5
    bare = SubAgentTool.from_config("b", "B.", config, registry=registry)
    assert bare.system_prompt == ""


async def test_with_shared_state_and_no_prompt_the_childs_prompt_is_the_summary() -> None:
    state = SharedState()
    helper = _tool(shared_state=state)
    context = await helper._context()  # pyright: ignore[reportPrivateUsage]
    assert context.system_prompt == await state.summary()


# -- the call -----------------------------------------------------------------------------------


async def test_the_depth_limit_is_explained_in_full() -> None:
    child = MockProvider([tool_reply(call("helper", "inner", task="again")), text_reply("ok")])
    helper = SubAgentTool("helper", "Helps.", provider=child, model=ModelConfig.mock(), max_depth=1)
    helper.tools.append(helper)
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("helper", "top", task="go")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[helper],
    )
    await parent.prompt("go")
    refused = [m for r in child.requests for m in r.messages if isinstance(m, ToolResultMessage)]
    assert refused[0].text == (
        "helper: delegation is limited to 1 level(s) below the top-level run and this one "
        "is at the limit; do the task yourself"
    )


async def test_the_parent_hears_the_childs_text_and_its_tool_calls_as_they_come() -> None:
    @tool
    async def lookup(key: str) -> str:
        """Look a key up."""
        return "42"

    child = MockProvider([tool_reply(call("lookup", "c1", key="k")), text_reply("k is 42")])
    helper = SubAgentTool(
        "helper", "Helps.", provider=child, model=ModelConfig.mock(), tools=[lookup]
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("helper", "top", task="find k")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[helper],
    )
    heard: list[AgentEvent] = []
    await parent.prompt("go", on_event=heard.append)
    updates = [
        "".join(c.text for c in e.content if isinstance(c, TextContent))
        for e in heard
        if isinstance(e, ToolExecutionUpdate) and e.tool_call_id == "top"
    ]
    assert "k is 42" in updates
    assert [e.text for e in heard if isinstance(e, ProgressMessage)] == ["helper → lookup"]


@tool
async def dump() -> str:
    """Prints a lot."""
    return "".join(f"line {i}\n" for i in range(2_000))


@pytest.mark.parametrize("with_state", [True, False])
async def test_a_childs_output_cut_short_is_stashed_in_its_shared_state_if_it_has_one(
    with_state: bool, caplog: pytest.LogCaptureFixture
) -> None:
    state = SharedState() if with_state else None
    child = MockProvider([tool_reply(call("dump", "c1")), text_reply("dumped")])
    helper = SubAgentTool(
        "helper",
        "Helps.",
        provider=child,
        model=ModelConfig.mock(),
        tools=[dump],
        shared_state=state,
        max_tool_output_chars=500,
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("helper", "top", task="dump")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[helper],
    )
    await parent.prompt("go")
    (cut,) = [m for m in child.requests[1].messages if isinstance(m, ToolResultMessage)]
    if state is not None:
        assert "the full output is in shared state under 'tool-output-c1'" in cut.text
        assert await state.get("tool-output-c1") == "".join(f"line {i}\n" for i in range(2_000))
    else:
        assert "characters truncated ...]" in cut.text
        assert "shared state" not in cut.text
    assert not [r for r in caplog.records if "could not stash" in r.getMessage()]


async def test_the_parents_cancel_reaches_the_childs_tools_through_their_token() -> None:
    """A child's tool that shields itself from cancellation still learns of the parent's
    abort at once: its token is a child of the parent call's."""
    started = anyio.Event()
    told: list[bool] = []

    @tool
    async def patient(ctx: ToolContext) -> str:
        """Waits to be told to stop."""
        started.set()
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await ctx.cancel.wait()
        told.append(ctx.cancel.cancelled)
        return "stopped"

    child = MockProvider([tool_reply(call("patient", "p1")), text_reply("never")])
    helper = SubAgentTool(
        "helper", "Helps.", provider=child, model=ModelConfig.mock(), tools=[patient]
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("helper", "top", task="wait")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[helper],
    )

    async def abort_when_started() -> None:
        await started.wait()
        parent.abort()

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            group.start_soon(abort_when_started)
            await parent.prompt("go")
    assert told == [True]
