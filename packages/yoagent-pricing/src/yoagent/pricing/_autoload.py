"""Core's price autoload entry point, cheap when ``YOAGENT_PRICES`` is unset.

Core runs it at the first model call of every process that has this package installed;
most never set the variable, and then nothing else of this package is imported (the
tables, schemas and readers cost ≈ 100 ms and several MB to load).
"""

from __future__ import annotations

import os

from ._env_var import PRICES_ENV_VAR


def apply_env_override() -> None:
    """Apply ``YOAGENT_PRICES`` when it is set (see ``yoagent.pricing`` and
    :func:`~yoagent.pricing.env_override_status`); otherwise do nothing yet: the variable
    is read by the first call that needs the price layers."""
    if not os.environ.get(PRICES_ENV_VAR, "").strip():
        return
    from ._layers import apply_env_override as apply

    apply()
