"""yoagent.cli: the ``yoagent`` terminal coding agent."""

from .main import build_parser, main, run

__all__ = ["build_parser", "main", "run"]
