"""The AG-UI endpoint driven by the protocol's official client (@ag-ui/client, in Node) over
real HTTP on loopback, with the scripted model server behind the agent."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from ui_model_server import ModelServer
from ui_testing import Ends, agent_factory, run_client, serve, wait_until

from yoagent.core import AssistantMessage, ToolResultMessage, UserMessage
from yoagent.core.extension import CANCELLED_MARKER
from yoagent.ui import AgUiEndpoint, MemoryThreadStore


@pytest.fixture
def endpoint(model_server: ModelServer, ends: Ends, store: MemoryThreadStore) -> AgUiEndpoint:
    return AgUiEndpoint(agent_factory(model_server.url, ends), store=store)


@pytest.fixture
def url(endpoint: AgUiEndpoint) -> Iterator[str]:
    with serve(endpoint) as base:
        yield base + "/"


def types(events: list[dict[str, Any]]) -> list[str]:
    return [event["type"] for event in events]


def test_streamed_text_with_reasoning(url: str) -> None:
    got = run_client("agui.mjs", url, "text")
    assert got["error"] is None
    kinds = types(got["events"])
    assert kinds[0] == "RUN_STARTED" and kinds[-1] == "RUN_FINISHED"
    assert kinds.index("REASONING_START") < kinds.index("TEXT_MESSAGE_START")
    deltas = [e["delta"] for e in got["events"] if e["type"] == "TEXT_MESSAGE_CONTENT"]
    assert deltas == ["Hel", "lo there", "!"]
    finished = got["events"][-1]
    assert finished["outcome"] == {"type": "success"}
    assert finished["result"] == "Hello there!"
    assert finished["usage"][0]["inputTokens"] == 11 and finished["usage"][0]["outputTokens"] == 7
    assistant = [m for m in got["messages"] if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == ["Hello there!"]
    reasoning = [m for m in got["messages"] if m["role"] == "reasoning"]
    assert [m["content"] for m in reasoning] == ["Let me think."]


def test_tool_call_with_its_result(url: str) -> None:
    got = run_client("agui.mjs", url, "tool")
    assert got["error"] is None
    kinds = types(got["events"])
    for kind in ("TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"):
        assert kind in kinds
    roles = [m["role"] for m in got["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    call = got["messages"][1]["toolCalls"][0]
    assert call["function"]["name"] == "get_weather"
    assert call["function"]["arguments"] == '{"city": "Paris"}'
    assert got["messages"][2]["content"] == "Sunny in Paris"
    assert got["messages"][3]["content"] == "Result: Sunny in Paris"


def test_a_second_run_continues_the_stored_thread(url: str, store: MemoryThreadStore) -> None:
    got = run_client("agui.mjs", url, "conversation")
    assert got["first"]["error"] is None and got["second"]["error"] is None
    assert [m["role"] for m in got["messages"]] == [
        "user", "reasoning", "assistant", "user", "assistant", "tool", "assistant",
    ]  # fmt: skip
    assert got["messages"][-1]["content"] == "Result: Sunny in Oslo"


def test_front_end_tool_round_trip(url: str, model_server: ModelServer) -> None:
    got = run_client("agui.mjs", url, "frontend")
    first, second = got["first"], got["second"]
    assert first["error"] is None and second["error"] is None
    outcome = first["events"][-1]["outcome"]
    assert outcome["type"] == "success" and len(outcome["pendingToolCallIds"]) == 1
    assert "TOOL_CALL_RESULT" not in types(first["events"])  # the browser answers it
    assert got["asked"] == {"question": "Blue or red?"}
    assert second["events"][-1]["outcome"] == {"type": "success"}
    assert second["result"] == "Result: blue"
    # The model saw the browser's answer as the call's result, and the run went on from there.
    last_request = model_server.requests[-1]["messages"]
    assert last_request[-1] == {
        "role": "tool", "tool_call_id": outcome["pendingToolCallIds"][0], "content": "blue",
    }  # fmt: skip
    roles = [m["role"] for m in got["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]


def test_approval_interrupt_then_resume(url: str) -> None:
    got = run_client("agui.mjs", url, "approval")
    outcome = got["first"]["events"][-1]["outcome"]
    assert outcome["type"] == "interrupt"
    (interrupt,) = outcome["interrupts"]
    assert interrupt["reason"] == "tool_approval"
    assert interrupt["message"] == "deploys need a person's approval"
    assert interrupt["responseSchema"]["required"] == ["approved"]
    assert got["second"]["error"] is None
    assert got["second"]["result"] == "Result: api deployed"
    tool_results = [m for m in got["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in tool_results] == ["api deployed"]


def test_denied_approval_reaches_the_model(url: str) -> None:
    got = run_client("agui.mjs", url, "denial")
    assert got["second"]["result"] == "Result: Tool call denied: not on a Friday"


def test_state_snapshot_and_delta(url: str) -> None:
    got = run_client("agui.mjs", url, "state")
    assert got["error"] is None
    snapshot = next(e for e in got["events"] if e["type"] == "STATE_SNAPSHOT")
    assert snapshot["snapshot"] == {"count": 1, "name": "demo"}
    delta = next(e for e in got["events"] if e["type"] == "STATE_DELTA")
    assert delta["delta"] == [{"op": "replace", "path": "/count", "value": 2}]
    assert got["state"] == {"count": 2, "name": "demo"}


def test_sub_agent_events_are_nested_under_its_call(url: str) -> None:
    got = run_client("agui.mjs", url, "subagent")
    assert got["error"] is None
    events = got["events"]
    started = next(e for e in events if e["type"] == "SUBAGENT_STARTED")
    run_id = started["subagentRunId"]
    call = next(e for e in events if e["type"] == "TOOL_CALL_START" and "subagentRunId" not in e)
    assert started["name"] == "helper" and started["parentToolCallId"] == call["toolCallId"]
    inner = [e for e in events if e.get("subagentRunId") == run_id and e is not started]
    inner_kinds = types(inner)
    assert "TOOL_CALL_START" in inner_kinds and "TOOL_CALL_RESULT" in inner_kinds
    assert inner_kinds[-1] == "SUBAGENT_FINISHED"
    assert got["result"] == "Result: Result: Sunny in Rome"


def test_error_mid_run_is_a_run_error(url: str, store: MemoryThreadStore) -> None:
    got = run_client("agui.mjs", url, "error")
    kinds = types(got["events"])
    assert "TOOL_CALL_RESULT" in kinds  # the run got that far
    assert kinds[-1] == "RUN_ERROR" and "RUN_FINISHED" not in kinds
    error = got["events"][-1]
    assert "the model broke" in error["message"] and error["code"] == "api"


def test_cancel_from_the_client_ends_the_run_cancelled(
    url: str,
    endpoint: AgUiEndpoint,
    ends: Ends,
    store: MemoryThreadStore,
    model_server: ModelServer,
) -> None:
    got = run_client("agui.mjs", url, "cancel")
    assert got["ticks"] >= 3
    assert "RUN_FINISHED" not in types(got["events"])
    assert ends.finished.wait(10), "the run never ended"
    assert ends.outcomes == ["cancelled"]
    assert model_server.hung_up.wait(10), "the model request was left running"
    assert wait_until(lambda: endpoint.locks.running == 0), "the thread was never released"
    (thread_id,) = got["threadIds"]
    thread = anyio.run(store.load, thread_id)
    assert thread is not None
    assert isinstance(thread.messages[0], UserMessage)
    last = thread.messages[-1]
    assert isinstance(last, UserMessage) and last.text == CANCELLED_MARKER
    assert not any(isinstance(m, ToolResultMessage) for m in thread.messages)
    assert any(isinstance(m, AssistantMessage) for m in thread.messages)
