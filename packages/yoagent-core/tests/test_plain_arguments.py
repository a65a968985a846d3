"""@tool functions of plain parameter types: validated without a model, exactly as with one.

Each tool here is checked against the pydantic model the same signature builds
(``arguments_model``, made on demand): the JSON schema byte for byte, and for every
input the same validated values or the same error text.
"""

from __future__ import annotations

import json
from typing import Any, Optional

import pytest
from pydantic import BaseModel

from yoagent.core import ToolContext, ToolError, tool
from yoagent.core._tools.model_tool import arguments_schema
from yoagent.core._tools.plain_arguments import BASE_MODEL_NAMES
from yoagent.core.loop import FunctionTool


def context() -> ToolContext:
    return ToolContext(tool_call_id="c1", tool_name="t")


def _shown(**kwargs: Any) -> str:
    """What a tool returns: each argument with its type, so coercions show."""
    return json.dumps({name: [type(v).__name__, v] for name, v in kwargs.items()})


async def scalars(text: str, count: int, ratio: float, flag: bool) -> str:
    """Scalars.

    Args:
        text: Some text.
        count:   A count, described with spaces around.
    """
    return _shown(text=text, count=count, ratio=ratio, flag=flag)


async def defaults(
    text: str = "hi",
    count: int = 3,
    ratio: float = 0.5,
    flag: bool = False,
    maybe: str | None = None,
    other: Optional[int] = 7,  # noqa: UP045  # the spelling is what is tested
) -> str:
    """Defaults of every plain kind."""
    return _shown(text=text, count=count, ratio=ratio, flag=flag, maybe=maybe, other=other)


async def collections(
    names: list[str], sizes: list[int] | None, nested: list[list[float]] | None = None
) -> str:
    """Lists, optional and nested."""
    return _shown(names=names, sizes=sizes, nested=nested)


async def required_optional(
    value: None | bool,  # noqa: RUF036  # None first is a spelling under test
    *,
    after: float = 1.0,
    ctx: ToolContext | None = None,
) -> str:
    """A required optional value, a keyword-only one, and the context (not an argument)."""
    assert ctx is not None and ctx.tool_call_id == "c1"
    return _shown(value=value, after=after)


PLAIN_TOOLS = [scalars, defaults, collections, required_optional]

INPUTS: list[dict[str, Any]] = [
    {},
    {"text": "a", "count": 1, "ratio": 1.5, "flag": True},
    {"text": "a", "count": "2", "ratio": "3", "flag": "true"},
    {"text": 5, "count": 2.0, "ratio": 1, "flag": 1},
    {"text": "a", "count": 2.5, "ratio": "x", "flag": "maybe"},
    {"text": None, "count": None, "ratio": None, "flag": None},
    {"text": "a", "count": 1, "ratio": 1.0, "flag": False, "extra": 1},
    {"text": "a", "count": 1, "ratio": 1.0, "flag": False, "extra": None},
    {"maybe": None, "other": None},
    {"maybe": "x", "other": "8"},
    {"maybe": 3, "other": True},
    {"names": ["a", "b"], "sizes": None},
    {"names": "a", "sizes": [1, "2"]},
    {"names": ["a", None], "sizes": [1.5], "nested": [[1, "2.5"], []]},
    {"names": [], "sizes": [], "nested": None},
    {"names": [], "sizes": [], "nested": [1]},
    {"names": (1, 2), "sizes": {"a": 1}},
    {"value": None},
    {"value": "yes", "after": "2"},
    {"value": 0, "after": None},
    {"value": [], "after": float("inf")},
]


def _model_path(func: Any) -> FunctionTool:
    """The same function with its model built at once (what every signature had before)."""
    made = tool(func)
    made.arguments_model  # noqa: B018  # building it is the point
    return made


async def _outcome(made: FunctionTool, arguments: dict[str, Any], *, via_model: bool) -> str:
    try:
        if via_model:
            result = await made.run(made.parse(arguments), context())
        else:
            result = await made.execute(arguments, context())
    except ToolError as error:
        return f"error: {error}"
    return result.text


@pytest.mark.parametrize("func", PLAIN_TOOLS, ids=lambda f: f.__name__)
def test_plain_signatures_take_the_plain_path_and_build_no_model(func: Any) -> None:
    # Without this, every comparison below could pass by comparing the model with itself.
    made = tool(func)
    assert made._plain is not None  # pyright: ignore[reportPrivateUsage]
    assert made._model is None  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize("func", PLAIN_TOOLS, ids=lambda f: f.__name__)
def test_the_schema_is_the_models_byte_for_byte(func: Any) -> None:
    made = tool(func)
    expected = arguments_schema(made.arguments_model)
    assert json.dumps(made.parameters) == json.dumps(expected)


@pytest.mark.parametrize("func", PLAIN_TOOLS, ids=lambda f: f.__name__)
async def test_every_input_validates_as_the_model_validates_it(func: Any) -> None:
    made = tool(func)
    outcomes = [await _outcome(made, arguments, via_model=False) for arguments in INPUTS]
    assert made._model is None  # validated without it  # pyright: ignore[reportPrivateUsage]
    expected = [await _outcome(made, arguments, via_model=True) for arguments in INPUTS]
    assert outcomes == expected
    # Both paths were exercised: some inputs pass, some fail.
    assert any(o.startswith("error: ") for o in outcomes)
    assert any(not o.startswith("error: ") for o in outcomes)


async def test_coercions_nulls_and_defaults_on_the_plain_path() -> None:
    made = tool(defaults)
    result = await made.execute(
        {"count": "4", "flag": "yes", "maybe": None, "other": None}, context()
    )
    assert json.loads(result.text) == {
        "text": ["str", "hi"],
        "count": ["int", 4],
        "ratio": ["float", 0.5],
        "flag": ["bool", True],
        "maybe": ["NoneType", None],
        "other": ["NoneType", None],  # Optional: the null is the value, not "left out"
    }
    made = tool(scalars)
    with pytest.raises(ToolError) as caught:
        await made.execute({"text": None, "count": 1, "ratio": 1, "flag": 1, "x": None}, context())
    assert str(caught.value) == (
        "invalid arguments for scalars: text: Field required; x: Extra inputs are not permitted"
    )


async def test_arguments_that_are_not_an_object_are_refused_in_the_models_words() -> None:
    made = tool(scalars)
    wrong: Any = ["a"]
    with pytest.raises(ToolError) as plain:
        await made.execute(wrong, context())
    with pytest.raises(ToolError) as modelled:
        await _model_path(scalars).run(_model_path(scalars).parse(wrong), context())
    assert str(plain.value) == str(modelled.value)
    assert "Input should be a valid dictionary or instance of scalars_arguments" in str(plain.value)


def test_the_model_is_built_on_demand_and_kept() -> None:
    made = tool(scalars)
    model = made.arguments_model
    assert issubclass(model, BaseModel)
    assert made.arguments_model is model
    assert model.__name__ == "scalars_arguments"
    assert model.model_validate({"text": "a", "count": 1, "ratio": 1, "flag": True}).count == 1


def _signature_with(annotation: str, default: str = "") -> Any:
    namespace: dict[str, Any] = {}
    exec(  # a signature built for the test
        f"async def probe(value: {annotation}{default}) -> str:\n    return repr(value)\n",
        {"Optional": Optional, "Any": Any, "Literal": __import__("typing").Literal},
        namespace,
    )
    return namespace["probe"]


@pytest.mark.parametrize(
    ("annotation", "default"),
    [
        ("Literal['a', 'b']", ""),
        ("int | str", ""),
        ("dict[str, int]", ""),
        ("list", ""),
        ("Any", ""),
        ("Optional[int | str]", ""),
        ("list[int]", " = []"),
        ("float", " = float('nan')"),
        ("str", " = b'x'"),
        ("list[int, str]", ""),  # wrong, but pydantic reads it (its first argument)
        ("list[int, str] | None", " = None"),
    ],
)
async def test_other_signatures_keep_a_model_and_behave_alike(
    annotation: str, default: str
) -> None:
    made = tool(_signature_with(annotation, default))
    assert made._plain is None  # pyright: ignore[reportPrivateUsage]
    assert json.dumps(made.parameters) == json.dumps(arguments_schema(made.arguments_model))
    for arguments in ({"value": "a"}, {"value": 1}, {"value": None}, {}):
        assert await _outcome(made, arguments, via_model=False) == await _outcome(
            made, arguments, via_model=True
        )


def _one_parameter(name: str) -> Any:
    namespace: dict[str, Any] = {}
    exec(f"async def probe({name}: str) -> str:\n    return {name}\n", {}, namespace)
    return namespace["probe"]


@pytest.mark.parametrize("name", ["json", "schema", "copy"])
def test_a_name_shadowing_base_model_keeps_the_model_and_its_warning(name: str) -> None:
    with pytest.warns(UserWarning, match=f'Field name "{name}" .* shadows an attribute'):
        made = tool(_one_parameter(name))
    assert json.dumps(made.parameters) == json.dumps(arguments_schema(made.arguments_model))


def test_a_required_parameter_with_a_leading_underscore_is_refused() -> None:
    # pydantic keeps such a name off the model's fields: the model could never send it,
    # and every call failed (the function was called without it).
    with pytest.raises(TypeError, match="parameter '_private' starts with an underscore"):
        tool(_one_parameter("_private"))


async def test_a_leading_underscore_with_a_default_stays_off_the_schema() -> None:
    async def retry(text: str, _retries: int = 3, _ctx: ToolContext | None = None) -> str:
        """Retry."""
        assert _ctx is not None
        return f"{text} x{_retries}"

    made = tool(retry)
    assert made._plain is None  # pyright: ignore[reportPrivateUsage]
    assert list(made.parameters["properties"]) == ["text"]
    assert (await made.execute({"text": "go"}, context())).text == "go x3"
    with pytest.raises(ToolError, match="_retries: Extra inputs are not permitted"):
        await made.execute({"text": "go", "_retries": 1}, context())


def test_the_names_kept_off_the_plain_path_are_base_models_attributes() -> None:
    public = {name for name in dir(BaseModel) if not name.startswith("_")}
    assert public == BASE_MODEL_NAMES
