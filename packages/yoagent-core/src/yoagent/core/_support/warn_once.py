"""``warn_once``: a repeated condition logged once per process, forgettable for tests."""

from __future__ import annotations

import logging
import threading

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


def reset_warn_once(log: logging.Logger | None = None) -> None:
    """Let :func:`warn_once` log again: every key of ``log``, or of every logger (tests)."""
    with _seen_lock:
        if log is None:
            _seen.clear()
        else:
            _seen.difference_update({marker for marker in _seen if marker[0] == log.name})
