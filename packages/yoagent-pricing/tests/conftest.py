"""Every test starts and ends with no price layer, no ``YOAGENT_PRICES`` reading and an
empty core price slot: the layers are process-wide, and other packages' tests assume the
default (nothing priced)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from yoagent.pricing._layers import reset_for_tests


@pytest.fixture(autouse=True)
def fresh_prices(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("YOAGENT_PRICES", raising=False)
    reset_for_tests()
    yield
    reset_for_tests()
