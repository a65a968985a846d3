"""``Annotated`` metadata that makes a union a tagged union for pydantic, without importing it.

``Annotated[A | B, Field(discriminator="type")]`` needs pydantic when the alias is
defined, so ``import yoagent.core`` paid for pydantic (≈ 40 % of the import, see
``benchmarks/RESULTS.md``) even in a program that never validates a message. This marker
is read by pydantic only when a schema is built (a ``TypeAdapter``, a model field), and
then does exactly what ``pydantic.Discriminator`` does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import CoreSchema


class Tagged:
    """The union's members are told apart by the value of their field ``field``."""

    __slots__ = ("field",)

    def __init__(self, field: str) -> None:
        self.field = field

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        from pydantic import Discriminator

        return Discriminator(self.field).__get_pydantic_core_schema__(source, handler)

    def __repr__(self) -> str:
        return f"Tagged({self.field!r})"
