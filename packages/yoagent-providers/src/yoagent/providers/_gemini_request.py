"""The ``generateContent`` request body, shared by the Gemini API and Vertex AI.

History becomes ``contents`` of ``user`` / ``model`` parts: a tool result is a
``functionResponse`` part (``output`` or ``error``), images are ``inlineData``. Empty
contents are dropped, neighbours of one role merged (so a parallel call's results go back
as one user content), and each user content's ``functionResponse`` parts go first.
Thought text is not sent back; thought signatures are, on the part they came with (see
``_gemini_stream``), and only to the API that produced them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    GoogleCompat,
    ImageContent,
    TextContent,
    ThinkingContent,
    ThinkingLevel,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import Message, StreamConfig
from yoagent.core.support import warn_once

from ._logging import logger
from ._messages import WireCache, WireMessage, converted, join_same_role, notes_index
from .models import gemini_compat_for

GENERATED_ID_PREFIX = "gemini_"
"""Prefix of call ids made up here for calls the API sent without one (never sent back)."""

THINKING_BUDGETS: dict[ThinkingLevel, int] = {
    ThinkingLevel.MINIMAL: 1024,
    ThinkingLevel.LOW: 1024,
    ThinkingLevel.MEDIUM: 8192,
    # 24,576 is the largest budget every Gemini 2.5 model accepts (Flash's maximum).
    ThinkingLevel.HIGH: 24576,
}
"""``thinkingBudget`` per level (Gemini 2.x)."""

THINKING_LEVELS: dict[ThinkingLevel, str] = {
    # LOW is the lowest rung every Gemini 3 model accepts (MINIMAL is Flash-only).
    ThinkingLevel.MINIMAL: "LOW",
    ThinkingLevel.LOW: "LOW",
    ThinkingLevel.MEDIUM: "MEDIUM",
    ThinkingLevel.HIGH: "HIGH",
}
"""``thinkingLevel`` per level (Gemini 3 and later)."""


def _user_parts(blocks: Sequence[TextContent | ImageContent]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"text": block.text})
        else:
            parts.append({"inlineData": {"mimeType": block.mime_type, "data": block.data}})
    return parts


def _sent_id(call_id: str) -> str | None:
    return None if not call_id or call_id.startswith(GENERATED_ID_PREFIX) else call_id


def _model_parts(message: AssistantMessage, protocol: ApiProtocol) -> list[dict[str, Any]]:
    """A reply's text and calls as parts; each signature goes on the part it came with.

    A signature whose part had nothing to send back (an empty text part) goes on the part
    before it when that has none (a closing part's signature belongs to the text before
    it), else on an empty text part of its own; only a reply with nothing else to send
    (then dropped as empty) loses its signature.
    """
    parts: list[dict[str, Any]] = []
    signature: str | None = None
    for block in message.content:
        if isinstance(block, ThinkingContent):
            own = block.redacted_for(protocol)
            if own is not None:
                if signature is not None:  # the pending one's part had no content
                    _place_alone(parts, signature)
                signature = own
            continue  # thought text is not sent back
        if isinstance(block, TextContent):
            if not block.text:
                continue
            part: dict[str, Any] = {"text": block.text}
        elif isinstance(block, ToolCall):
            call: dict[str, Any] = {"name": block.name, "args": block.arguments}
            sent = _sent_id(block.id)
            if sent is not None:
                call["id"] = sent
            part = {"functionCall": call}
        else:
            continue
        if signature is not None:
            part["thoughtSignature"] = signature
            signature = None
        parts.append(part)
    if signature is not None and parts:  # a reply with nothing else to send stays empty
        _place_alone(parts, signature)
    return parts


def _place_alone(parts: list[dict[str, Any]], signature: str) -> None:
    """Keep a signature whose own part had no content to send back."""
    if parts and "thoughtSignature" not in parts[-1]:
        parts[-1]["thoughtSignature"] = signature
    else:
        parts.append({"text": "", "thoughtSignature": signature})


def _response_parts(message: ToolResultMessage) -> list[dict[str, Any]]:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    response: dict[str, Any] = {"error": text} if message.is_error else {"output": text}
    function: dict[str, Any] = {"name": message.tool_name, "response": response}
    sent = _sent_id(message.tool_call_id)
    if sent is not None:
        function["id"] = sent
    images = _user_parts([b for b in message.content if isinstance(b, ImageContent)])
    return [{"functionResponse": function}, *images]


def function_responses_first(content: WireMessage) -> WireMessage:
    """``content`` with its ``functionResponse`` parts before its images and text."""
    parts: list[dict[str, Any]] = content.get("parts", [])
    responses = [p for p in parts if "functionResponse" in p]
    if not responses or len(responses) == len(parts):
        return content
    return {**content, "parts": [*responses, *(p for p in parts if "functionResponse" not in p)]}


def _convert(message: Message, protocol: ApiProtocol) -> WireMessage:
    if isinstance(message, UserMessage):
        return {"role": "user", "parts": _user_parts(message.content)}
    if isinstance(message, AssistantMessage):
        return {"role": "model", "parts": _model_parts(message, protocol)}
    return {"role": "user", "parts": _response_parts(message)}


def build_contents(
    messages: Sequence[Message],
    turn_notes: Sequence[str],
    protocol: ApiProtocol,
    cache: WireCache[WireMessage] | None = None,
) -> list[WireMessage]:
    """The ``contents`` array (see the module docstring).

    With a ``cache``, each message converted on an earlier call is reused (the merge
    copies what a request may change, so the cache's entries never change).
    """
    wire = converted(messages, lambda message: _convert(message, protocol), cache, protocol)
    wire = join_same_role(wire, "parts")
    notes = [{"text": note} for note in turn_notes if note]
    if notes:
        index = notes_index(wire, reply_role="model")
        if index is None:
            wire.append({"role": "user", "parts": notes})
        else:
            wire[index]["parts"] = [*wire[index]["parts"], *notes]
    return [function_responses_first(c) if c["role"] == "user" else c for c in wire]


def _compat(config: StreamConfig) -> GoogleCompat:
    compat = config.model.compat
    # No compat given: inferred from the id (Gemini 3 and later take a level).
    return compat if isinstance(compat, GoogleCompat) else gemini_compat_for(config.model.id)


def thinking_config(config: StreamConfig) -> dict[str, Any] | None:
    """``generationConfig.thinkingConfig``: a level or a budget, never both; none at OFF."""
    level = config.thinking_level
    if level is ThinkingLevel.OFF:
        return None
    if _compat(config).thinking_level_field:
        return {"thinkingLevel": THINKING_LEVELS[level], "includeThoughts": True}
    return {"thinkingBudget": THINKING_BUDGETS[level], "includeThoughts": True}


def build_request_body(
    config: StreamConfig,
    protocol: ApiProtocol,
    wire_cache: WireCache[WireMessage] | None = None,
) -> dict[str, Any]:
    """The JSON body of one ``streamGenerateContent`` request to ``protocol``'s service
    (each history message's conversion reused from ``wire_cache`` when given).

    Structured output uses ``responseJsonSchema`` on the Gemini API; Vertex AI ignores
    the schema with a warning.
    """
    model = config.model
    body: dict[str, Any] = {
        "contents": build_contents(config.messages, config.turn_notes, protocol, wire_cache)
    }
    if config.system_prompt:
        body["systemInstruction"] = {"parts": [{"text": config.system_prompt}]}
    if config.tools:
        body["tools"] = [
            {
                "functionDeclarations": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "parametersJsonSchema": tool.parameters,
                    }
                    for tool in config.tools
                ]
            }
        ]
    generation: dict[str, Any] = {"maxOutputTokens": config.max_tokens or model.max_tokens}
    if config.temperature is not None:
        generation["temperature"] = config.temperature
    thinking = thinking_config(config)
    if thinking is not None:
        generation["thinkingConfig"] = thinking
    schema = config.output_schema
    if schema is not None:
        if protocol is ApiProtocol.GOOGLE_GENERATIVE_AI:
            generation["responseMimeType"] = "application/json"
            generation["responseJsonSchema"] = schema.schema
        else:
            warn_once(
                logger,
                f"gemini-structured:{protocol.value}",
                "structured output is not sent over %s; the schema is ignored",
                protocol.value,
            )
    body["generationConfig"] = generation
    return body
