"""Structured output's edges: the schema sent for a JSON-schema dict (its name from the
title or ``output``, its description) and for a model class without a docstring, and each
way a run yields no value, word for word, with the reply's text and the parser's error
kept on a parse error. (Added from mutation testing: each pins a behaviour a surviving
mutant changed.)"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from yoagent.core import StructuredParseError
from yoagent.core._structured import (
    NoStructuredOutputError,
    StructuredProviderError,
    output_schema_for,
    parse_structured,
)
from yoagent.core._types.content import TextContent
from yoagent.core._types.messages import AssistantMessage, StopReason, UserMessage


class Undocumented(BaseModel):
    n: int


def _reply(
    text: str = "", stop: StopReason = StopReason.STOP, error: str | None = None
) -> AssistantMessage:
    content = [TextContent(text=text)] if text else []
    return AssistantMessage(content=content, stop_reason=stop, error_message=error)


@pytest.mark.parametrize(
    ("schema", "name", "description"),
    [
        ({"type": "object", "title": "Point", "description": "a point"}, "Point", "a point"),
        ({"type": "object", "title": ""}, "output", ""),
        ({"type": "object", "title": 7}, "output", ""),
        ({"type": "object"}, "output", ""),
    ],
)
def test_a_dict_schema_is_sent_whole_named_by_its_title_or_output(
    schema: dict[str, Any], name: str, description: str
) -> None:
    sent = output_schema_for(schema)
    assert (sent.name, sent.schema, sent.description) == (name, schema, description)
    assert output_schema_for(schema, "chosen").name == "chosen"


def test_a_model_without_a_docstring_has_no_description() -> None:
    sent = output_schema_for(Undocumented)
    assert (sent.name, sent.description) == ("Undocumented", "")


@pytest.mark.parametrize(
    ("messages", "kind", "text"),
    [
        ([UserMessage.from_text("q")], NoStructuredOutputError, "the run produced no reply"),
        ([_reply(stop=StopReason.ERROR)], StructuredProviderError, "the model call failed"),
        (
            [_reply(stop=StopReason.ERROR, error="rate limited")],
            StructuredProviderError,
            "rate limited",
        ),
        ([_reply(stop=StopReason.ABORTED)], StructuredProviderError, "the run was cancelled"),
        ([_reply(stop=StopReason.REFUSAL)], StructuredProviderError, "the model refused:"),
        (
            [_reply(stop=StopReason.REFUSAL, error="policy")],
            StructuredProviderError,
            "the model refused: policy",
        ),
        (
            [_reply("  ", stop=StopReason.LENGTH)],
            NoStructuredOutputError,
            "the final reply holds no text (stop reason length)",
        ),
    ],
)
def test_each_way_a_run_yields_no_value_says_why(
    messages: list[Any], kind: type[Exception], text: str
) -> None:
    with pytest.raises(kind) as raised:
        parse_structured(messages, {"type": "object"})
    assert str(raised.value) == text


@pytest.mark.parametrize("schema", [{"type": "object"}, Undocumented])
def test_a_parse_error_keeps_the_replys_text_and_the_parsers_error(schema: Any) -> None:
    with pytest.raises(StructuredParseError) as raised:
        parse_structured([_reply(' {"n": "x" ')], schema)
    assert raised.value.raw == '{"n": "x"'
    assert raised.value.source is raised.value.__cause__
    assert isinstance(raised.value.source, ValueError)
