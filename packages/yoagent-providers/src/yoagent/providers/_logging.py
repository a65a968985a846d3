"""The ``yoagent.providers`` logger and a helper that logs a repeated condition once."""

from __future__ import annotations

import logging

from yoagent.core.provider import warn_once as _warn_once

logger = logging.getLogger("yoagent.providers")


def warn_once(key: str, message: str, *args: object) -> None:
    """Log ``message`` at WARNING on this package's logger the first time ``key`` is seen
    in this process, never again (core's one record of what was said)."""
    _warn_once(logger, key, message, *args)
