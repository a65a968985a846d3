"""@tool: typed async functions become tools with a schema from their signature."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from yoagent.core import AgentTool, ToolContext, ToolError, ToolResult, tool
from yoagent.core.loop import FunctionTool


class Point(BaseModel):
    x: int
    y: int


def context() -> ToolContext:
    return ToolContext(tool_call_id="c1", tool_name="t")


async def test_schema_description_and_name_come_from_the_function() -> None:
    @tool
    async def move(
        point: Point, unit: Literal["m", "km"] = "m", ctx: ToolContext | None = None
    ) -> str:
        """Move to a point.

        Longer text.
        """
        return "moved"

    assert isinstance(move, AgentTool)
    assert move.name == "move"
    assert move.description == "Move to a point.\n\nLonger text."
    # The same schema a ModelTool's model gives: no titles, the nested model in place.
    assert move.parameters == {
        "type": "object",
        "properties": {
            "point": {
                "type": "object",
                "properties": {"x": {"type": "integer"}, "y": {"type": "integer"}},
                "required": ["x", "y"],
            },
            "unit": {"default": "m", "enum": ["m", "km"], "type": "string"},
        },
        "required": ["point"],
        "additionalProperties": False,
    }


async def test_the_context_parameter_is_injected_and_hidden() -> None:
    @tool(name="whoami", description="Says the call id.")
    async def who(ctx: ToolContext, shout: bool = False) -> str:
        return ctx.tool_call_id.upper() if shout else ctx.tool_call_id

    assert who.name == "whoami" and who.description == "Says the call id."
    assert "ctx" not in who.parameters["properties"]
    result = await who.execute({"shout": True}, context())
    assert result.text == "C1"


async def test_invalid_arguments_raise_a_tool_error_naming_each_problem() -> None:
    @tool
    async def area(width: int, height: int = Field(gt=0)) -> int:
        """Area."""
        return width * height

    with pytest.raises(ToolError) as caught:
        await area.execute({"width": "wide", "height": -1}, context())
    message = str(caught.value)
    assert message.startswith("invalid arguments for area: ")
    assert "width: Input should be a valid integer" in message
    assert "height: Input should be greater than 0" in message


async def test_return_values_become_results() -> None:
    @tool
    async def as_dict() -> dict[str, int]:
        """Dict."""
        return {"a": 1}

    @tool
    async def as_model() -> Point:
        """Model."""
        return Point(x=1, y=2)

    @tool
    async def as_result() -> ToolResult:
        """Result."""
        return ToolResult.from_text("direct", details={"k": "v"})

    assert (await as_dict.execute({}, context())).text == '{"a": 1}'
    model_result = await as_model.execute({}, context())
    assert model_result.text == '{"x":1,"y":2}' and model_result.details == {"x": 1, "y": 2}
    direct = await as_result.execute({}, context())
    assert direct.text == "direct" and direct.details == {"k": "v"}


async def test_a_plain_function_runs_in_a_worker_thread() -> None:
    import threading

    loop_thread = threading.get_ident()

    def where(a: int) -> str:
        """Say which thread ran."""
        return f"{a}:{threading.get_ident() != loop_thread}"

    result = await FunctionTool(where).execute(
        {"a": 7}, ToolContext(tool_call_id="c", tool_name="w")
    )
    assert result.text == "7:True"


def test_varargs_and_non_functions_are_refused() -> None:
    with pytest.raises(TypeError, match="needs a function"):
        FunctionTool(int)

    async def varargs(*items: int) -> str:
        return ""

    with pytest.raises(TypeError, match=r"\*args"):
        tool(varargs)


# --- what @tool says about a signature it cannot use (issue 27) --------------------------------


class Connection:
    """A type pydantic knows nothing about (no schema, no validator)."""


def test_a_parameter_type_pydantic_cannot_read_names_the_tool_and_the_parameter() -> None:
    def upload(path: str, connection: Connection) -> str:
        """Upload a file."""
        return path

    with pytest.raises(TypeError) as refused:
        tool(upload)
    message = str(refused.value)
    assert message.startswith("@tool upload: parameter 'connection' has type Connection")
    assert "JSON" in message
    assert "arbitrary_types_allowed" not in message  # pydantic's advice does not apply here


def test_a_parameter_type_with_no_json_schema_names_the_tool_and_the_parameter() -> None:
    def apply(value: int, fn: Callable[[int], int]) -> int:
        """Apply a function."""
        return fn(value)

    with pytest.raises(TypeError, match=r"^@tool apply: parameter 'fn' has type "):
        tool(apply)


def test_an_annotation_that_cannot_be_resolved_names_the_tool() -> None:
    def later(item: NotDefinedAnywhere) -> str:  # type: ignore[name-defined]  # noqa: F821
        """Refers to a name that does not exist."""
        return ""

    with pytest.raises(TypeError, match=r"^@tool later: .*NotDefinedAnywhere"):
        tool(later)


async def test_an_unannotated_parameter_takes_any_json_value() -> None:
    """Decided (as pydantic-ai and openai-agents do): a parameter without an annotation is
    ``Any`` — its schema says nothing, and the function gets the JSON value as it came."""

    @tool
    def keep(value, times=2):  # type: ignore[no-untyped-def]
        """Repeat a value."""
        return {"value": value, "times": times}

    assert keep.parameters["properties"] == {"value": {}, "times": {"default": 2}}
    assert keep.parameters["required"] == ["value"]
    result = await keep.execute({"value": {"any": ["json", 1]}}, context())
    assert result.details == {"value": {"any": ["json", 1]}, "times": 2}
