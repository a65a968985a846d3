"""The base of the built-in tools' argument models: ``null`` means "use the default"."""

from __future__ import annotations

from typing import Any, cast

from pydantic import model_validator

from yoagent.core import ToolArguments


class Arguments(ToolArguments):
    """Unknown keys are refused (core's :class:`ToolArguments`); a ``null`` optional is absent.

    Models often send ``"offset": null`` for an argument they mean to leave out; such
    keys are dropped before validation so the field's default applies. A ``null`` for
    a required field still fails ("Field required").
    """

    @model_validator(mode="before")
    @classmethod
    def _drop_nulls(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        items = cast(dict[Any, Any], data).items()
        return {key: value for key, value in items if value is not None}
