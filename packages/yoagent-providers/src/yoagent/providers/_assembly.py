"""Assembling one AssistantMessage from streamed blocks, and reporting each delta as it comes.

Both wire protocols feed this builder, so the rules for what a reply may contain live in
one place: empty blocks vanish, a tool call that was never finished is never runnable,
arguments that are not a JSON object turn the reply into an error, and the stop reason
agrees with the tool calls that survive.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    StopReason,
    TextContent,
    TextDelta,
    ThinkingContent,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    Usage,
)
from yoagent.core.provider import AssistantContent, DeltaSink

from ._tool_args import parse_tool_arguments


@dataclass(slots=True)
class _Block:
    kind: Literal["text", "thinking", "tool"]
    parts: list[str] = field(default_factory=list[str])
    signature: list[str] = field(default_factory=list[str])
    redacted: str | None = None
    redacted_protocol: ApiProtocol | None = None
    id: str = ""
    name: str = ""
    closed: bool = False
    dropped: bool = False


class ReplyBuilder:
    """Collects one reply's blocks. ``content_index`` in deltas is the block's slot number.

    A slot number identifies a block while it streams; the returned message is authoritative
    (blocks that end up empty or unrunnable are left out of it).
    """

    __slots__ = ("_blocks", "_sink")

    def __init__(self, sink: DeltaSink) -> None:
        self._sink = sink
        self._blocks: list[_Block] = []

    def __len__(self) -> int:
        return len(self._blocks)

    def _push(self, block: _Block) -> int:
        """Append ``block``; return its slot."""
        self._blocks.append(block)
        return len(self._blocks) - 1

    def kind(self, slot: int) -> str:
        """The kind of block in ``slot`` (``text``, ``thinking`` or ``tool``)."""
        return self._blocks[slot].kind

    def open_text(self, text: str = "") -> int:
        """Start a text block; return its slot."""
        slot = self._push(_Block("text"))
        if text:
            self.add_text(slot, text)
        return slot

    def add_text(self, slot: int, delta: str) -> None:
        """Append text to ``slot`` and report it."""
        self._blocks[slot].parts.append(delta)
        self._sink(TextDelta(content_index=slot, delta=delta))

    def open_thinking(self, text: str = "", signature: str = "") -> int:
        """Start a reasoning block; return its slot."""
        slot = self._push(_Block("thinking"))
        if text:
            self.add_thinking(slot, text)
        if signature:
            self.add_signature(slot, signature)
        return slot

    def add_thinking(self, slot: int, delta: str) -> None:
        """Append reasoning text to ``slot`` and report it."""
        self._blocks[slot].parts.append(delta)
        self._sink(ThinkingDelta(content_index=slot, delta=delta))

    def add_signature(self, slot: int, delta: str) -> None:
        """Append to the signature of the reasoning block in ``slot``."""
        self._blocks[slot].signature.append(delta)

    def add_redacted(self, data: str, protocol: ApiProtocol) -> int:
        """A block of provider-encrypted reasoning, whole; return its slot."""
        return self._push(
            _Block("thinking", redacted=data, redacted_protocol=protocol, closed=True)
        )

    def open_tool(self, id: str, name: str) -> int:
        """Start a tool call; return its slot."""
        slot = self._push(_Block("tool", id=id, name=name))
        self._sink(ToolCallDelta(content_index=slot, id=id, name=name, delta=""))
        return slot

    def name_tool(self, slot: int, id: str, name: str) -> None:
        """Fill in a tool call's id or name when they arrive after its first chunk."""
        block = self._blocks[slot]
        if id and not block.id:
            block.id = id
        if name and not block.name:
            block.name = name

    def add_tool_arguments(self, slot: int, delta: str) -> None:
        """Append raw JSON argument text to the tool call in ``slot`` and report it."""
        block = self._blocks[slot]
        block.parts.append(delta)
        self._sink(ToolCallDelta(content_index=slot, id=block.id, name=block.name, delta=delta))

    def settle(self, slot: int, text: str) -> None:
        """Make ``text`` the whole text of the block in ``slot`` (a server's final copy).

        What extends the streamed text is reported as one more delta; a final copy that
        disagrees with the deltas replaces them silently (the copy is authoritative).
        """
        block = self._blocks[slot]
        streamed = "".join(block.parts)
        if text == streamed:
            return
        if not text.startswith(streamed):
            block.parts = [text]
        elif block.kind == "text":
            self.add_text(slot, text[len(streamed) :])
        elif block.kind == "thinking":
            self.add_thinking(slot, text[len(streamed) :])
        else:
            self.add_tool_arguments(slot, text[len(streamed) :])

    def set_redacted(self, slot: int, data: str, protocol: ApiProtocol) -> None:
        """Attach provider-encrypted reasoning to the reasoning block in ``slot``."""
        block = self._blocks[slot]
        block.redacted = data
        block.redacted_protocol = protocol

    def close(self, slot: int) -> None:
        """The block in ``slot`` is finished (a tool call only runs once closed)."""
        self._blocks[slot].closed = True

    def close_all(self, *, except_last_tool: bool = False) -> None:
        """Close every block, optionally leaving the last tool call open (cut by a limit)."""
        last_tool = max((i for i, b in enumerate(self._blocks) if b.kind == "tool"), default=-1)
        for i, block in enumerate(self._blocks):
            if not (except_last_tool and i == last_tool):
                block.closed = True

    def drop_all(self) -> None:
        """Forget every block so far (the server restarted the message)."""
        for block in self._blocks:
            block.dropped = True

    def finish(
        self, *, stop_reason: StopReason, usage: Usage, model: str, provider: str
    ) -> AssistantMessage:
        """The complete reply.

        A tool call left open is dropped (it is never runnable). At ``LENGTH`` that is the
        expected truncation and the stop reason says so; otherwise an open or unparseable
        call makes the reply an ``ERROR`` that names the tool, and the call is not run.
        """
        content: list[AssistantContent] = []
        refused: list[str] = []
        for slot, block in enumerate(self._blocks):
            if block.dropped:
                continue
            text = "".join(block.parts)
            if block.kind == "text":
                if text:
                    content.append(TextContent(text=text))
            elif block.kind == "thinking":
                signature = "".join(block.signature) or None
                if text or signature or block.redacted is not None:
                    content.append(
                        ThinkingContent(
                            thinking=text,
                            signature=signature,
                            redacted=block.redacted,
                            redacted_protocol=block.redacted_protocol,
                        )
                    )
            else:
                arguments = parse_tool_arguments(text) if block.closed else None
                if arguments is None:
                    reason = "was cut off" if not block.closed else "are not a JSON object"
                    refused.append(f"{block.name or '?'} ({reason})")
                    continue
                # Some local servers send no call id; the reply still needs one to pair results.
                call_id = block.id or f"call_{slot}"
                content.append(ToolCall(id=call_id, name=block.name, arguments=arguments))
        error_message: str | None = None
        has_calls = any(isinstance(block, ToolCall) for block in content)
        if refused and stop_reason is not StopReason.LENGTH:
            stop_reason = StopReason.ERROR
            error_message = (
                "the model's tool call arguments could not be used, so no tool was run: "
                + ", ".join(refused)
            )
        elif stop_reason is StopReason.TOOL_USE and not has_calls:
            stop_reason = StopReason.STOP
        elif stop_reason is StopReason.STOP and has_calls:
            # Some servers (Ollama, vLLM) finish a tool-calling reply with "stop".
            stop_reason = StopReason.TOOL_USE
        return AssistantMessage(
            content=content,
            stop_reason=stop_reason,
            usage=usage,
            model=model,
            provider=provider,
            error_message=error_message,
        )
