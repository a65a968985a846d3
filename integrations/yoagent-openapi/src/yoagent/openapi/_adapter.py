"""OpenApiToolAdapter: an OpenAPI document, read once, as one tool per operation."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx

from yoagent.core.support import display_url

from ._build import build
from ._config import OpenApiConfig, OperationFilter
from ._http import Caller
from ._load import fetch, parse_text, read_file
from ._log import logger
from ._operation import SkippedOperation
from ._refs import DOCUMENT_URI
from ._source import OpenApiToolSource
from ._tool import OpenApiTool


class OpenApiToolAdapter:
    """The operations of one OpenAPI 3.0/3.1 document as :class:`OpenApiTool`\\ s.

    Build it with :meth:`from_spec` (a dict), :meth:`from_str` (JSON or YAML text),
    :meth:`from_file` or :meth:`from_url`. ``config`` says where requests go and how
    (credentials, timeout, size cap); ``filter`` which operations become tools;
    ``client`` is the ``httpx.AsyncClient`` the calls use (yours to close; without one,
    each call opens and closes its own).

    Operations the filter accepts but that cannot become tools are in :attr:`skipped`,
    each with the reason (also logged as a warning). A fault in the document as a whole
    raises :class:`OpenApiError`.
    """

    def __init__(
        self,
        spec: dict[str, Any],
        *,
        config: OpenApiConfig | None = None,
        filter: OperationFilter | None = None,
        client: httpx.AsyncClient | None = None,
        document_url: str | None = None,
        base_uri: str = DOCUMENT_URI,
    ) -> None:
        self.config = config or OpenApiConfig()
        self.filter = filter or OperationFilter()
        built = build(
            spec,
            base_uri=base_uri,
            document_url=document_url,
            config=self.config,
            operation_filter=self.filter,
        )
        self.openapi_version = built.openapi
        """The document's ``openapi`` field (``3.0.3``, ``3.1.0``...)."""
        self.skipped: list[SkippedOperation] = built.skipped
        """Operations the filter accepted that could not become tools, with the reason."""
        caller = Caller(self.config, client)
        self._tools = [OpenApiTool(operation, caller) for operation in built.operations]
        for skipped in self.skipped:
            logger.warning("OpenAPI operation left out: %s", skipped)

    # --- construction --------------------------------------------------------------------

    @classmethod
    def from_spec(
        cls,
        spec: dict[str, Any],
        *,
        config: OpenApiConfig | None = None,
        filter: OperationFilter | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> OpenApiToolAdapter:
        """Tools from a document already parsed into a dict."""
        return cls(spec, config=config, filter=filter, client=client)

    @classmethod
    def from_str(
        cls,
        text: str,
        *,
        config: OpenApiConfig | None = None,
        filter: OperationFilter | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> OpenApiToolAdapter:
        """Tools from a document's JSON or YAML text."""
        spec = parse_text(text, origin="the document")
        return cls(spec, config=config, filter=filter, client=client)

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        config: OpenApiConfig | None = None,
        filter: OperationFilter | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> OpenApiToolAdapter:
        """Tools from a JSON or YAML file."""
        spec, _ = read_file(path)
        uri = Path(path).resolve().as_uri()
        return cls(spec, config=config, filter=filter, client=client, base_uri=uri)

    @classmethod
    async def from_url(
        cls,
        url: str,
        *,
        config: OpenApiConfig | None = None,
        filter: OperationFilter | None = None,
        client: httpx.AsyncClient | None = None,
    ) -> OpenApiToolAdapter:
        """Tools from the document at ``url`` (fetched with ``client`` when given).

        A relative server URL in the document is resolved against ``url`` (where it
        ended up, after redirects). The text is parsed and the tools built on a worker
        thread (``anyio.to_thread``), so the event loop runs on while a large document
        loads.
        """
        text, final_url = await fetch(url, client)

        def load() -> OpenApiToolAdapter:
            spec = parse_text(text, origin=display_url(url, path=False))
            return cls(
                spec,
                config=config,
                filter=filter,
                client=client,
                document_url=final_url,
                base_uri=final_url,
            )

        return await anyio.to_thread.run_sync(load)

    # --- what it offers ------------------------------------------------------------------

    @property
    def tools(self) -> list[OpenApiTool]:
        """One tool per operation, in document order."""
        return list(self._tools)

    def tool(self, name: str) -> OpenApiTool:
        """The tool called ``name`` (a ``KeyError`` names the ones there are)."""
        for each in self._tools:
            if each.name == name:
                return each
        raise KeyError(f"no tool {name!r}; the tools are {[t.name for t in self._tools]}")

    def source(self) -> OpenApiToolSource:
        """These tools as a :class:`~yoagent.core.ToolSource` for ``Agent(tool_sources=...)``."""
        return OpenApiToolSource(self._tools)

    def __repr__(self) -> str:
        return (
            f"OpenApiToolAdapter(openapi={self.openapi_version!r}, tools={len(self._tools)}, "
            f"skipped={len(self.skipped)})"
        )
