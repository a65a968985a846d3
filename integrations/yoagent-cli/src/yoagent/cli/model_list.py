"""The model ids ``/model`` offers for completion: the presets of the current provider and,
for a ``--base-url`` server, the models it lists (asked once, in the background)."""

from __future__ import annotations

from yoagent.core import ModelConfig
from yoagent.providers import models

from .config import OPENAI_COMPATIBLE
from .served import served_models


def preset_ids(provider: str) -> list[str]:
    """The ids of ``provider``'s named presets."""
    return [preset.id for preset in models.presets() if preset.provider == provider]


class ModelList:
    """The ids to complete for the agent's current model (the server's list is fetched on
    first use and kept)."""

    def __init__(self) -> None:
        self._served: dict[str, list[str]] = {}

    def ids(self, current: ModelConfig) -> list[str]:
        """Known ids for ``current``'s provider, the current one first."""
        found = [current.id, *preset_ids(current.provider)]
        if current.provider == OPENAI_COMPATIBLE and current.base_url:
            if current.base_url not in self._served:
                self._served[current.base_url] = list(served_models(current.base_url).ids)
            found += self._served[current.base_url]
        return list(dict.fromkeys(found))
