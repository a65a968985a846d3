"""ModelTool: a tool whose schema and validation both come from one pydantic model."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError

from yoagent.core import ModelTool, ToolArguments, ToolContext, ToolError, ToolResult, tool
from yoagent.core._tools.model_tool import arguments_schema


class Item(ToolArguments):
    name: str
    count: int = 1


class Order(ToolArguments):
    customer: str = Field(description="Who orders.")
    items: list[Item] = Field(default_factory=list[Item])
    urgent: bool = False


class OrderTool(ModelTool[Order]):
    def __init__(self) -> None:
        super().__init__(name="order", description="Place an order.", arguments=Order)

    async def run(self, arguments: Order, ctx: ToolContext) -> ToolResult:
        total = sum(item.count for item in arguments.items)
        return ToolResult.from_text(f"{arguments.customer}: {total} urgent={arguments.urgent}")


def context() -> ToolContext:
    return ToolContext(tool_call_id="c1", tool_name="order")


def test_the_schema_is_the_models_without_titles_or_refs() -> None:
    schema = OrderTool().parameters
    assert schema == {
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "customer": {"type": "string", "description": "Who orders."},
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {
                        "name": {"type": "string"},
                        "count": {"type": "integer", "default": 1},
                    },
                    "required": ["name"],
                },
            },
            "urgent": {"type": "boolean", "default": False},
        },
        "required": ["customer"],
    }


async def test_lax_coercions_apply() -> None:
    result = await OrderTool().execute(
        {"customer": "ann", "items": [{"name": "a", "count": "3"}], "urgent": "true"}, context()
    )
    assert result.text == "ann: 3 urgent=True"


async def test_an_unknown_key_is_an_error_worded_like_a_tool_functions() -> None:
    @tool
    async def order(customer: str) -> str:
        """Place an order."""
        return customer

    with pytest.raises(ToolError) as model_error:
        await OrderTool().execute({"customer": "ann", "extra": 1}, context())
    with pytest.raises(ToolError) as function_error:
        await order.execute({"customer": "ann", "extra": 1}, context())
    assert (
        str(model_error.value)
        == "invalid arguments for order: extra: Extra inputs are not permitted"
    )
    assert str(model_error.value) == str(function_error.value)


async def test_nested_errors_name_their_location() -> None:
    with pytest.raises(ToolError, match=r"items\.0\.count: Input should be a valid integer"):
        await OrderTool().execute(
            {"customer": "a", "items": [{"name": "x", "count": "x"}]}, context()
        )


def test_a_model_that_accepts_unknown_keys_is_refused() -> None:
    class Loose(BaseModel):
        x: int

    class LooseTool(ModelTool[Loose]):
        async def run(self, arguments: Loose, ctx: ToolContext) -> ToolResult:
            return ToolResult.from_text("")

    with pytest.raises(TypeError, match="must refuse unknown keys"):
        LooseTool(name="loose", description="", arguments=Loose)


class Paging(ToolArguments):
    offset: int = 1
    note: str | None = "default note"
    name: str


async def test_a_null_means_absent_only_where_the_type_cannot_hold_none() -> None:
    assert Paging.model_validate({"offset": None, "name": "a"}).offset == 1
    assert Paging.model_validate({"note": None, "name": "a"}).note is None  # it may be None
    with pytest.raises(ValidationError, match="name\n  Field required"):
        Paging.model_validate({"name": None})
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        Paging.model_validate({"name": "a", "surprise": None})


class Tree(ToolArguments):
    """A tree (this docstring is for developers, not the model)."""

    label: str
    children: list[Tree] = Field(default_factory=list["Tree"])


def test_a_model_that_contains_itself_keeps_its_definitions_without_titles() -> None:
    schema = arguments_schema(Tree)
    assert schema["type"] == "object"  # written out once at the top: tools take objects
    assert "description" not in schema  # the tool's description says what it is for
    assert schema["properties"]["children"] == {
        "type": "array",
        "items": {"$ref": "#/$defs/Tree"},
    }
    assert "title" not in schema["$defs"]["Tree"]
    assert "title" not in schema["$defs"]["Tree"]["properties"]["label"]


async def test_a_tool_function_is_a_model_tool() -> None:
    @tool
    async def grow(tree: Tree, times: int = 1) -> str:
        """Grow a tree."""
        return f"{tree.label} x{times}"

    assert isinstance(grow, ModelTool)
    assert "$defs" in grow.parameters  # a self-referring model keeps its definitions
    result = await grow.execute({"tree": {"label": "oak"}, "times": None}, context())
    assert result.text == "oak x1"
