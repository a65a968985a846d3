"""yoagent.cli: the ``yoagent`` terminal coding agent."""

from ._errors import CliError
from .arguments import build_parser
from .main import main, run

__all__ = ["CliError", "build_parser", "main", "run"]
