"""Every test starts with no decision key or base-URL variable set and no price resolver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from yoagent.core import set_price_resolver

KEY_VARIABLES = (
    "TYPESAFE_API_KEY",
    "TYPESAFE_BASE_URL",
    "OPENCODE_API_KEY",
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_AUTH_TOKEN",
    "OPENAI_API_KEY",
)


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    previous = set_price_resolver(None)
    try:
        yield
    finally:
        set_price_resolver(previous)
