"""Every recorded Gemini and Vertex stream, replayed through the real provider, block by block.

The expected reply is computed from the stream file by a naive reader below, independent
of the provider's parser: parts in order (thought text, text, signatures, calls), streamed
call arguments rebuilt from their JSON paths, the last usage, the finish reason.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from provider_helpers import PROTOCOLS, chunks_body, corpus_params, payloads_of, replay_as

from yoagent.core import ApiProtocol, StopReason, TextContent, ThinkingContent, ToolCall

GOOGLE = (ApiProtocol.GOOGLE_GENERATIVE_AI, ApiProtocol.GOOGLE_VERTEX)


def rebuild(pieces: list[tuple[str, Any]]) -> dict[str, Any]:
    """Arguments from (jsonPath, value) pairs, strings of one path already joined."""
    root: dict[str, Any] = {}
    for path, value in pieces:
        keys: list[Any] = [
            int(index) if index else name
            for name, index in re.findall(r"\.([A-Za-z_][\w]*)|\[(\d+)\]", path)
        ]
        node: Any = root
        for key, following in itertools.pairwise(keys):
            empty: Any = [] if isinstance(following, int) else {}
            if isinstance(key, int):
                while len(node) <= key:
                    node.append(None)
                node[key] = node[key] if node[key] is not None else empty
            else:
                node.setdefault(key, empty)
            node = node[key]
        last = keys[-1]
        if isinstance(last, int):
            while len(node) <= last:
                node.append(None)
        node[last] = value
    return root


def expected_reply(body: bytes) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    usage: dict[str, int] = {}
    finish = None
    streaming: dict[str, Any] | None = None
    for _, data in payloads_of(body):
        chunk = json.loads(data)
        usage = chunk.get("usageMetadata") or usage
        candidate = (chunk.get("candidates") or [{}])[0]
        for part in (candidate.get("content") or {}).get("parts") or []:
            if part.get("thoughtSignature"):
                blocks.append({"kind": "signature", "value": part["thoughtSignature"]})
            call = part.get("functionCall")
            if call is not None:
                if call.get("name") and not call.get("willContinue") and "partialArgs" not in call:
                    blocks.append(
                        {"kind": "call", "name": call["name"], "args": call.get("args") or {}}
                    )
                    continue
                if call.get("name"):
                    streaming = {"kind": "call", "name": call["name"], "pieces": {}}
                    blocks.append(streaming)
                assert streaming is not None
                for piece in call.get("partialArgs") or []:
                    value = next(
                        piece[k] for k in ("stringValue", "numberValue", "boolValue") if k in piece
                    )
                    if isinstance(value, str):
                        value = streaming["pieces"].get(piece["jsonPath"], "") + value
                    streaming["pieces"][piece["jsonPath"]] = value
                if not call.get("willContinue"):
                    streaming["args"] = rebuild(list(streaming.pop("pieces").items()))
                    streaming = None
                continue
            if part.get("text"):
                kind = "thinking" if part.get("thought") else "text"
                if blocks and blocks[-1]["kind"] == kind:
                    blocks[-1]["text"] += part["text"]
                else:
                    blocks.append({"kind": kind, "text": part["text"]})
        if candidate.get("finishReason"):
            finish = candidate["finishReason"]
            break
    return {"blocks": blocks, "usage": usage, "finish": finish}


def corpus_cases() -> list[Any]:
    cases = []
    for api in GOOGLE:
        for param in corpus_params(PROTOCOLS[api].corpus):
            cases.append(pytest.param(api, *param.values, marks=param.marks, id=param.id))
    return cases


@pytest.mark.parametrize(("api", "path"), corpus_cases())
async def test_recorded_gemini_stream_replays_block_by_block(api: ApiProtocol, path: Path) -> None:
    body = chunks_body(path, api)
    want = expected_reply(body)
    message, deltas, route = await replay_as(api, body)

    assert route.called
    assert len(message.content) == len(want["blocks"])
    for got, block in zip(message.content, want["blocks"], strict=True):
        if block["kind"] == "signature":
            assert got == ThinkingContent(redacted=block["value"], redacted_protocol=api)
        elif block["kind"] == "thinking":
            assert got == ThinkingContent(thinking=block["text"])
        elif block["kind"] == "text":
            assert got == TextContent(text=block["text"])
        else:
            assert isinstance(got, ToolCall)
            assert (got.name, got.arguments) == (block["name"], block["args"])
            assert got.id.startswith("gemini_")  # none of these recordings carries an id

    calls = [b for b in want["blocks"] if b["kind"] == "call"]
    stop = {"STOP": StopReason.STOP, "MAX_TOKENS": StopReason.LENGTH}[want["finish"]]
    assert message.stop_reason is (StopReason.TOOL_USE if calls else stop)
    usage = want["usage"]
    cached = usage.get("cachedContentTokenCount", 0)
    assert message.usage.input == usage.get("promptTokenCount", 0) - cached
    assert message.usage.cache_read == cached
    # Output counts the thinking: candidates plus thoughts.
    assert message.usage.output == usage.get("candidatesTokenCount", 0) + usage.get(
        "thoughtsTokenCount", 0
    )
    streamed = "".join(d.delta for d in deltas if d.type == "text_delta")
    assert streamed == message.text
    ids = [b.id for b in message.tool_calls]
    assert len(set(ids)) == len(ids)
