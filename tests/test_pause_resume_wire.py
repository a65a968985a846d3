"""A paused history, and the resume's, as every wire protocol's request body would carry it.

Core checks a paused history against the transcript rules every API shares
(``validate_transcript``); this builds the actual request body of each protocol from it
and checks that protocol's own pairing rule: every tool call is answered, once, where
that API wants the answer, and the held call's placeholder goes as an error where the
protocol can say so. It uses the providers' request builders (no server: the bodies are
the point, not the transport).
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import Any

import pytest

from yoagent.core import (
    Agent,
    Allow,
    ApiProtocol,
    AssistantMessage,
    Defer,
    Deny,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolCallRequest,
    ToolDecision,
    ToolExecution,
    tool,
)
from yoagent.core.context import context_messages
from yoagent.core.extension import HELD_RESULT
from yoagent.core.provider import Message, StreamConfig, validate_transcript
from yoagent.providers._anthropic_request import build_request_body as anthropic_body
from yoagent.providers._bedrock_request import build_request_body as bedrock_body
from yoagent.providers._completions_request import build_request_body as completions_body
from yoagent.providers._gemini_request import build_request_body as gemini_body
from yoagent.providers._responses_request import build_request_body as responses_body

SKIPPED_FOR_STEERING = "Skipped: the user sent a new message before this tool ran."

Answer = tuple[str, str, bool | None]
"""What a wire says of a tool call's answer: the call (its id; Gemini pairs by tool
name), the text answering it, and whether it is marked an error (``None`` where the
protocol has no such mark)."""
Expected = tuple[str, str, str, bool]
"""A call's id, its tool's name, the text answering it, whether that is an error."""


@tool
async def read(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


@tool
async def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def defer_deletes(request: ToolCallRequest) -> ToolDecision:
    return Defer("needs approval") if request.tool_name == "delete" else Allow()


def agent_on(provider: MockProvider, **options: Any) -> Agent:
    return Agent.from_provider(
        provider,
        ModelConfig.mock(),
        tools=[read, delete],
        tool_middleware=[defer_deletes],
        **options,
    )


def two_calls(first: str, second: str) -> AssistantMessage:
    """A reply calling ``first`` (id c1, path a) and ``second`` (id c2, path b)."""
    return AssistantMessage(
        content=[
            ToolCall(id="c1", name=first, arguments={"path": "a"}),
            ToolCall(id="c2", name=second, arguments={"path": "b"}),
        ],
        stop_reason=StopReason.TOOL_USE,
    )


async def paused_parallel() -> list[Message]:
    """read(c1) ran beside delete(c2), which is held."""
    agent = agent_on(MockProvider([two_calls("read", "delete")]))
    await agent.prompt("tidy up")
    assert agent.pending is not None and agent.pending.call_ids == ["c2"]
    return context_messages(agent.messages)


async def paused_sequential(*, steered: bool) -> list[Message]:
    """delete(c1) held, read(c2) queued behind it; or, ``steered``, skipped for a steering
    message that follows them."""
    agent = agent_on(
        MockProvider([two_calls("delete", "read")]), tool_execution=ToolExecution.SEQUENTIAL
    )
    if steered:
        agent.steer("and be quick")
    await agent.prompt("tidy up")
    assert agent.pending is not None
    assert agent.pending.call_ids == (["c1"] if steered else ["c1", "c2"])
    messages = context_messages(agent.messages)
    assert (messages[-1].text == "and be quick") is steered
    return messages


async def paused_queued() -> list[Message]:
    return await paused_sequential(steered=False)


async def paused_steered() -> list[Message]:
    return await paused_sequential(steered=True)


async def resumed() -> list[Message]:
    """The request the resume sends: c2's denial in its placeholder's place."""
    done = AssistantMessage(content=[TextContent(text="done")])
    provider = MockProvider([two_calls("read", "delete"), done])
    agent = agent_on(provider)
    await agent.prompt("tidy up")
    await agent.resume({"c2": Deny("keep b")})
    return list(provider.requests[-1].messages)


HISTORIES: dict[str, tuple[Callable[[], Any], list[Expected]]] = {
    "paused": (
        paused_parallel,
        [("c1", "read", "contents of a", False), ("c2", "delete", HELD_RESULT, True)],
    ),
    "paused-queued": (
        paused_queued,
        [("c1", "delete", HELD_RESULT, True), ("c2", "read", HELD_RESULT, True)],
    ),
    "paused-steered": (
        paused_steered,
        [("c1", "delete", HELD_RESULT, True), ("c2", "read", SKIPPED_FOR_STEERING, True)],
    ),
    "resumed": (
        resumed,
        [
            ("c1", "read", "contents of a", False),
            ("c2", "delete", "Tool call denied: keep b", True),
        ],
    ),
}


# --- each protocol's pairing rule ---------------------------------------------------------


def _alternating(messages: list[dict[str, Any]], assistant: str) -> None:
    roles = [m["role"] for m in messages]
    assert roles[0] == "user", roles
    assert all(a != b for a, b in pairwise(roles)), roles
    assert set(roles) <= {"user", assistant}, roles


def anthropic_answers(body: dict[str, Any]) -> list[Answer]:
    """Messages API: each ``tool_use`` answered by a ``tool_result`` at the start of the
    very next (user) message, once."""
    messages: list[dict[str, Any]] = body["messages"]
    _alternating(messages, "assistant")
    answers: list[Answer] = []
    for index, message in enumerate(messages):
        calls = [b["id"] for b in message["content"] if b["type"] == "tool_use"]
        if not calls:
            continue
        following = messages[index + 1]["content"]
        results = following[: len(calls)]
        assert [r["type"] for r in results] == ["tool_result"] * len(calls), following
        assert sorted(r["tool_use_id"] for r in results) == sorted(calls)
        for result in results:
            text = "\n".join(part["text"] for part in result.get("content", []))
            answers.append((result["tool_use_id"], text, result["is_error"]))
    return answers


def bedrock_answers(body: dict[str, Any]) -> list[Answer]:
    """Converse: each ``toolUse`` answered by a ``toolResult`` in the next message, once."""
    messages: list[dict[str, Any]] = body["messages"]
    _alternating(messages, "assistant")
    answers: list[Answer] = []
    for index, message in enumerate(messages):
        calls = [b["toolUse"]["toolUseId"] for b in message["content"] if "toolUse" in b]
        if not calls:
            continue
        following = messages[index + 1]["content"]
        results = [b["toolResult"] for b in following[: len(calls)] if "toolResult" in b]
        assert sorted(r["toolUseId"] for r in results) == sorted(calls), following
        for result in results:
            text = "\n".join(part["text"] for part in result["content"])
            answers.append((result["toolUseId"], text, result["status"] == "error"))
    return answers


def completions_answers(body: dict[str, Any]) -> list[Answer]:
    """Chat Completions: an assistant message's ``tool_calls`` are followed at once by one
    ``tool`` message per call."""
    messages: list[dict[str, Any]] = body["messages"]
    answers: list[Answer] = []
    for index, message in enumerate(messages):
        if message["role"] == "tool":
            previous = messages[index - 1]
            assert previous["role"] in {"tool", "assistant"}, "a tool message out of place"
        calls = [c["id"] for c in message.get("tool_calls", [])]
        if not calls:
            continue
        results = messages[index + 1 : index + 1 + len(calls)]
        assert [r["role"] for r in results] == ["tool"] * len(calls), results
        assert sorted(r["tool_call_id"] for r in results) == sorted(calls)
        answers += [(r["tool_call_id"], r["content"], None) for r in results]
    return answers


def responses_answers(body: dict[str, Any]) -> list[Answer]:
    """Responses: each ``function_call`` has one ``function_call_output`` with its
    ``call_id`` after it, and no output answers a call that was not made."""
    items: list[dict[str, Any]] = body["input"]
    made: list[str] = []
    answers: list[Answer] = []
    for item in items:
        if item.get("type") == "function_call":
            made.append(item["call_id"])
        elif item.get("type") == "function_call_output":
            assert item["call_id"] in made, f"{item['call_id']} answers no earlier call"
            answers.append((item["call_id"], item["output"], None))
    assert sorted(made) == sorted(call_id for call_id, _, _ in answers)
    return answers


def gemini_answers(body: dict[str, Any]) -> list[Answer]:
    """Gemini: a model turn's ``functionCall`` parts are answered by as many
    ``functionResponse`` parts, first in the next (user) turn, by name in order."""
    contents: list[dict[str, Any]] = body["contents"]
    _alternating(contents, "model")
    answers: list[Answer] = []
    for index, content in enumerate(contents):
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if not calls:
            continue
        following = contents[index + 1]["parts"][: len(calls)]
        responses = [p["functionResponse"] for p in following if "functionResponse" in p]
        assert [r["name"] for r in responses] == [c["name"] for c in calls], following
        for response in responses:
            outcome = response["response"]
            text = outcome.get("error", outcome.get("output"))
            answers.append((response["name"], text, "error" in outcome))
    return answers


def model_for(api: ApiProtocol, model_id: str) -> ModelConfig:
    return ModelConfig(api=api, provider="test", id=model_id, base_url="http://127.0.0.1:9")


Wire = tuple[
    Callable[[StreamConfig], dict[str, Any]],  # the request body for a config
    ModelConfig,
    Callable[[dict[str, Any]], list[Answer]],  # the answers, its pairing rule checked
]

WIRES: dict[str, Wire] = {
    "anthropic_messages": (
        anthropic_body,
        model_for(ApiProtocol.ANTHROPIC_MESSAGES, "claude-x"),
        anthropic_answers,
    ),
    "bedrock_converse_stream": (
        bedrock_body,
        model_for(ApiProtocol.BEDROCK_CONVERSE_STREAM, "anthropic.claude-x"),
        bedrock_answers,
    ),
    "openai_completions": (
        lambda config: completions_body(config),
        model_for(ApiProtocol.OPENAI_COMPLETIONS, "gpt-x"),
        completions_answers,
    ),
    "openai_responses": (
        lambda config: responses_body(config, ApiProtocol.OPENAI_RESPONSES),
        model_for(ApiProtocol.OPENAI_RESPONSES, "gpt-x"),
        responses_answers,
    ),
    "azure_openai_responses": (
        lambda config: responses_body(config, ApiProtocol.AZURE_OPENAI_RESPONSES),
        model_for(ApiProtocol.AZURE_OPENAI_RESPONSES, "gpt-x"),
        responses_answers,
    ),
    "google_generative_ai": (
        lambda config: gemini_body(config, ApiProtocol.GOOGLE_GENERATIVE_AI),
        model_for(ApiProtocol.GOOGLE_GENERATIVE_AI, "gemini-x"),
        gemini_answers,
    ),
    "google_vertex": (
        lambda config: gemini_body(config, ApiProtocol.GOOGLE_VERTEX),
        model_for(ApiProtocol.GOOGLE_VERTEX, "gemini-x"),
        gemini_answers,
    ),
}


def test_every_protocol_is_checked() -> None:
    assert set(WIRES) == {protocol.value for protocol in ApiProtocol}


@pytest.mark.parametrize("protocol", list(WIRES))
@pytest.mark.parametrize("history", list(HISTORIES))
async def test_a_paused_and_a_resumed_history_pair_every_call_on_the_wire(
    history: str, protocol: str
) -> None:
    make, expected = HISTORIES[history]
    messages: list[Message] = await make()
    validate_transcript(messages)
    build, model, answers_of = WIRES[protocol]
    body = build(StreamConfig(model=model, system_prompt="Be brief.", messages=messages))

    answers = answers_of(body)

    by_name = protocol.startswith("google")
    marks = protocol not in {"openai_completions", "openai_responses", "azure_openai_responses"}
    assert answers == [
        (name if by_name else call_id, text, is_error if marks else None)
        for call_id, name, text, is_error in expected
    ]
