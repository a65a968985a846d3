"""Gemini / Vertex stream edge cases, hand-written: streamed call arguments, cuts, refusals."""

from __future__ import annotations

import time
from typing import Any

import pytest
import respx
from provider_helpers import PROTOCOLS, replay_as, sse_response, stream_config
from stream_fixtures import GEMINI_USAGE, gemini_chunk, gemini_sse, gemini_text

from yoagent.core import (
    ApiProtocol,
    ErrorKind,
    ProviderError,
    StopReason,
    ThinkingContent,
    Usage,
)
from yoagent.providers import GoogleProvider, StreamLimits
from yoagent.providers._gemini_stream import GeminiReader
from yoagent.providers._http_errors import KeySource

GEMINI = ApiProtocol.GOOGLE_GENERATIVE_AI


def call(**fields: Any) -> dict[str, Any]:
    return {"functionCall": fields}


def piece(path: str, **value: Any) -> dict[str, Any]:
    return {"jsonPath": path, **value}


async def test_streamed_arguments_are_assembled_from_their_json_paths() -> None:
    chunks = [
        gemini_chunk([{**call(name="plan", willContinue=True), "thoughtSignature": "c2ln"}]),
        gemini_chunk(
            [
                call(
                    partialArgs=[
                        piece("$.steps[0].title", stringValue="First"),
                        piece("$.steps[0].done", boolValue=True),
                        piece("$.steps[1].title", stringValue="Sec", willContinue=True),
                    ],
                    willContinue=True,
                )
            ]
        ),
        gemini_chunk(
            [
                call(
                    partialArgs=[piece("$.steps[1].title", stringValue="o", willContinue=True)],
                    willContinue=True,
                )
            ]
        ),
        gemini_chunk(
            [
                call(
                    partialArgs=[
                        piece("$.steps[1].title", stringValue="nd"),
                        piece("$.budget", numberValue=2.5),
                        piece("$['odd key']", nullValue=None),
                    ],
                    willContinue=True,
                )
            ]
        ),
        gemini_chunk([call(willContinue=True)]),
        gemini_chunk([call()]),  # the call is whole
        gemini_chunk([call(name="second", args={"x": 1})], "STOP", GEMINI_USAGE),
    ]
    message, _, _ = await replay_as(GEMINI, gemini_sse(chunks))
    signature, first, second = message.content
    assert signature == ThinkingContent(redacted="c2ln", redacted_protocol=GEMINI)
    assert (first.name, first.arguments) == (  # type: ignore[union-attr]
        "plan",
        {
            "steps": [{"title": "First", "done": True}, {"title": "Second"}],
            "budget": 2.5,
            "odd key": None,
        },
    )
    assert (second.name, second.arguments) == ("second", {"x": 1})  # type: ignore[union-attr]
    assert first.id != second.id  # type: ignore[union-attr]
    assert message.stop_reason is StopReason.TOOL_USE


async def test_a_last_piece_without_will_continue_ends_the_call() -> None:
    chunks = [
        gemini_chunk([call(name="write", willContinue=True)]),
        gemini_chunk([call(partialArgs=[piece("$.items[0]", numberValue=1)])]),
        gemini_chunk([{"text": ""}], "STOP", GEMINI_USAGE),
    ]
    message, _, _ = await replay_as(GEMINI, gemini_sse(chunks))
    assert [c.arguments for c in message.tool_calls] == [{"items": [1]}]


@pytest.mark.parametrize(
    "hostile",
    [
        piece("$.items[99999999]", stringValue="x"),  # would grow a list without bound
        piece("$.items[1]", stringValue="x"),  # not the next item of the list
        piece("$.items[" + "9" * 5000 + "]", stringValue="x"),  # int() refuses 4300+ digits
        piece("$" + "[0]" * 65, stringValue="x"),  # too deep
        piece("items", stringValue="x"),  # not a JSON path
        piece("$" + ".a" * 100, stringValue="x"),  # too deep
        piece("$.a"),  # no value
    ],
)
async def test_unusable_streamed_arguments_make_an_error_and_the_call_never_runs(
    hostile: dict[str, Any],
) -> None:
    chunks = [
        gemini_chunk([call(name="write", willContinue=True)]),
        gemini_chunk([call(partialArgs=[hostile], willContinue=True)]),
        gemini_chunk([call()], "STOP", GEMINI_USAGE),
    ]
    message, _, _ = await replay_as(GEMINI, gemini_sse(chunks))
    assert message.tool_calls == []
    assert message.stop_reason is StopReason.ERROR
    assert "write" in (message.error_message or "")


async def test_list_items_are_streamed_in_order_or_the_call_is_unusable() -> None:
    # An index past the end of its list grew the list with nulls: a few KB of pieces
    # jumping to index 10,000 at 64 levels built hundreds of MB of arguments.
    pieces = [piece("$.a[0]", numberValue=1), piece("$.a[1]", numberValue=2)]
    in_order = [
        gemini_chunk([call(name="write", partialArgs=pieces, willContinue=True)]),
        gemini_chunk([call(partialArgs=[piece("$.a[0]", numberValue=3)])], "STOP"),
    ]
    message, _, _ = await replay_as(GEMINI, gemini_sse(in_order))
    assert [c.arguments for c in message.tool_calls] == [{"a": [3, 2]}]
    gap = [
        gemini_chunk([call(name="write", partialArgs=pieces, willContinue=True)]),
        gemini_chunk([call(partialArgs=[piece("$.a[3]", numberValue=4)])], "STOP"),
    ]
    message, _, _ = await replay_as(GEMINI, gemini_sse(gap))
    assert message.tool_calls == []
    assert message.stop_reason is StopReason.ERROR


async def test_streamed_arguments_past_the_event_limit_make_the_call_unusable() -> None:
    def stream(pieces: int) -> bytes:
        chunks = [gemini_chunk([call(name="write", willContinue=True)])]
        chunks += [
            gemini_chunk(
                [call(partialArgs=[piece(f"$.k{i}", stringValue="x" * 100)], willContinue=True)]
            )
            for i in range(pieces)
        ]
        return gemini_sse([*chunks, gemini_chunk([call()], "STOP")])

    limits = StreamLimits(max_event_bytes=4096)
    config = stream_config(PROTOCOLS[GEMINI].model())
    for pieces, usable in ((20, True), (60, False)):  # ≈ 2.2 KB, ≈ 6.6 KB of arguments
        async with respx.mock() as mock, GoogleProvider(config.model, limits=limits) as provider:
            mock.post(PROTOCOLS[GEMINI].url()).mock(return_value=sse_response(stream(pieces)))
            message = await provider.stream(config, lambda d: None)
        assert (len(message.tool_calls) == 1) is usable
        assert (message.stop_reason is StopReason.ERROR) is not usable


def test_a_long_string_argument_is_assembled_in_linear_time() -> None:
    # Each piece of a streamed string was appended by copying the whole string so far.
    def assemble(pieces: int) -> float:
        reader = GeminiReader(
            stream_config(PROTOCOLS[GEMINI].model()), lambda d: None, KeySource("", ""), GEMINI
        )
        chunk = {"functionCall": {"partialArgs": [piece("$.text", stringValue="0123456789")]}}
        chunk["functionCall"]["partialArgs"][0]["willContinue"] = True
        chunk["functionCall"]["willContinue"] = True
        reader._part({"functionCall": {"name": "write", "willContinue": True}})
        started = time.process_time()  # CPU: a loaded machine's other work does not count
        for _ in range(pieces):
            reader._part(chunk)
        reader._part({"functionCall": {}})
        elapsed = time.process_time() - started
        [call] = reader.builder.finish(
            stop_reason=StopReason.STOP, usage=Usage(), model="m", provider="p"
        ).tool_calls
        assert len(call.arguments["text"]) == 10 * pieces
        return elapsed

    small = min(assemble(10_000) for _ in range(3))
    large = min(assemble(80_000) for _ in range(3))
    assert large / small < 20  # linear: about 8; copying each time: 30 and more


async def test_a_call_still_streaming_at_the_token_limit_is_dropped() -> None:
    chunks = [
        gemini_chunk([{"text": "Writing."}]),
        gemini_chunk([call(name="write", willContinue=True)]),
        gemini_chunk([call(partialArgs=[piece("$.a", stringValue="x")], willContinue=True)]),
        gemini_chunk([], "MAX_TOKENS", GEMINI_USAGE),
    ]
    message, _, _ = await replay_as(GEMINI, gemini_sse(chunks))
    assert message.text == "Writing."
    assert message.tool_calls == []
    assert message.stop_reason is StopReason.LENGTH


@pytest.mark.parametrize("cut", [1, 2, 3])
async def test_a_stream_without_a_finish_reason_is_a_network_error(cut: int) -> None:
    with pytest.raises(ProviderError) as caught:
        await replay_as(GEMINI, gemini_sse(gemini_text()[:cut]))
    assert caught.value.kind is ErrorKind.NETWORK
    assert "finishReason" in caught.value.message


async def test_safety_stops_and_blocked_prompts_are_refusals_saying_why() -> None:
    message, _, _ = await replay_as(
        GEMINI, gemini_sse([gemini_chunk([{"text": "I"}], "SAFETY", GEMINI_USAGE)])
    )
    assert message.stop_reason is StopReason.REFUSAL
    assert "SAFETY" in (message.error_message or "")
    blocked = {"promptFeedback": {"blockReason": "PROHIBITED_CONTENT"}}
    message, _, _ = await replay_as(GEMINI, gemini_sse([blocked]))
    assert message.stop_reason is StopReason.REFUSAL
    assert "PROHIBITED_CONTENT" in (message.error_message or "")


async def test_an_in_stream_error_and_a_malformed_call_are_provider_errors() -> None:
    error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    with pytest.raises(ProviderError) as caught:
        await replay_as(GEMINI, gemini_sse([gemini_chunk([{"text": "x"}]), error]))
    assert caught.value.kind is ErrorKind.RATE_LIMITED
    malformed = gemini_chunk([], "MALFORMED_FUNCTION_CALL")
    with pytest.raises(ProviderError) as caught:
        await replay_as(GEMINI, gemini_sse([malformed]))
    assert caught.value.kind is ErrorKind.API
