"""The ``yoagent.pricing`` logger and a helper that logs a repeated condition once."""

from __future__ import annotations

import logging
import threading

logger = logging.getLogger("yoagent.pricing")

_seen: set[str] = set()
_seen_lock = threading.Lock()


def warn_once(key: str, message: str, *args: object) -> None:
    """Log ``message`` at WARNING the first time ``key`` is seen in this process, never again."""
    with _seen_lock:
        if key in _seen:
            return
        _seen.add(key)
    logger.warning(message, *args)


def forget_warnings() -> None:
    """Let every warn-once message be logged again (for tests that assert on them)."""
    with _seen_lock:
        _seen.clear()
