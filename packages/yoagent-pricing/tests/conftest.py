"""Every test starts and ends with no price layer, no ``YOAGENT_PRICES`` reading and an
empty core price slot: the layers are process-wide, and other packages' tests assume the
default (nothing priced)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from yoagent.pricing.testing import fresh_prices


@pytest.fixture(autouse=True)
def _default_prices() -> Iterator[None]:
    with fresh_prices():
        yield
