"""``@tool``: a typed function becomes an :class:`~yoagent.core.AgentTool`.

The description and each parameter's description come from the docstring (Google, NumPy
or reST style, read by ``docstring_parser``); the argument schema from the signature
(via pydantic). Async functions run in the loop; plain functions in a worker thread.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    TypeGuard,
    cast,
    get_args,
    get_type_hints,
    overload,
)

import anyio.to_thread

from yoagent.core._types.adapters import is_validation_error

from .contract import AgentTool, ToolContext, ToolResult
from .model_tool import ModelTool, invalid_arguments
from .plain_arguments import plain_arguments

if TYPE_CHECKING:
    import docstring_parser
    from pydantic import BaseModel

    from .arguments import ToolArguments

ToolFunction = Callable[..., Any]
"""A function ``@tool`` accepts: async or plain, with typed parameters."""


class FunctionTool(ModelTool["ToolArguments"]):
    """A tool made from a function; its schema comes from the signature and docstring.

    The signature becomes a :class:`ToolArguments` model, so a ``@tool`` function is a
    :class:`ModelTool`: the same schema (no titles, nested models written in place),
    the same lax validation and the same argument errors as every other tool. For plain
    JSON parameter types the model is built only when :attr:`arguments_model` is read
    (or arguments that are not an object need its error text); until then pydantic-core
    validates against the schema the model would have
    (:mod:`~yoagent.core._tools.plain_arguments`).
    """

    def __init__(
        self, func: ToolFunction, *, name: str | None = None, description: str | None = None
    ):
        if not callable(func) or isinstance(func, type):
            raise TypeError(f"@tool needs a function, got {func!r}")
        self._func = func
        self._is_async = inspect.iscoroutinefunction(func)
        tool_name: str = name or getattr(func, "__name__", "") or type(func).__name__
        import docstring_parser  # ≈ 5 ms of import, paid by the first @tool only

        docs = docstring_parser.parse(inspect.getdoc(func) or "")
        self._context_param: str | None = None
        documented = {
            param.arg_name: param.description.strip()
            for param in docs.params
            if param.description and param.description.strip()
        }
        types = self._parameter_types(func, tool_name)
        defaults = {
            name: param.default
            for name, param in inspect.signature(func).parameters.items()
            if name in types and param.default is not inspect.Parameter.empty
        }
        shown_description = description or _describe(docs) or tool_name
        self._model: type[ToolArguments] | None = None
        self._make_model = functools.partial(
            _build_model, f"{tool_name}_arguments", types, defaults, documented
        )
        # Plain JSON types need no model until someone asks for it (see plain_arguments).
        self._plain = plain_arguments(f"{tool_name}_arguments", types, defaults, documented)
        if self._plain is not None:
            self._describe(tool_name, shown_description, self._plain.schema)
            return
        # pydantic's schema generator (≈ 4–6 MB, ≈ 80–160 ms) comes with the first such tool.
        from pydantic import PydanticUserError

        try:
            self._model = self._make_model()
            super().__init__(name=tool_name, description=shown_description, arguments=self._model)
        except PydanticUserError as error:  # a type pydantic cannot read or describe
            raise _unusable_parameter(tool_name, types, error) from None

    @property
    def arguments_model(self) -> type[ToolArguments]:
        """The pydantic model of the arguments (for plain parameter types, built now)."""
        if self._model is None:
            self._model = self._make_model()
        return self._model

    def _parameter_types(self, func: ToolFunction, name: str) -> dict[str, Any]:
        """Each parameter's type (``Any`` when unannotated), the context parameter left
        out; a ``TypeError`` naming the tool for what the signature cannot be."""
        try:
            hints = get_type_hints(func, include_extras=True)
        except Exception as error:  # NameError: a forward reference to a missing name
            raise TypeError(
                f"@tool {name}: its annotations cannot be resolved "
                f"({type(error).__name__}: {error})"
            ) from None
        types: dict[str, Any] = {}
        for param in inspect.signature(func).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"@tool does not support *args/**kwargs ({name})")
            annotation = hints.get(param.name, Any)  # unannotated: any JSON value (documented)
            if _is_context(annotation):
                self._context_param = param.name
                continue
            if param.name.startswith("_") and param.default is inspect.Parameter.empty:
                # pydantic keeps such a name off the model's fields (the model never sees
                # it, its default always applies): without a default, every call failed.
                raise TypeError(
                    f"@tool {name}: parameter {param.name!r} starts with an underscore, so "
                    "the model cannot send it; give it a default or rename it"
                )
            types[param.name] = annotation
        return types

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate the arguments, then call the function."""
        if self._plain is None or not isinstance(cast(object, arguments), dict):
            return await self.run(self.parse(arguments), ctx)
        try:
            kwargs = self._plain.validate(arguments)
        except ValueError as error:  # pydantic-core's ValidationError is one
            if not is_validation_error(error):
                raise
            raise invalid_arguments(self.name, error) from None
        return await self._call(kwargs, ctx)

    async def run(self, arguments: ToolArguments, ctx: ToolContext) -> ToolResult:
        """Call the function with the validated arguments (and the context, if it asks)."""
        # field name → validated value, nested models kept as models
        return await self._call(dict(arguments), ctx)

    async def _call(self, kwargs: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        if self._is_async:
            value = await self._func(**kwargs)
        else:
            # A plain function may block: it runs in a worker thread. A cancel waits for it
            # to return (a thread cannot be stopped); long ones should poll ``ctx.cancelled``.
            value = await anyio.to_thread.run_sync(functools.partial(self._func, **kwargs))
        return _to_result(value)


def _build_model(
    model_name: str, types: dict[str, Any], defaults: dict[str, Any], documented: dict[str, str]
) -> type[ToolArguments]:
    from pydantic import Field, create_model

    fields: dict[str, Any] = {}
    for param_name, annotation in types.items():
        doc = documented.get(param_name)
        if doc:
            annotation = Annotated[annotation, Field(description=doc)]
        fields[param_name] = (annotation, defaults.get(param_name, ...))
    from .arguments import ToolArguments  # the first pydantic model: made on first use

    return create_model(model_name, __base__=ToolArguments, **fields)


def _unusable_parameter(name: str, types: dict[str, Any], error: Exception) -> TypeError:
    """The ``TypeError`` for a tool whose arguments model failed: which parameter's type
    pydantic could not read from JSON or describe as a JSON schema (found by trying each)."""
    from pydantic import TypeAdapter

    for param_name, annotation in types.items():
        try:
            TypeAdapter(annotation).json_schema()
        except Exception as problem:  # pydantic's PydanticUserError family, mostly
            if type(problem).__name__ == "PydanticInvalidForJsonSchema":
                why = "it has no JSON schema to show the model"
            else:
                why = "pydantic cannot read it from the model's JSON arguments"
            return TypeError(
                f"@tool {name}: parameter {param_name!r} has type {_type_name(annotation)}, "
                f"which a tool cannot take: {why}. Use a type that JSON can carry (str, int, "
                "float, bool, a list or dict of those, a pydantic model, a Literal, an Enum) "
                "and build the object inside the tool"
            )
    return TypeError(f"@tool {name}: its arguments cannot be made a model ({error})")


def _type_name(annotation: Any) -> str:
    name = getattr(annotation, "__qualname__", None)
    return name if isinstance(name, str) and not get_args(annotation) else repr(annotation)


def _describe(docs: docstring_parser.Docstring) -> str:
    """The docstring's prose (summary and body), without its parameter sections."""
    parts = [docs.short_description or "", docs.long_description or ""]
    return "\n\n".join(part.strip() for part in parts if part and part.strip())


def _is_context(annotation: Any) -> bool:
    """True for ``ToolContext`` and ``ToolContext | None``."""
    return annotation is ToolContext or ToolContext in get_args(annotation)


def _to_result(value: Any) -> ToolResult:
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult.from_text(value)
    if value is None:
        return ToolResult.from_text("")
    if _is_pydantic_model(value):
        return ToolResult.from_text(value.model_dump_json(), details=value.model_dump(mode="json"))
    text = json.dumps(value, default=str)
    # ``details`` hold what the text says, as JSON values: they round-trip through sessions.
    return ToolResult.from_text(text, details=json.loads(text))


def _is_pydantic_model(value: Any) -> TypeGuard[BaseModel]:
    # Nothing can be a model before pydantic.main is loaded: a tool of plain types that
    # returns a dict does not load it to ask.
    main = sys.modules.get("pydantic.main")
    return main is not None and isinstance(value, cast("type[BaseModel]", main.BaseModel))


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
    """Turn a typed function (async, or plain: it then runs in a worker thread) into a tool.

    The function's name and docstring become the tool's name and description, its typed
    parameters the argument schema (via pydantic), each described by its entry in the
    docstring's ``Args:`` / ``Parameters`` section. A parameter typed ``ToolContext``
    gets the call's context and is not part of the schema. Invalid arguments come back
    to the model as an error result; the run goes on.
    """
    if func is not None:
        return FunctionTool(func, name=name, description=description)

    def wrap(inner: ToolFunction) -> FunctionTool:
        return FunctionTool(inner, name=name, description=description)

    return cast(Callable[[ToolFunction], FunctionTool], wrap)


def as_tools(value: object, *, where: str = "tools") -> list[AgentTool]:
    """``value`` (a list of tools) checked, with plain functions made tools as ``@tool``
    does; a ``TypeError`` naming what is wrong otherwise."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise TypeError(
            f"{where} must be a list of tools, got {type(value).__name__}"
            + (" (wrap a single tool in a list)" if callable(value) or _is_tool(value) else "")
        )
    tools: list[AgentTool] = []
    for index, item in enumerate(cast("Sequence[object]", value)):
        if _is_tool(item):
            tools.append(cast(AgentTool, item))
        elif callable(item) and not isinstance(item, type):
            tools.append(FunctionTool(item))
        else:
            raise TypeError(
                f"{where}[{index}] is not a tool: {item!r} (a tool has name, description, "
                "parameters and execute; a plain function is made one as @tool does)"
            )
    return tools


def _is_tool(item: object) -> bool:
    """True for an object shaped like an ``AgentTool``. Its properties are not evaluated
    (a tool whose schema fails is left out of a run with a log line, not refused here)."""
    if isinstance(item, type):
        return False
    kind = type(item)
    own = getattr(item, "__dict__", {})
    return all(
        hasattr(kind, attribute) or attribute in own
        for attribute in ("name", "description", "parameters", "execute")
    )
