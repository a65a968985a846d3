"""The yoagent libraries' warnings, on stderr the way the CLI says its own.

The libraries log through ``yoagent.*`` loggers (an MCP server that exited and whose
tools were withdrawn, a price table that disagrees with the snapshot, ...). Without a
handler Python would print the bare message; here each warning is one
``yoagent: warning: …`` line, made inert (a server's stderr quoted in it cannot drive the
terminal). Debug and info records are not shown.
"""

from __future__ import annotations

import logging
import sys

from .safe_text import write_inert


class _StderrWarnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            label = "error" if record.levelno >= logging.ERROR else "warning"
            write_inert(sys.stderr, f"yoagent: {label}: {text}")
        except Exception:  # a log line must never end the session
            self.handleError(record)


def report_library_warnings() -> None:
    """Show the ``yoagent.*`` loggers' warnings and errors on stderr (once per process)."""
    logger = logging.getLogger("yoagent")
    if not any(isinstance(handler, _StderrWarnings) for handler in logger.handlers):
        logger.addHandler(_StderrWarnings())
