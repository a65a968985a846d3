"""``python -m yoagent.cli``."""

from .main import main

main()
