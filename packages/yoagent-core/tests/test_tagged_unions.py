"""The public unions are tagged unions for pydantic (``Tagged``), exactly as with
``Field(discriminator=...)``, though defining them imports no pydantic."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field, TypeAdapter, ValidationError

from yoagent.core import AgentMessage, AssistantMessage, TextContent, ToolCall
from yoagent.core._types.content import AssistantContent
from yoagent.core._types.events import event_adapter
from yoagent.core._types.messages import messages_adapter
from yoagent.core._types.tagged import Tagged


def _errors(adapter: Any, value: object) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as caught:
        adapter.validate_python(value)
    return [{k: e[k] for k in ("type", "loc", "msg")} for e in caught.value.errors()]


def test_a_message_is_chosen_by_its_role_and_its_blocks_by_their_type() -> None:
    [message] = messages_adapter.validate_python(
        [{"role": "assistant", "content": [{"type": "tool_call", "id": "c1", "name": "read"}]}]
    )
    assert isinstance(message, AssistantMessage)
    assert message.content == [ToolCall(id="c1", name="read")]


def test_an_unknown_tag_is_one_clear_error_naming_the_tags() -> None:
    [error] = _errors(messages_adapter, [{"role": "robot"}])
    assert error["type"] == "union_tag_invalid"
    assert error["loc"] == (0,)
    assert error["msg"] == (
        "Input tag 'robot' found using 'role' does not match any of the expected tags: "
        "'user', 'assistant', 'tool_result', 'extension', 'custom'"
    )
    [missing] = _errors(event_adapter, {"no": "type"})
    assert missing["type"] == "union_tag_not_found"


def test_the_marker_validates_and_describes_like_pydantics_own_discriminator() -> None:
    members = AssistantContent.__origin__  # the bare union behind the alias
    ours: TypeAdapter[Any] = TypeAdapter(list[Annotated[members, Tagged("type")]])
    theirs: TypeAdapter[Any] = TypeAdapter(list[Annotated[members, Field(discriminator="type")]])
    assert ours.json_schema() == theirs.json_schema()
    assert "discriminator" in str(ours.json_schema())
    bad = [{"type": "text", "text": "ok"}, {"type": "sound"}, {"type": "text"}]
    assert _errors(ours, bad) == _errors(theirs, bad)
    good = [{"type": "text", "text": "ok"}]
    assert ours.validate_python(good) == theirs.validate_python(good) == [TextContent(text="ok")]


def test_agent_message_round_trips_through_json() -> None:
    message: AgentMessage = AssistantMessage(content=[TextContent(text="hi")])
    data = messages_adapter.dump_json([message])
    assert messages_adapter.validate_json(data) == [message]
