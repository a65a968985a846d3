"""``@tool``: a typed async function becomes an :class:`~yoagent.core.AgentTool`."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast, get_args, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from .contract import ToolContext, ToolError, ToolResult

ToolFunction = Callable[..., Awaitable[Any]]


class FunctionTool:
    """A tool made from an async function; its schema comes from the signature."""

    def __init__(
        self, func: ToolFunction, *, name: str | None = None, description: str | None = None
    ):
        if not inspect.iscoroutinefunction(func):
            raise TypeError(f"@tool needs an async function; {func.__qualname__} is not one")
        self._func = func
        self._name = name or func.__name__
        self._description = description or inspect.cleandoc(func.__doc__ or "") or self._name
        self._context_param: str | None = None
        self._model = self._build_model(func)
        schema = self._model.model_json_schema()
        schema.pop("title", None)
        self._parameters = schema

    def _build_model(self, func: ToolFunction) -> type[BaseModel]:
        hints = get_type_hints(func, include_extras=True)
        fields: dict[str, Any] = {}
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"@tool does not support *args/**kwargs ({func.__qualname__})")
            annotation = hints.get(param.name, Any)
            if _is_context(annotation):
                self._context_param = param.name
                continue
            default = ... if param.default is inspect.Parameter.empty else param.default
            fields[param.name] = (annotation, default)
        return create_model(
            f"{self._name}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )

    @property
    def name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> dict[str, Any]:
        return self._parameters

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            parsed = self._model.model_validate(arguments)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
                for e in error.errors()
            )
            raise ToolError(f"invalid arguments for {self._name}: {problems}") from None
        kwargs = dict(parsed)  # field name → validated value, nested models kept as models
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        return _to_result(await self._func(**kwargs))

    def __repr__(self) -> str:
        return f"FunctionTool({self._name!r})"


def _is_context(annotation: Any) -> bool:
    """True for ``ToolContext`` and ``ToolContext | None``."""
    return annotation is ToolContext or ToolContext in get_args(annotation)


def _to_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.from_text(value)
    if isinstance(value, BaseModel):
        return ToolResult.from_text(value.model_dump_json(), details=value.model_dump(mode="json"))
    if value is None:
        return ToolResult.from_text("")
    text = json.dumps(value, default=str)
    # ``details`` hold what the text says, as JSON values: they round-trip through sessions.
    return ToolResult.from_text(text, details=json.loads(text))


@overload
def tool(func: ToolFunction, /) -> FunctionTool: ...


@overload
def tool(
    *, name: str | None = None, description: str | None = None
) -> Callable[[ToolFunction], FunctionTool]: ...


def tool(
    func: ToolFunction | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
) -> FunctionTool | Callable[[ToolFunction], FunctionTool]:
    """Turn a typed async function into a tool.

    The function's name and docstring become the tool's name and description, its typed
    parameters the argument schema (via pydantic). A parameter typed ``ToolContext`` gets
    the call's context and is not part of the schema. Invalid arguments come back to the
    model as an error result; the run goes on.
    """
    if func is not None:
        return FunctionTool(func, name=name, description=description)

    def wrap(inner: ToolFunction) -> FunctionTool:
        return FunctionTool(inner, name=name, description=description)

    return cast(Callable[[ToolFunction], FunctionTool], wrap)
