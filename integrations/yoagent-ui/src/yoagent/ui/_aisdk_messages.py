"""AI SDK UI messages (what ``useChat`` sends) as yoagent messages.

A user message's ``text`` parts become text and its ``file`` parts holding an image as a
``data:`` URL become images; a ``system`` message's text goes to the run's system prompt
(kept as a ``ui.system`` custom message). An assistant message is a whole run: each step
(``step-start`` part) is one reply: its reasoning, text and tool calls, then the results of
the calls whose tool part holds an output, an error or a denial. Parts that are the
application's own (``data-*``, sources, ``custom``) are left out.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, cast

from yoagent.core import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

from ._agui_messages import SYSTEM_KIND
from ._errors import BadRunInputError

_SKIPPED = frozenset({"step-start", "source-url", "source-document", "custom", "steering-message"})

UiMessage = dict[str, Any]


def _text_of(part: dict[str, Any], where: str) -> str:
    text = part.get("text")
    if not isinstance(text, str):
        raise BadRunInputError(f"{where}: a {part.get('type')!r} part needs its text")
    return text


def _image(part: dict[str, Any], where: str) -> ImageContent:
    url, media = part.get("url"), part.get("mediaType")
    if not isinstance(url, str) or not isinstance(media, str) or not media.startswith("image/"):
        raise BadRunInputError(f"{where}: yoagent takes files that are images ({media!r} is not)")
    head, _, data = url.partition(",")
    if not head.startswith("data:") or not head.endswith(";base64"):
        raise BadRunInputError(f"{where}: an image must come as a base64 data: URL")
    return ImageContent(data=data, mime_type=media)


def tool_name_of(part: dict[str, Any]) -> str | None:
    """The tool of a ``tool-<name>`` or ``dynamic-tool`` part; ``None`` for other parts."""
    kind = str(part.get("type", ""))
    if kind == "dynamic-tool":
        return str(part.get("toolName", ""))
    return kind.removeprefix("tool-") if kind.startswith("tool-") else None


def _output_text(output: object) -> str:
    return output if isinstance(output, str) else json.dumps(output)


def _assistant(message: UiMessage, where: str) -> list[AgentMessage]:
    out: list[AgentMessage] = []
    content: list[TextContent | ThinkingContent | ToolCall | ImageContent] = []
    results: list[ToolResultMessage] = []

    def close_step() -> None:
        if content:
            calls = any(isinstance(block, ToolCall) for block in content)
            stop = StopReason.TOOL_USE if calls else StopReason.STOP
            out.append(AssistantMessage(content=list(content), stop_reason=stop))
            out.extend(results)
        content.clear()
        results.clear()

    for index, part in enumerate(_parts(message, where)):
        kind = part.get("type")
        at = f"{where}.parts[{index}]"
        name = tool_name_of(part)
        if kind == "step-start":
            close_step()
        elif kind == "text":
            content.append(TextContent(text=_text_of(part, at)))
        elif kind == "reasoning":
            content.append(ThinkingContent(thinking=_text_of(part, at)))
        elif name is not None:
            call_id = part.get("toolCallId")
            raw = cast(object, part.get("input"))
            arguments = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
            if not isinstance(call_id, str):
                raise BadRunInputError(f"{at}: a tool part needs its toolCallId")
            content.append(ToolCall(id=call_id, name=name, arguments=arguments))
            result = _result(part, call_id, name)
            if result is not None:
                results.append(result)
        elif kind == "file":
            content.append(_image(part, at))
        elif kind in _SKIPPED or str(kind).startswith("data-"):
            continue
        else:
            raise BadRunInputError(f"{at}: unknown part type {kind!r}")
    close_step()
    return out


def _result(part: dict[str, Any], call_id: str, name: str) -> ToolResultMessage | None:
    state = part.get("state")
    if state == "output-available":
        text = _output_text(part.get("output"))
        return ToolResultMessage(
            tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)]
        )
    if state == "output-error":
        text = str(part.get("errorText") or "error")
        return ToolResultMessage(
            tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], is_error=True
        )
    if state == "output-denied":
        approval = cast("dict[str, Any]", part.get("approval") or {})
        reason = approval.get("reason") or "denied by the user"
        text = f"Tool call denied: {reason}"
        return ToolResultMessage(
            tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], is_error=True
        )
    return None


def _parts(message: UiMessage, where: str) -> list[dict[str, Any]]:
    parts = message.get("parts")
    if not isinstance(parts, list) or not all(
        isinstance(p, dict) for p in cast("list[Any]", parts)
    ):
        raise BadRunInputError(f"{where}: a UI message needs a list of parts")
    return cast("list[dict[str, Any]]", parts)


def from_ui_message(message: UiMessage, where: str = "message") -> list[AgentMessage]:
    """One UI message as the yoagent messages it holds (an assistant message may hold
    several replies and their results; see the module's docstring)."""
    role = message.get("role")
    if role == "user":
        blocks: list[TextContent | ImageContent] = []
        for index, part in enumerate(_parts(message, where)):
            at = f"{where}.parts[{index}]"
            kind = part.get("type")
            if kind == "text":
                blocks.append(TextContent(text=_text_of(part, at)))
            elif kind == "file":
                blocks.append(_image(part, at))
            elif not (kind in _SKIPPED or str(kind).startswith("data-")):
                raise BadRunInputError(f"{at}: unknown part type {kind!r}")
        return [UserMessage(content=blocks)]
    if role == "assistant":
        return _assistant(message, where)
    if role == "system":
        text = "".join(
            _text_of(p, where) for p in _parts(message, where) if p.get("type") == "text"
        )
        return [CustomMessage(kind=SYSTEM_KIND, data={"content": text})]
    raise BadRunInputError(f"{where}: unknown message role {role!r}")


def from_ui_messages(messages: Sequence[UiMessage]) -> list[AgentMessage]:
    """UI messages (``useChat``'s ``messages``) as yoagent messages."""
    return [
        m
        for index, message in enumerate(messages)
        for m in from_ui_message(message, f"messages[{index}]")
    ]
