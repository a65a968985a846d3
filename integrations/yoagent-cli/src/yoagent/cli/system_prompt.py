"""The system prompt: a short default for a coding agent, or the user's own file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

DEFAULT_SYSTEM_PROMPT = """\
You are yoagent, a coding agent working in a terminal, in the folder {cwd}.

You can read, search, write and edit files and run shell commands with your tools. Paths
are relative to that folder. Look before you change: read the relevant code, make focused
edits, and run the tests or the program to check your work when you can.

Be concise. Say what you did and what you found; show code only when it helps. When the
task is done, end with a short summary."""


def build_system_prompt(
    cwd: Path, system_file: Path | None = None, sections: Sequence[str] = ()
) -> str:
    """The default prompt (or ``system_file``'s text) followed by ``sections``."""
    if system_file is not None:
        base = system_file.read_text(encoding="utf-8").strip()
    else:
        base = DEFAULT_SYSTEM_PROMPT.format(cwd=cwd)
    parts = [base, *(section for section in sections if section)]
    return "\n\n".join(parts)
