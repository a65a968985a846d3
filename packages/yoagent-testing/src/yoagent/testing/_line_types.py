"""The type of every field of a cassette's call and tool records, checked as a line is read.

A line is JSON someone may have edited by hand. Each field is checked for the exact type
replay relies on, so a wrong one is refused at load with the field's name, never read as
something else: ``"reply": null`` as a cancelled call (which then waits forever),
``"is_error": "true"`` as a success, ``NaN`` or ``Infinity`` (which Python's JSON reader
accepts) as a time to sleep. A field the writer leaves out when it has nothing to say
(``times``, ``elapsed``, ``reply``, ``error``, ``cancelled``) is left out, never ``null``.
Unknown fields are ignored, as unknown record kinds are (a later minor addition).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    Tag,
    ValidationError,
    field_validator,
)

from yoagent.core import ErrorKind, ImageContent, TextContent

from ._codec import CassetteError

Seconds = Annotated[float, Field(strict=True, ge=0, allow_inf_nan=False)]
"""A finite, non-negative number of seconds (an integer is one too; a boolean is not)."""
Blocks = list[Annotated[TextContent | ImageContent, Field(discriminator="type")]]


def _true(value: bool) -> bool:
    if not value:
        raise ValueError("must be true (leave the field out instead)")
    return value


Yes = Annotated[StrictBool, AfterValidator(_true)]
"""``true`` itself (``1`` is not: pydantic's ``Literal[True]`` takes it)."""
FieldsT = TypeVar("FieldsT", bound=BaseModel)


def _not_null(value: Any) -> Any:
    if value is None:
        raise ValueError("must not be null (leave the field out instead)")
    return value


class _Fields(BaseModel):
    model_config = ConfigDict(extra="ignore")


class ErrorFields(_Fields):
    """A failed call's ``error``: enough to raise the same ``ProviderError`` again."""

    kind: ErrorKind
    message: StrictStr
    status: StrictInt | None = None
    retry_after: Seconds | Literal["inf"] | None = None
    type: StrictStr | None = None


class CallFields(_Fields):
    """A ``{"kind": "call"}`` line (its ``request`` is resolved, and its messages, deltas
    and reply read as yoagent's types, by the reader)."""

    kind: Literal["call"]
    n: Annotated[int, Field(strict=True, ge=0)]
    request: dict[str, Any]
    deltas: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    times: list[Seconds] | None = None
    elapsed: Seconds | None = None
    reply: dict[str, Any] | None = None
    error: ErrorFields | None = None
    cancelled: Yes | None = None

    _present = field_validator("times", "elapsed", "reply", "error", "cancelled", mode="before")(
        _not_null
    )


class _Update(_Fields):
    kind: Literal["update"]
    content: Blocks
    details: Any = None


class _Progress(_Fields):
    kind: Literal["progress"]
    text: StrictStr


class _LaterUpdate(_Fields):
    """An update kind from a later minor addition: kept, skipped by replay."""

    kind: StrictStr


def _update_kind(value: Any) -> str:
    kind = cast(dict[str, Any], value).get("kind") if isinstance(value, dict) else None
    return kind if kind in ("update", "progress") else "later"


Update = Annotated[
    Annotated[_Update, Tag("update")]
    | Annotated[_Progress, Tag("progress")]
    | Annotated[_LaterUpdate, Tag("later")],
    Discriminator(_update_kind),
]


class ToolFields(_Fields):
    """A ``{"kind": "tool"}`` line."""

    kind: Literal["tool"]
    tool_call_id: StrictStr
    tool_name: StrictStr
    arguments: dict[str, Any] = Field(default_factory=dict[str, Any])
    content: Blocks = Field(default_factory=list[TextContent | ImageContent])
    details: Any = None
    is_error: StrictBool = False
    updates: list[Update] = Field(default_factory=list[Update])


def check_fields(model: type[FieldsT], record: dict[str, Any], what: str) -> FieldsT:
    """``record`` read as ``model``; a :class:`CassetteError` naming ``what`` and the first
    wrong field otherwise."""
    try:
        return model.model_validate(record)
    except ValidationError as error:
        raise CassetteError(f"{what}: {brief(error)}") from None


def brief(error: ValidationError) -> str:
    """The first problem pydantic found: where (``times.0``) and what."""
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"]) or "(record)"
    return f"{where}: {first['msg']}"
