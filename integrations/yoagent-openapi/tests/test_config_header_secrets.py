"""A credential the config sends in its own headers (not through ``auth``) is kept out of
what the model reads, as the auth's own secrets are. From the mutation triage: the test
pins a behaviour a surviving mutant changed."""

from __future__ import annotations

from typing import Any

import httpx

from yoagent.core import ToolContext
from yoagent.openapi import OpenApiConfig, OpenApiToolAdapter

SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Echo", "version": "1"},
    "servers": [{"url": "http://api.example"}],
    "paths": {"/whoami": {"get": {"operationId": "whoami"}}},
}
HEADER_VALUE = "tenant-credential-7f3a9c"


def _echo_headers(request: httpx.Request) -> httpx.Response:
    # A careless server that reports what it was sent.
    sent = "; ".join(f"{name}={value}" for name, value in request.headers.items())
    return httpx.Response(200, text=f"you sent {sent}", headers={"content-type": "text/plain"})


async def test_a_credential_header_of_the_config_is_sent_and_scrubbed_from_the_reply() -> None:
    config = OpenApiConfig(headers={"X-Api-Key": HEADER_VALUE, "X-Tenant": "acme"})
    async with httpx.AsyncClient(transport=httpx.MockTransport(_echo_headers)) as client:
        tool = OpenApiToolAdapter.from_spec(SPEC, config=config, client=client).tool("whoami")
        result = await tool.execute({}, ToolContext(tool_call_id="c1", tool_name=tool.name))
    text = result.content[0].text  # type: ignore[union-attr]
    assert "x-api-key=[redacted]" in text
    assert HEADER_VALUE not in text
    assert "x-tenant=acme" in text  # a header that is not a credential stays as it is
