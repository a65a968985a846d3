"""Every test starts with no decision key or base-URL variable set and no price resolver."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from decision_helpers import KEY_VARIABLES

from yoagent.core.provider import set_price_resolver


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    previous = set_price_resolver(None)
    try:
        yield
    finally:
        set_price_resolver(previous)
