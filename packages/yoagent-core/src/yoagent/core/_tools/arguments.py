"""ToolArguments, the base for argument models, in its own module.

Defining the first pydantic model of a process costs ≈ 30–60 ms (pydantic loads its
plugins through ``importlib.metadata`` then): ``yoagent.core`` imports this module on
first use of the name, so an application that never touches it does not pay that at
import.
"""

from __future__ import annotations

import types
from typing import Annotated, Any, ClassVar, Union, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, model_validator


class ToolArguments(BaseModel):
    """A convenient base for argument models: unknown keys are refused, values coerced (lax).

    A ``null`` for an argument whose type does not admit ``None`` counts as left out:
    models often send ``"offset": null`` for an argument they mean to omit, so the
    field's default applies (a required one is still "Field required"). A field typed
    ``X | None`` receives the ``None``; a ``null`` under an unknown key is refused.
    """

    model_config = ConfigDict(extra="forbid")
    _absent_when_null: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._absent_when_null = frozenset(
            field.alias or name
            for name, field in cls.model_fields.items()
            if not _admits_none(field.annotation)
        )

    @model_validator(mode="before")
    @classmethod
    def _null_means_absent(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        items = cast(dict[Any, Any], data).items()
        return {k: v for k, v in items if v is not None or k not in cls._absent_when_null}


def _admits_none(annotation: Any) -> bool:
    if annotation is None or annotation is type(None) or annotation is Any:
        return True
    origin = get_origin(annotation)
    if origin is Annotated:
        return _admits_none(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return any(_admits_none(member) for member in get_args(annotation))
    return False
