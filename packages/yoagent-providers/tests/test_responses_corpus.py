"""Every recorded Responses stream (OpenAI and Azure), replayed through the real provider.

The expected reply is read independently from the same file: the ``output`` array and
``usage`` of its terminal ``response.completed`` event, the final copy of everything the
deltas streamed. A stream that fails (``error`` / ``response.failed``) must end in the
ProviderError its code means.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import PROTOCOLS, chunks_body, corpus_params, payloads_of, replay_as

from yoagent.core import (
    ApiProtocol,
    ErrorKind,
    ProviderError,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
)

RESPONSES = (ApiProtocol.OPENAI_RESPONSES, ApiProtocol.AZURE_OPENAI_RESPONSES)


def terminal(body: bytes) -> dict[str, Any]:
    """The first terminal or failing event of the file (a file may hold several responses)."""
    for _, data in payloads_of(body):
        if data.strip() == "[DONE]":
            continue
        event = json.loads(data)
        if event["type"] in ("response.completed", "response.incomplete", "error"):
            return event
        if event["type"] == "response.failed":
            return event
    raise AssertionError("no terminal event")


def finished_items(body: bytes) -> dict[str, dict[str, Any]]:
    """Each ``response.output_item.done`` item by id (encrypted content is re-encrypted in
    every copy, so the one stored is the finished item's)."""
    items: dict[str, dict[str, Any]] = {}
    for _, data in payloads_of(body):
        if data.strip() == "[DONE]":
            continue
        event = json.loads(data)
        if event["type"] == "response.output_item.done":
            items.setdefault(event["item"]["id"], event["item"])
        elif event["type"] in ("response.completed", "response.incomplete"):
            break
    return items


def expected_content(output: list[dict[str, Any]], done: dict[str, dict[str, Any]]) -> list[Any]:
    blocks: list[Any] = []
    for position, item in enumerate(output):
        kind = item["type"]
        if kind == "reasoning":
            summary = "\n\n".join(part["text"] for part in item.get("summary") or [])
            raw = "".join(part.get("text", "") for part in item.get("content") or [])
            redacted = None
            encrypted = done.get(item["id"], item).get("encrypted_content")
            if encrypted:
                call_ids, message_id = {}, ""
                for later in output[position + 1 :]:
                    if later["type"] == "reasoning":
                        break
                    if later["type"] == "function_call":
                        call_ids[later["call_id"]] = later["id"]
                    elif later["type"] == "message" and not message_id:
                        message_id = later["id"]
                redacted = {
                    "id": item["id"],
                    "summary": item.get("summary") or [],
                    "encrypted_content": encrypted,
                    "call_ids": call_ids,
                    "message_id": message_id,
                }
            if summary or redacted is not None or not raw:
                blocks.append(("thinking", summary, redacted))
            if raw:
                blocks.append(("thinking", raw, None))
        elif kind == "message":
            text = "".join(
                part.get("text") or part.get("refusal") or "" for part in item.get("content") or []
            )
            if text:
                blocks.append(TextContent(text=text))
        elif kind == "function_call":
            blocks.append(
                ToolCall(
                    id=item["call_id"], name=item["name"], arguments=json.loads(item["arguments"])
                )
            )
    # A reasoning item with nothing to show and nothing to replay leaves no block.
    return [b for b in blocks if not (isinstance(b, tuple) and not b[1] and b[2] is None)]


def corpus_cases() -> list[Any]:
    cases = []
    for api in RESPONSES:
        for param in corpus_params(PROTOCOLS[api].corpus):
            cases.append(pytest.param(api, *param.values, marks=param.marks, id=param.id))
    return cases


@pytest.mark.parametrize(("api", "path"), corpus_cases())
async def test_recorded_responses_stream_replays_block_by_block(
    api: ApiProtocol, path: Path
) -> None:
    body = chunks_body(path, api)
    end = terminal(body)
    if end["type"] in ("error", "response.failed"):
        with pytest.raises(ProviderError) as caught:
            await replay_as(api, body)
        error = end.get("error") or end if end["type"] == "error" else end["response"]["error"]
        assert error["message"] in caught.value.message
        # insufficient_quota: not a rate limit to wait out, not an overflow to compact.
        assert caught.value.kind is ErrorKind.API
        return

    message, deltas, route = await replay_as(api, body)
    assert route.called
    response = end["response"]
    want = expected_content(response["output"], finished_items(body))
    assert len(message.content) == len(want), [type(b).__name__ for b in message.content]
    for got, expected in zip(message.content, want, strict=True):
        if isinstance(expected, tuple):
            _, text, redacted = expected
            assert isinstance(got, ThinkingContent)
            assert got.thinking == text
            if redacted is None:
                assert got.redacted is None
            else:
                assert json.loads(got.redacted or "") == redacted
                assert got.redacted_protocol is api
        else:
            assert got == expected

    calls = [b for b in want if isinstance(b, ToolCall)]
    if response["status"] == "incomplete":
        assert message.stop_reason is StopReason.LENGTH
    else:
        assert message.stop_reason is (StopReason.TOOL_USE if calls else StopReason.STOP)
    usage = response["usage"]
    details = usage.get("input_tokens_details") or {}
    cached = details.get("cached_tokens") or 0
    assert message.usage.cache_read == cached
    assert message.usage.input == usage["input_tokens"] - cached
    # Output tokens include the reasoning tokens (output_tokens_details.reasoning_tokens).
    assert message.usage.output == usage["output_tokens"]
    streamed = "".join(d.delta for d in deltas if d.type == "text_delta")
    deltas_by_item: dict[str, str] = {}
    for _, data in payloads_of(body):
        event = json.loads(data) if data.strip() != "[DONE]" else {"type": "[DONE]"}
        if event["type"] in ("response.completed", "response.incomplete"):
            break
        if event["type"] == "response.output_text.delta":
            item_id = event["item_id"]
            deltas_by_item[item_id] = deltas_by_item.get(item_id, "") + event["delta"]
    # Per message: the final copy extends its deltas (reported as one more delta) or, in
    # a hand-edited recording whose deltas disagree with it, replaces them silently.
    expected_stream = ""
    for item in response["output"]:
        if item["type"] != "message":
            continue
        final = "".join(p.get("text", "") for p in item.get("content") or [])
        sent = deltas_by_item.get(item["id"], "")
        expected_stream += final if final.startswith(sent) else sent
    assert streamed == expected_stream
