"""The Bedrock reply reader word for word: each in-stream exception's and error frame's text
and kind, the frames and events it ignores (each warned once), the blocks it drops, the
redacted reasoning of each block, missing usage counts, and when it says it is done."""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import Any

import pytest
from bedrock_fixtures import bedrock_config, body, delta, reasoning, text_events, usage_event
from provider_helpers import stream_config

from yoagent.core import AssistantMessage, ErrorKind, ProviderError, StopReason, Usage
from yoagent.core.provider import StreamDelta
from yoagent.core.support import reset_warn_once
from yoagent.providers._bedrock_stream import BedrockReader
from yoagent.providers._body import StreamLimits
from yoagent.providers._eventstream import encode_frame
from yoagent.providers._http_errors import KeySource

KEY = KeySource(origin="", hint="")
START: tuple[str, Mapping[str, Any]] = ("messageStart", {"role": "assistant"})
END = body([("messageStop", {"stopReason": "end_turn"}), usage_event()])


def reader(limits: StreamLimits | None = None) -> BedrockReader:
    deltas: list[StreamDelta] = []
    config = stream_config(bedrock_config())
    if limits is None:
        return BedrockReader(config, deltas.append, KEY)
    return BedrockReader(config, deltas.append, KEY, limits)


def read(*pieces: bytes) -> AssistantMessage:
    taken = reader()
    for piece in pieces:
        taken.feed(piece)
    return taken.finish()


def refused(*pieces: bytes) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        read(*pieces)
    return caught.value


def exception(name: str | None, payload: bytes) -> bytes:
    headers = {":message-type": "exception", ":content-type": "application/json"}
    if name is not None:
        headers[":exception-type"] = name
    return encode_frame(headers, payload)


def error_frame(**headers: str) -> bytes:
    return encode_frame({":message-type": "error", **headers}, b"")


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


@pytest.fixture(autouse=True)
def _fresh_warnings() -> None:
    reset_warn_once(logging.getLogger("yoagent.providers"))


# --- exceptions and errors in the stream ---------------------------------------------------


@pytest.mark.parametrize(
    ("name", "payload", "message", "kind", "status"),
    [
        ("validationException", b"not json", "validationException", ErrorKind.API, 400),
        ("throttlingException", b'{"Message": "Slow"}', "throttlingException: Slow", None, 429),
        (
            "modelStreamErrorException",
            b'{"message": "m", "originalMessage": "o"}',
            "modelStreamErrorException: m (o)",
            ErrorKind.API,
            424,
        ),
        (
            "modelStreamErrorException",
            b'{"message": "boom (inner)", "originalMessage": "inner"}',
            "modelStreamErrorException: boom (inner)",
            ErrorKind.API,
            424,
        ),
        (
            "internalServerException",
            b'{"originalMessage": "only the original"}',
            "internalServerException: only the original",
            ErrorKind.API,
            500,
        ),
        (None, b"{}", "exception", ErrorKind.API, None),
        (
            "ServiceQuotaExceededException",
            b'{"message": "quota"}',
            "ServiceQuotaExceededException: quota",
            ErrorKind.RATE_LIMITED,
            None,
        ),
    ],
    ids=["not json", "Message", "original", "original inside", "only original", "no name", "code"],
)
def test_an_exception_frame_says_its_name_message_and_original_with_its_documented_status(
    caplog: pytest.LogCaptureFixture,
    name: str | None,
    payload: bytes,
    message: str,
    kind: ErrorKind | None,
    status: int | None,
) -> None:
    with caplog.at_level(logging.DEBUG, logger="yoagent.providers"):
        error = refused(body([START]) + exception(name, payload))
    assert error.message == message
    assert error.kind is (kind or ErrorKind.RATE_LIMITED)
    assert error.status == status
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert f"exception frame in Bedrock stream: {message}" in debug


def test_an_exception_text_of_exactly_the_limit_is_kept_whole_and_a_longer_one_cut() -> None:
    name = "validationException"
    exact = "x" * (500 - len(name) - 2)
    kept = refused(exception(name, json.dumps({"message": exact}).encode()))
    assert kept.message == f"{name}: {exact}"
    cut = refused(exception(name, json.dumps({"message": exact + "y"}).encode()))
    assert cut.message == f"{name}: {exact}…"
    assert cut.status == 400


def test_an_error_frame_says_its_code_and_message_or_whichever_it_has() -> None:
    both = refused(error_frame(**{":error-code": "Oops", ":error-message": "it broke"}))
    assert (both.message, both.kind) == ("Oops: it broke", ErrorKind.API)
    assert refused(error_frame(**{":error-code": "Oops"})).message == "Oops: Oops"
    assert refused(error_frame(**{":error-message": "just text"})).message == "just text"
    assert refused(error_frame()).message == "unknown error"


# --- frames and events ignored ----------------------------------------------------------


def test_event_frames_without_a_message_type_are_read_as_events() -> None:
    events = [START, *text_events("bare")[1:]]
    untyped = b"".join(
        encode_frame({":event-type": name}, json.dumps(payload).encode())
        for name, payload in events
    )
    reply = read(untyped)
    assert reply.text == "bare"
    assert reply.stop_reason is StopReason.STOP


def test_frames_of_another_message_type_or_without_an_event_type_are_ignored_once_each(
    caplog: pytest.LogCaptureFixture,
) -> None:
    odd = b"".join(
        encode_frame(
            {":message-type": kind, ":event-type": "contentBlockDelta"},
            json.dumps({"contentBlockIndex": 0, "delta": {"text": "hidden"}}).encode(),
        )
        for kind in ("yoagent-test-kind-a", "yoagent-test-kind-b", "yoagent-test-kind-a")
    )
    nameless = encode_frame({":message-type": "event"}, b"{}")
    with caplog.at_level(logging.WARNING):
        reply = read(body([START]) + odd + nameless + body([delta(0, text="shown")]) + END)
    assert reply.text == "shown"
    assert warnings(caplog) == [
        "ignored a 'yoagent-test-kind-a' Bedrock frame",
        "ignored a 'yoagent-test-kind-b' Bedrock frame",
        "ignored a 'event' Bedrock frame",
    ]


def test_unknown_events_and_unparseable_ones_are_warned_and_message_start_is_not(
    caplog: pytest.LogCaptureFixture,
) -> None:
    broken = encode_frame({":message-type": "event", ":event-type": "contentBlockDelta"}, b"{")
    unknown = body(
        [("yoagentTestEventA", {}), ("yoagentTestEventB", {}), ("yoagentTestEventA", {})]
    )
    with caplog.at_level(logging.WARNING):
        reply = read(body([START]) + unknown + broken + body([delta(0, text="ok")]) + END)
    assert reply.text == "ok"
    assert warnings(caplog) == [
        "ignored unknown Bedrock event type 'yoagentTestEventA'",
        "ignored unknown Bedrock event type 'yoagentTestEventB'",
        "skipped an unparseable 'contentBlockDelta' event in a Bedrock stream",
    ]


def test_a_block_event_without_its_index_is_a_malformed_stream() -> None:
    error = refused(body([START, ("contentBlockDelta", {"delta": {"text": "x"}})]))
    assert error.kind is ErrorKind.API
    assert (
        error.message == "malformed stream: a Bedrock content block event has no contentBlockIndex"
    )


# --- blocks dropped -----------------------------------------------------------------------


def test_each_block_dropped_is_named_once_per_block_and_reason(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server_tool = {"toolUse": {"toolUseId": "s1", "name": "web_search", "type": "server_tool_use"}}
    events = [
        START,
        ("contentBlockStart", {"contentBlockIndex": 1, "start": server_tool}),
        ("contentBlockStart", {"contentBlockIndex": 2, "start": {"image": {}, "toolResult": {}}}),
        ("contentBlockStart", {"contentBlockIndex": 3, "start": {"toolResult": {}}}),
        delta(4, text="text"),
        delta(4, toolUse={"input": "{}"}),
        delta(4, toolUse={"input": "{}"}),
        reasoning(4, text="thought"),
        delta(5, text="more"),
        delta(5, citation={}, other={}),
        delta(5),
        reasoning(6, text="thinking"),
        delta(6, text="late text"),
        delta(6, text="late text"),
        delta(7, toolUse={"input": "{}"}),
    ]
    with caplog.at_level(logging.WARNING):
        reply = read(body(events) + END)
    assert reply.text == "textmore"
    assert warnings(caplog) == [
        "dropped a server tool call (web_search) in Bedrock content block 1",
        "dropped a image/toolResult block in Bedrock content block 2",
        "dropped a toolResult block in Bedrock content block 3",
        "dropped tool input without its toolUse start in Bedrock content block 4",
        "dropped reasoning on a text block in Bedrock content block 4",
        "dropped citation/other in Bedrock content block 5",
        "dropped an empty delta in Bedrock content block 5",
        "dropped text on a thinking block in Bedrock content block 6",
        "dropped tool input without its toolUse start in Bedrock content block 7",
    ]


def test_unknown_block_starts_are_warned_once_per_kind(caplog: pytest.LogCaptureFixture) -> None:
    events = [
        START,
        ("contentBlockStart", {"contentBlockIndex": 0, "start": {"yoagentTestB": {}, "a": {}}}),
        ("contentBlockStart", {"contentBlockIndex": 1, "start": {"yoagentTestC": {}}}),
        ("contentBlockStart", {"contentBlockIndex": 2, "start": {"yoagentTestC": {}}}),
        delta(2, text="kept"),
    ]
    with caplog.at_level(logging.WARNING):
        reply = read(body(events) + END)
    assert reply.text == "kept"
    assert warnings(caplog) == [
        "unknown Bedrock contentBlockStart member a/yoagentTestB",
        "unknown Bedrock contentBlockStart member yoagentTestC",
    ]


# --- redacted reasoning ---------------------------------------------------------------------


def test_redacted_reasoning_is_joined_per_block_and_must_be_strict_base64() -> None:
    first, second = b"\x00first", b"\xffsecond"
    events = [
        START,
        reasoning(0, redactedContent=base64.b64encode(first).decode()),
        ("contentBlockStop", {"contentBlockIndex": 0}),
        reasoning(1, redactedContent=base64.b64encode(second).decode()),
        delta(1, reasoningContent={"redactedContent": 5}),
        ("contentBlockStop", {"contentBlockIndex": 1}),
    ]
    reply = read(body(events) + END)
    assert [block.redacted for block in reply.content] == [  # type: ignore[union-attr]
        base64.b64encode(first).decode(),
        base64.b64encode(second).decode(),
    ]
    error = refused(body([START, reasoning(0, redactedContent="QUJD$")]))
    assert error.kind is ErrorKind.API
    assert error.message == "malformed stream: Bedrock redactedContent is not base64"


# --- the end of the reply -------------------------------------------------------------------


def test_feed_says_true_once_the_reply_is_complete_and_false_before() -> None:
    taken = reader()
    assert taken.feed(body(text_events("a")[:-2])) is False
    assert taken.feed(body(text_events("a")[-2:])) is True


def test_a_frame_over_the_limit_is_refused_with_the_limit_named() -> None:
    taken = reader(StreamLimits(max_event_bytes=64))
    with pytest.raises(ProviderError) as caught:
        taken.feed(body([delta(0, text="x" * 100)]))
    assert caught.value.kind is ErrorKind.API
    assert caught.value.message == (
        "the stream was refused: one frame went past 64 bytes (StreamLimits.max_event_bytes)"
    )


def test_unknown_stop_reasons_are_warned_once_each_and_read_as_stop(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        for name in ("yoagent_test_stop_a", "yoagent_test_stop_b", "yoagent_test_stop_a"):
            reply = read(body([START, delta(0, text="t"), ("messageStop", {"stopReason": name})]))
            assert reply.stop_reason is StopReason.STOP
            assert reply.error_message is None
    assert [m for m in warnings(caplog) if "stop reason" in m] == [
        "unknown Bedrock stop reason 'yoagent_test_stop_a'",
        "unknown Bedrock stop reason 'yoagent_test_stop_b'",
    ]


def test_usage_counts_missing_from_the_metadata_are_zero() -> None:
    reply = read(
        body([START, delta(0, text="t"), ("messageStop", {"stopReason": "end_turn"})])
        + body([("metadata", {"usage": {"totalTokens": 0}})])
    )
    assert reply.usage == Usage()
    assert reply.error_message is None


def test_the_end_without_message_stop_or_without_metadata_is_named(
    caplog: pytest.LogCaptureFixture,
) -> None:
    error = refused(body([START, delta(0, text="t")]))
    assert error.kind is ErrorKind.NETWORK
    assert error.message == "the stream ended early: the Bedrock stream ended before messageStop"
    with caplog.at_level(logging.WARNING):
        reply = read(body([START, delta(0, text="t"), ("messageStop", {"stopReason": "end_turn"})]))
    assert reply.usage == Usage()
    assert warnings(caplog) == [
        "the Bedrock stream ended without its metadata event: usage counted as zero"
    ]


def test_a_refusal_names_its_stop_reason_and_a_plain_stop_has_no_error() -> None:
    refusal = read(body(text_events("no", stop="guardrail_intervened")))
    assert refusal.stop_reason is StopReason.REFUSAL
    assert refusal.error_message == "Bedrock stopped the reply: guardrail_intervened"
    plain = read(body(text_events("yes")))
    assert plain.error_message is None
