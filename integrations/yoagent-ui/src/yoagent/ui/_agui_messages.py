"""AG-UI messages to yoagent messages and back, without loss.

What AG-UI has a field for travels there (text, image parts, reasoning with its encrypted
value, tool calls and results, the error of a result); what it has none for (a reply's
stop reason, usage, model, block order; a result's tool name and details; timestamps)
travels in the message's ``metadata`` under ``"yoagent"``, which AG-UI leaves to
applications. So yoagent → AG-UI → yoagent is exact, and AG-UI → yoagent → AG-UI keeps
every message, field and part (a one-text-part list comes back as plain text).

AG-UI kinds without a yoagent message become :class:`CustomMessage` entries, which never
reach a model: ``system`` and ``developer`` messages (kinds ``ui.system`` and
``ui.developer``: the endpoint adds their text to the run's system prompt) and
``activity`` messages (kind = the activity type). A yoagent ``CustomMessage`` goes out as
an activity message.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any, cast

from ag_ui.core import (
    ActivityMessage,
    DataSource,
    DeveloperMessage,
    FunctionCall,
    ImagePart,
    ReasoningMessage,
    SystemMessage,
    TextPart,
)
from ag_ui.core import AssistantMessage as AguiAssistant
from ag_ui.core import Message as AguiMessage
from ag_ui.core import ToolCall as AguiToolCall
from ag_ui.core import ToolMessage as AguiTool
from ag_ui.core import UserMessage as AguiUser

from yoagent.core import (
    AgentMessage,
    ApiProtocol,
    AssistantMessage,
    CustomMessage,
    ErrorKind,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

from ._errors import BadRunInputError

META = "yoagent"
"""The key of yoagent's fields in an AG-UI message's ``metadata``."""
SYSTEM_KIND = "ui.system"
DEVELOPER_KIND = "ui.developer"

UserContent = list[TextContent | ImageContent]


def _meta(fields: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(extra or {}), META: fields}


def _ours(metadata: dict[str, Any] | None) -> dict[str, Any]:
    if not metadata:
        return {}
    found = metadata.get(META)
    return cast("dict[str, Any]", found) if isinstance(found, dict) else {}


def _others(metadata: dict[str, Any] | None) -> dict[str, Any] | None:
    """The application's own metadata keys (everything but ours), or ``None``."""
    if not metadata:
        return None
    rest = {key: value for key, value in metadata.items() if key != META}
    return rest or None


# --- yoagent -> AG-UI ------------------------------------------------------------------------


def _parts(content: Sequence[TextContent | ImageContent]) -> str | list[Any]:
    if len(content) == 1 and isinstance(content[0], TextContent):
        return content[0].text
    parts: list[Any] = []
    for block in content:
        if isinstance(block, TextContent):
            parts.append(TextPart(text=block.text))
        else:
            parts.append(ImagePart(source=DataSource(value=block.data, mime_type=block.mime_type)))
    return parts


def _usage_fields(usage: Usage) -> dict[str, int]:
    return {
        "input": usage.input,
        "output": usage.output,
        "cache_read": usage.cache_read,
        "cache_write": usage.cache_write,
    }


def _assistant_out(message: AssistantMessage, message_id: str) -> list[AguiMessage]:
    out: list[AguiMessage] = []
    layout: list[str] = []
    texts: list[str] = []
    calls: list[AguiToolCall] = []
    images: list[dict[str, str]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            layout.append(f"text:{len(block.text)}")
            texts.append(block.text)
        elif isinstance(block, ThinkingContent):
            layout.append("thinking")
            fields: dict[str, Any] = {}
            if block.signature is not None:
                fields["signature"] = block.signature
            if block.redacted_protocol is not None:
                fields["redacted_protocol"] = block.redacted_protocol.value
            out.append(
                ReasoningMessage(
                    id=f"{message_id}.reasoning.{len(out)}",
                    content=block.thinking,
                    encrypted_value=block.redacted,
                    metadata=_meta(fields) if fields else None,
                )
            )
        elif isinstance(block, ToolCall):
            layout.append("tool_call")
            calls.append(
                AguiToolCall(
                    id=block.id,
                    function=FunctionCall(name=block.name, arguments=json.dumps(block.arguments)),
                )
            )
        else:
            layout.append("image")
            images.append({"data": block.data, "mime_type": block.mime_type})
    fields = {
        "layout": layout,
        "stop_reason": message.stop_reason.value,
        "usage": _usage_fields(message.usage),
        "model": message.model,
        "provider": message.provider,
        "timestamp": message.timestamp,
    }
    if images:
        fields["images"] = images
    if message.error_message is not None:
        fields["error_message"] = message.error_message
    if message.error_kind is not None:
        fields["error_kind"] = message.error_kind.value
    out.append(
        AguiAssistant(
            id=message_id,
            content="".join(texts) if texts else None,
            tool_calls=calls or None,
            metadata=_meta(fields),
        )
    )
    return out


def to_agui_messages(
    messages: Sequence[AgentMessage], ids: Sequence[str] | None = None
) -> list[AguiMessage]:
    """yoagent messages as AG-UI messages. ``ids`` gives each message its AG-UI id (default:
    ``m0``, ``m1``, ...); a reply's reasoning goes out as reasoning messages before it,
    with ids made from the reply's."""
    if ids is not None and len(ids) != len(messages):
        raise ValueError(f"{len(messages)} messages but {len(ids)} ids")
    out: list[AguiMessage] = []
    for index, message in enumerate(messages):
        message_id = ids[index] if ids is not None and ids[index] else f"m{index}"
        if isinstance(message, UserMessage):
            out.append(
                AguiUser(
                    id=message_id,
                    content=_parts(message.content),
                    metadata=_meta({"timestamp": message.timestamp}),
                )
            )
        elif isinstance(message, AssistantMessage):
            out.extend(_assistant_out(message, message_id))
        elif isinstance(message, ToolResultMessage):
            fields: dict[str, Any] = {
                "tool_name": message.tool_name,
                "timestamp": message.timestamp,
            }
            if message.details is not None:
                fields["details"] = message.details
            out.append(
                AguiTool(
                    id=message_id,
                    tool_call_id=message.tool_call_id,
                    content=_parts(message.content),
                    error=(message.text or "error") if message.is_error else None,
                    metadata=_meta(fields),
                )
            )
        else:
            out.append(_custom_out(message, message_id))
    return out


def _custom_out(message: CustomMessage, message_id: str) -> AguiMessage:
    data = cast(object, message.data)
    if message.kind in (SYSTEM_KIND, DEVELOPER_KIND) and isinstance(data, dict):
        record = cast("dict[str, Any]", data)
        metadata = _meta({"timestamp": message.timestamp}, record.get("metadata"))
        kind = SystemMessage if message.kind == SYSTEM_KIND else DeveloperMessage
        return kind(
            id=message_id,
            content=str(record.get("content", "")),
            name=record.get("name"),
            metadata=metadata,
        )
    boxed = not isinstance(data, dict)
    fields: dict[str, Any] = {"timestamp": message.timestamp}
    if boxed:
        fields["boxed"] = True
    return ActivityMessage(
        id=message_id,
        activity_type=message.kind,
        content={"data": data} if boxed else cast("dict[str, Any]", data),
        metadata=_meta(fields),
    )


# --- AG-UI -> yoagent ------------------------------------------------------------------------


def _content_in(content: str | Sequence[Any], where: str) -> UserContent:
    if isinstance(content, str):
        return [TextContent(text=content)]
    blocks: UserContent = []
    for index, part in enumerate(content):
        if isinstance(part, TextPart):
            blocks.append(TextContent(text=part.text))
        elif isinstance(part, ImagePart) and isinstance(part.source, DataSource):
            blocks.append(ImageContent(data=part.source.value, mime_type=part.source.mime_type))
        elif isinstance(part, ImagePart):
            raise BadRunInputError(
                f"{where}: content part {index} is an image by {part.source.type}; "
                "yoagent takes images as data (base64) only"
            )
        else:
            kind = str(getattr(part, "type", type(part).__name__))
            raise BadRunInputError(
                f"{where}: content part {index} is {kind!r}; yoagent takes text and images"
            )
    return blocks


def _stamp(fields: dict[str, Any]) -> int:
    """The recorded timestamp, or now (a message a client made)."""
    stamp = fields.get("timestamp")
    return stamp if isinstance(stamp, int) else time.time_ns() // 1_000_000


def _arguments(call: AguiToolCall, where: str) -> dict[str, Any]:
    text = call.function.arguments or "{}"
    try:
        value = json.loads(text)
    except ValueError:
        raise BadRunInputError(
            f"{where}: the arguments of tool call {call.id!r} are not JSON"
        ) from None
    if not isinstance(value, dict):
        raise BadRunInputError(
            f"{where}: the arguments of tool call {call.id!r} are not a JSON object"
        )
    return cast("dict[str, Any]", value)


def _assistant_in(
    message: AguiAssistant, reasoning: list[ReasoningMessage], where: str
) -> AssistantMessage:
    fields = _ours(message.metadata)
    thinking = [
        ThinkingContent(
            thinking=item.content,
            signature=_ours(item.metadata).get("signature"),
            redacted=item.encrypted_value,
            redacted_protocol=_protocol(_ours(item.metadata).get("redacted_protocol")),
        )
        for item in reasoning
    ]
    calls = [
        ToolCall(id=call.id, name=call.function.name, arguments=_arguments(call, where))
        for call in message.tool_calls or []
    ]
    text = message.content or ""
    images = [
        ImageContent(data=str(image["data"]), mime_type=str(image["mime_type"]))
        for image in cast("list[dict[str, Any]]", fields.get("images") or [])
    ]
    layout = cast("list[str] | None", fields.get("layout"))
    content: list[TextContent | ThinkingContent | ToolCall | ImageContent] = []
    if layout is None or not _layout_fits(layout, text, thinking, calls, images):
        content.extend(thinking)
        if text:
            content.append(TextContent(text=text))
        content.extend(images)
        content.extend(calls)
    else:
        for entry in layout:
            if entry.startswith("text:"):
                size = int(entry[5:])
                content.append(TextContent(text=text[:size]))
                text = text[size:]
            elif entry == "thinking":
                content.append(thinking.pop(0))
            elif entry == "tool_call":
                content.append(calls.pop(0))
            else:
                content.append(images.pop(0))
    usage = cast("dict[str, Any]", fields.get("usage") or {})
    error_kind = fields.get("error_kind")
    return AssistantMessage(
        content=content,
        stop_reason=_stop_reason(fields.get("stop_reason"), calls=bool(message.tool_calls)),
        usage=Usage(**{k: int(v) for k, v in usage.items() if k in _USAGE_KEYS}),
        model=str(fields.get("model", "")),
        provider=str(fields.get("provider", "")),
        error_message=fields.get("error_message"),
        error_kind=ErrorKind(error_kind) if error_kind in _ERROR_KINDS else None,
        timestamp=_stamp(fields),
    )


_USAGE_KEYS = frozenset({"input", "output", "cache_read", "cache_write"})
_ERROR_KINDS = frozenset(kind.value for kind in ErrorKind)
_STOP_REASONS = frozenset(reason.value for reason in StopReason)


def _layout_fits(
    layout: list[str],
    text: str,
    thinking: list[ThinkingContent],
    calls: list[ToolCall],
    images: list[ImageContent],
) -> bool:
    """Whether a recorded block order still matches the message (a client may have edited
    it: then the blocks go in the usual order instead)."""
    counts = {"thinking": 0, "tool_call": 0, "image": 0}
    size = 0
    for entry in layout:
        if entry.startswith("text:") and entry[5:].isdigit():
            size += int(entry[5:])
        elif entry in counts:
            counts[entry] += 1
        else:
            return False
    return (
        size == len(text)
        and counts["thinking"] == len(thinking)
        and counts["tool_call"] == len(calls)
        and counts["image"] == len(images)
    )


def _stop_reason(value: object, *, calls: bool) -> StopReason:
    if isinstance(value, str) and value in _STOP_REASONS:
        return StopReason(value)
    return StopReason.TOOL_USE if calls else StopReason.STOP


def _protocol(value: object) -> ApiProtocol | None:
    try:
        return ApiProtocol(value) if isinstance(value, str) else None
    except ValueError:
        return None


def from_agui_messages(messages: Sequence[AguiMessage]) -> list[AgentMessage]:
    """AG-UI messages as yoagent messages (see the module's docstring for the mapping).

    Raises :class:`BadRunInputError` for what yoagent cannot hold: an image by URL or file
    reference, audio, video or document parts, tool call arguments that are not a JSON
    object, a tool result answering no earlier call.
    """
    return from_agui_with_ids(messages)[0]


def from_agui_with_ids(messages: Sequence[AguiMessage]) -> tuple[list[AgentMessage], list[str]]:
    """:func:`from_agui_messages`, and the AG-UI id of each message made (a reply takes its
    assistant message's id, the reasoning before it merged in)."""
    out: list[AgentMessage] = []
    ids: list[str] = []
    reasoning: list[ReasoningMessage] = []
    names: dict[str, str] = {}
    for index, message in enumerate(messages):
        where = f"messages[{index}] ({message.role})"
        if isinstance(message, ReasoningMessage):
            reasoning.append(message)
            continue
        if reasoning and not isinstance(message, AguiAssistant):
            out.append(_assistant_in(AguiAssistant(id="", content=None), reasoning, where))
            ids.append(reasoning[-1].id)
            reasoning = []
        ids.append(message.id)
        if isinstance(message, AguiUser):
            fields = _ours(message.metadata)
            out.append(
                UserMessage(content=_content_in(message.content, where), timestamp=_stamp(fields))
            )
        elif isinstance(message, AguiAssistant):
            reply = _assistant_in(message, reasoning, where)
            reasoning = []
            names.update((call.id, call.name) for call in reply.tool_calls)
            out.append(reply)
        elif isinstance(message, AguiTool):
            fields = _ours(message.metadata)
            name = names.get(message.tool_call_id)
            if name is None:
                raise BadRunInputError(
                    f"{where}: the tool result for {message.tool_call_id!r} answers no "
                    "tool call of an earlier assistant message"
                )
            content = _content_in(message.content, where)
            out.append(
                ToolResultMessage(
                    tool_call_id=message.tool_call_id,
                    tool_name=name,
                    content=content,
                    is_error=message.error is not None,
                    details=fields.get("details"),
                    timestamp=_stamp(fields),
                )
            )
        elif isinstance(message, SystemMessage | DeveloperMessage):
            record: dict[str, Any] = {"content": message.content}
            if message.name is not None:
                record["name"] = message.name
            if (extra := _others(message.metadata)) is not None:
                record["metadata"] = extra
            kind = SYSTEM_KIND if isinstance(message, SystemMessage) else DEVELOPER_KIND
            out.append(
                CustomMessage(kind=kind, data=record, timestamp=_stamp(_ours(message.metadata)))
            )
        else:
            fields = _ours(message.metadata)
            data: Any = message.content["data"] if fields.get("boxed") else message.content
            out.append(
                CustomMessage(kind=message.activity_type, data=data, timestamp=_stamp(fields))
            )
    if reasoning:
        out.append(_assistant_in(AguiAssistant(id="", content=None), reasoning, "messages"))
        ids.append(reasoning[-1].id)
    return out, ids


def system_notes(messages: Sequence[AgentMessage]) -> list[str]:
    """The text of the AG-UI system and developer messages kept in a history, in order."""
    notes: list[str] = []
    for message in messages:
        if isinstance(message, CustomMessage) and message.kind in (SYSTEM_KIND, DEVELOPER_KIND):
            data = cast(object, message.data)
            if isinstance(data, dict):
                notes.append(str(cast("dict[str, Any]", data).get("content", "")))
    return notes
