"""A pydantic ``TypeAdapter`` built on first use, not at import.

Building the core schema of a large discriminated union costs milliseconds, and
importing pydantic itself tens of them; a program that never (de)serializes a message or
an event should not pay either on ``import``.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Generic, TypeGuard, TypeVar

if TYPE_CHECKING:
    from pydantic import TypeAdapter, ValidationError

T = TypeVar("T")


class LazyTypeAdapter(Generic[T]):
    """The (de)serialization methods of ``TypeAdapter(type_)``, which is built on first use."""

    __slots__ = ("_adapter", "_lock", "_type")

    def __init__(self, type_: Any) -> None:
        self._type = type_
        self._adapter: TypeAdapter[T] | None = None
        self._lock = threading.Lock()

    @property
    def adapter(self) -> TypeAdapter[T]:
        """The underlying ``TypeAdapter`` (built now if it was not yet)."""
        adapter = self._adapter
        if adapter is None:
            with self._lock:
                adapter = self._adapter
                if adapter is None:
                    from pydantic import TypeAdapter  # pydantic is imported on first use

                    adapter = TypeAdapter[T](self._type)
                    self._adapter = adapter
        return adapter

    def validate_python(self, obj: Any, /, **options: Any) -> T:
        """Validate a Python object (e.g. a dict read from JSON) into the type."""
        return self.adapter.validate_python(obj, **options)

    def validate_json(self, data: str | bytes | bytearray, /, **options: Any) -> T:
        """Parse and validate JSON into the type."""
        return self.adapter.validate_json(data, **options)

    def dump_python(self, value: T, /, **options: Any) -> Any:
        """The value as plain Python data (``mode="json"`` for JSON-ready values)."""
        return self.adapter.dump_python(value, **options)

    def dump_json(self, value: T, /, **options: Any) -> bytes:
        """The value as JSON bytes."""
        return self.adapter.dump_json(value, **options)

    def json_schema(self, **options: Any) -> dict[str, Any]:
        """The JSON schema of the type."""
        return self.adapter.json_schema(**options)

    def __repr__(self) -> str:
        built = "built" if self._adapter is not None else "not built yet"
        return f"LazyTypeAdapter({self._type!r}, {built})"


def is_validation_error(error: BaseException) -> TypeGuard[ValidationError]:
    """Whether ``error`` is pydantic's ``ValidationError``, without importing pydantic for
    ``import yoagent.core``: catch ``ValueError`` (which it is) and ask this."""
    from pydantic import ValidationError  # loaded already: whatever raised it imported it

    return isinstance(error, ValidationError)
