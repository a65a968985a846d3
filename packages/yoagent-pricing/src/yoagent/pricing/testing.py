"""Test support: the process-wide price state, back to the default (nothing priced).

Layers, the ``YOAGENT_PRICES`` reading and core's price slot are process-wide, so a test
that enables pricing leaves it on for every later test unless it cleans up::

    import pytest
    from yoagent.pricing.testing import fresh_prices

    @pytest.fixture(autouse=True)
    def _prices():
        with fresh_prices():
            yield
"""

from __future__ import annotations

import os
from collections.abc import Generator
from contextlib import contextmanager

from ._env_var import PRICES_ENV_VAR
from ._layers import reset_for_tests


def reset_prices() -> None:
    """Forget every layer and the ``YOAGENT_PRICES`` reading, and empty core's price slot."""
    reset_for_tests()


@contextmanager
def fresh_prices() -> Generator[None]:
    """Run the block with the default state (``YOAGENT_PRICES`` unset), and restore the
    default and the variable afterwards."""
    saved = os.environ.pop(PRICES_ENV_VAR, None)
    reset_prices()
    try:
        yield
    finally:
        reset_prices()
        if saved is None:
            os.environ.pop(PRICES_ENV_VAR, None)
        else:
            os.environ[PRICES_ENV_VAR] = saved
