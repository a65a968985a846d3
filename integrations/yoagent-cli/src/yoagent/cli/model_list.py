"""The model ids ``/model`` offers for completion: the presets of the current provider and,
for a ``--base-url`` server, the models it lists (asked once, in the background)."""

from __future__ import annotations

import json
import urllib.request
from typing import Any, cast

from yoagent.core import ModelConfig
from yoagent.providers import models

from .config import OPENAI_COMPATIBLE


def preset_ids(provider: str) -> list[str]:
    """The ids of ``provider``'s named presets."""
    return [preset.id for preset in models.presets() if preset.provider == provider]


def served_ids(base_url: str, timeout: float = 3.0) -> list[str]:
    """Every model id a server lists at ``GET {base_url}/models`` (empty when it does not
    answer, or not as an OpenAI-compatible server)."""
    url = base_url.rstrip("/") + "/models"
    if not url.startswith(("http://", "https://")):
        return []
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            payload: object = json.loads(response.read())
    except (OSError, ValueError):
        return []
    data = cast(dict[str, Any], payload).get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return []
    ids: list[str] = []
    for raw in cast(list[Any], data):
        model_id = cast(dict[str, Any], raw).get("id") if isinstance(raw, dict) else None
        if isinstance(model_id, str) and model_id:
            ids.append(model_id)
    return ids


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
                self._served[current.base_url] = served_ids(current.base_url)
            found += self._served[current.base_url]
        return list(dict.fromkeys(found))
