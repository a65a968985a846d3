"""Helpers for yoagent-pricing's tests: small tables, configs and scripted replies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
)
from yoagent.pricing import PriceTable

FIXTURES = Path(__file__).parent / "fixtures"
SHARED_REFERENCE = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference"

MODELS_DEV_WITH_A_SKIP: dict[str, Any] = {
    "anthropic": {
        "models": {
            "claude-sonnet-5": {"cost": {"input": 2.2, "output": 11}},
            "odd": {"cost": {"input": 1, "output": 2, "per_request": 1}},
        }
    }
}
"""A models.dev document: one model that maps, one (``odd``) skipped for its unknown key."""


def table(providers: dict[str, dict[str, dict[str, Any]]], **top: Any) -> PriceTable:
    """A table from ``{provider: {model: entry}}`` in the file format."""
    return PriceTable.from_json(json.dumps({"schema": 1, **top, "providers": providers}))


def one(entry: dict[str, Any] | str) -> str:
    """A price file's text with one entry, ``p/m``."""
    body = entry if isinstance(entry, str) else json.dumps(entry)
    return f'{{"schema": 1, "providers": {{"p": {{"m": {body}}}}}}}'


def config(provider: str, id: str) -> ModelConfig:
    """A config as a first-party constructor would build it (no ``cost`` of its own)."""
    return ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider=provider, id=id)


def text_reply(text: str, usage: Usage) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], usage=usage)


def tool_reply(name: str, usage: Usage, **arguments: Any) -> AssistantMessage:
    call = ToolCall(id=f"call_{name}", name=name, arguments=arguments)
    return AssistantMessage(content=[call], stop_reason=StopReason.TOOL_USE, usage=usage)
