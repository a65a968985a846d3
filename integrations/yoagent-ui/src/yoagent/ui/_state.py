"""The agent's shared state as a front-end's state object: snapshots and JSON Patch deltas.

A front-end's state is one JSON object; the agent's :class:`~yoagent.core.SharedState` is
text under keys. Each top-level key of the object is a key of the shared state, its value
stored as JSON text; a value the agent stored that is not JSON reads back as the text.
"""

from __future__ import annotations

import json
from typing import Any, cast

from yoagent.core import SharedState
from yoagent.core.state import SharedStateError

from ._errors import BadRunInputError


def _decode(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _pointer(key: str) -> str:
    return "/" + key.replace("~", "~0").replace("/", "~1")


class StateSync:
    """Follows a shared state: what the front-end has seen of it, and what changed since."""

    __slots__ = ("_seen", "shared")

    def __init__(self, shared: SharedState) -> None:
        self.shared = shared
        self._seen: dict[str, Any] = {}

    async def seed(self, state: object) -> None:
        """Make the shared state hold exactly the front-end's ``state`` (an object)."""
        if not isinstance(state, dict):
            raise BadRunInputError(
                f"state must be a JSON object (its keys are the agent's shared state keys), "
                f"got {type(state).__name__}"
            )
        wanted = {
            str(key): json.dumps(value) for key, value in cast("dict[Any, Any]", state).items()
        }
        for key in await self.shared.list():
            if key not in wanted:
                await self.shared.remove(key)
        try:
            for key, text in wanted.items():
                await self.shared.set(key, text)
        except SharedStateError as error:  # an unusable key or value, or too much
            raise BadRunInputError(f"state: {error}") from None

    async def current(self) -> dict[str, Any]:
        """The shared state as a JSON object."""
        found: dict[str, Any] = {}
        for key in await self.shared.list():
            text = await self.shared.get(key)
            if text is not None:
                found[key] = _decode(text)
        return found

    async def snapshot(self) -> dict[str, Any]:
        """The whole state, remembered as seen."""
        self._seen = await self.current()
        return self._seen

    async def delta(self) -> list[dict[str, Any]]:
        """The JSON Patch operations from the state last seen to now (none: unchanged)."""
        now = await self.current()
        ops: list[dict[str, Any]] = [
            {"op": "remove", "path": _pointer(key)} for key in self._seen if key not in now
        ]
        for key, value in now.items():
            if key not in self._seen:
                ops.append({"op": "add", "path": _pointer(key), "value": value})
            elif self._seen[key] != value:
                ops.append({"op": "replace", "path": _pointer(key), "value": value})
        self._seen = now
        return ops
