"""Loggers for yoagent.core and a helper that logs a repeated condition once."""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger("yoagent.core")

_seen: set[tuple[str, str]] = set()
_seen_lock = threading.Lock()


def warn_once(log: logging.Logger, key: str, message: str, *args: object) -> None:
    """Log ``message`` at WARNING the first time ``key`` is seen on ``log``, never again."""
    marker = (log.name, key)
    with _seen_lock:
        if marker in _seen:
            return
        _seen.add(marker)
    log.warning(message, *args)
