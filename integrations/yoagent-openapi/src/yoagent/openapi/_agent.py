"""Giving a document's tools to an :class:`~yoagent.core.Agent`."""

from __future__ import annotations

import os
from typing import Any

import httpx

from yoagent.core import Agent

from ._adapter import OpenApiToolAdapter
from ._config import OpenApiConfig, OperationFilter


def _add_source(agent: Agent, adapter: OpenApiToolAdapter) -> None:
    sources = agent.settings.tool_sources
    agent.settings = agent.settings.replace(tool_sources=(*sources, adapter.source()))


def with_openapi_spec(
    agent: Agent,
    spec: dict[str, Any],
    *,
    config: OpenApiConfig | None = None,
    filter: OperationFilter | None = None,
    client: httpx.AsyncClient | None = None,
) -> OpenApiToolAdapter:
    """Offer the operations of ``spec`` (a parsed document) to ``agent`` as tools.

    They are added as a tool source (``agent.settings.tool_sources``), so they are offered from
    the agent's next run on, after its own tools when names collide. Returns the
    adapter (its ``skipped`` says which operations were left out, and why).
    """
    adapter = OpenApiToolAdapter.from_spec(spec, config=config, filter=filter, client=client)
    _add_source(agent, adapter)
    return adapter


def with_openapi_file(
    agent: Agent,
    path: str | os.PathLike[str],
    *,
    config: OpenApiConfig | None = None,
    filter: OperationFilter | None = None,
    client: httpx.AsyncClient | None = None,
) -> OpenApiToolAdapter:
    """Offer the operations of the JSON or YAML document at ``path`` to ``agent``."""
    adapter = OpenApiToolAdapter.from_file(path, config=config, filter=filter, client=client)
    _add_source(agent, adapter)
    return adapter


async def with_openapi_url(
    agent: Agent,
    url: str,
    *,
    config: OpenApiConfig | None = None,
    filter: OperationFilter | None = None,
    client: httpx.AsyncClient | None = None,
) -> OpenApiToolAdapter:
    """Fetch the document at ``url`` and offer its operations to ``agent``."""
    adapter = await OpenApiToolAdapter.from_url(url, config=config, filter=filter, client=client)
    _add_source(agent, adapter)
    return adapter
