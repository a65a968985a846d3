"""yoagent.cli: the ``yoagent`` terminal coding agent."""

from .arguments import build_parser
from .main import main, run

__all__ = ["build_parser", "main", "run"]
