"""ModelTool: a tool whose arguments are a pydantic model (schema and validation from one place).

A subclass names a pydantic model for its arguments and implements :meth:`ModelTool.run`.
The JSON schema the model reads is the model's own (titles dropped, ``$ref``s inlined,
``additionalProperties: false``), and :meth:`ModelTool.execute` validates every call
against that same model in lax mode, so today's coercions hold (``"3"`` → 3,
``"true"`` → True) while an unknown key, a missing one or a wrong type comes back to
the model as an error result worded exactly as a ``@tool`` function's.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from yoagent.core._types.adapters import is_validation_error

from .contract import ToolContext, ToolError, ToolResult

if TYPE_CHECKING:  # pydantic comes with the first argument model, not with yoagent.core
    from pydantic import BaseModel, ValidationError

ArgumentsT = TypeVar("ArgumentsT", bound="BaseModel")


def invalid_arguments(tool_name: str, error: ValidationError) -> ToolError:
    """The error result for arguments a tool's model refused (shared with ``@tool``)."""
    problems = "; ".join(
        f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}" for e in error.errors()
    )
    return ToolError(f"invalid arguments for {tool_name}: {problems}")


def arguments_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a model reads for ``model``: no titles, ``$ref``s inlined, closed objects.

    A model that contains itself cannot be written in place; its schema keeps its
    ``$defs`` (titles still dropped).
    """
    schema = model.model_json_schema()
    schema.pop("description", None)  # the model's docstring is for developers; the tool has its own
    definitions = cast(dict[str, Any], schema.pop("$defs", {}))
    try:
        return cast(dict[str, Any], _wire(schema, definitions, ()))
    except _SelfReference:
        ref = schema.pop("$ref", None)  # the model itself refers to itself: write it out once
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            schema = {**definitions[ref.removeprefix("#/$defs/")], **schema}
            schema.pop("description", None)  # the docstring again, from the definition
        return cast(dict[str, Any], _wire({**schema, "$defs": definitions}, None, ()))


class _SelfReference(Exception):
    """A ``$ref`` met again inside its own definition."""


def _wire(node: Any, definitions: dict[str, Any] | None, seen: tuple[str, ...]) -> Any:
    """``node`` (a schema) without titles, with every ``$ref`` inlined from ``definitions``
    (left as it is when ``definitions`` is None).

    pydantic titles every field ("Path" for ``path``): noise on the wire. Providers such
    as Gemini reject ``$ref``, so nested models are written in place.
    """
    if isinstance(node, list):
        return [_wire(item, definitions, seen) for item in cast(list[Any], node)]
    if not isinstance(node, dict):
        return node
    mapping = cast(dict[str, Any], node)
    ref = mapping.get("$ref")
    if definitions is not None and isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen:
            raise _SelfReference(name)
        rest = {key: value for key, value in mapping.items() if key != "$ref"}
        return _wire({**definitions[name], **rest}, definitions, (*seen, name))
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        if key == "title" and isinstance(value, str):
            continue
        if key in ("properties", "$defs") and isinstance(value, dict):
            named = cast(dict[str, Any], value)  # names here are data, not keywords
            out[key] = {name: _wire(sub, definitions, seen) for name, sub in named.items()}
        else:
            out[key] = _wire(value, definitions, seen)
    return out


class ModelTool(ABC, Generic[ArgumentsT]):
    """A tool whose arguments are validated by a pydantic model.

    ``arguments`` is the model (use :class:`ToolArguments` as its base, or any model
    with ``extra="forbid"``). Subclasses implement :meth:`run`, which receives the
    validated model instance; everything else of the :class:`AgentTool` protocol is
    provided. A model may be built per instance (e.g. with a maximum taken from the
    tool's settings).
    """

    def __init__(self, *, name: str, description: str, arguments: type[ArgumentsT]) -> None:
        if arguments.model_config.get("extra") != "forbid":
            raise TypeError(
                f"{arguments.__name__} must refuse unknown keys (model_config extra='forbid')"
            )
        self._arguments = arguments
        self._describe(name, description, arguments_schema(arguments))

    def _describe(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        """What the model reads of the tool (a subclass whose model is built on first use
        calls this instead of ``__init__``)."""
        self._name = name
        self._description = description
        self._parameters = parameters

    @property
    def name(self) -> str:
        """The tool's wire name."""
        return self._name

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments (the argument model's)."""
        return self._parameters

    @property
    def arguments_model(self) -> type[ArgumentsT]:
        """The pydantic model every call is validated against."""
        return self._arguments

    def parse(self, arguments: dict[str, Any]) -> ArgumentsT:
        """Validate ``arguments``; a :class:`ToolError` the model can read when they are wrong."""
        try:
            return self.arguments_model.model_validate(arguments)
        except ValueError as error:  # pydantic's ValidationError is one
            if not is_validation_error(error):
                raise
            raise invalid_arguments(self._name, error) from None

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate the arguments, then :meth:`run`."""
        return await self.run(self.parse(arguments), ctx)

    @abstractmethod
    async def run(self, arguments: ArgumentsT, ctx: ToolContext) -> ToolResult:
        """Do the tool's work with validated arguments."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"
