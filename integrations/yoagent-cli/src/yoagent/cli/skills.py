"""Skills for the CLI: ``<dir>/<name>/SKILL.md`` files listed in the system prompt.

A small stand-in for ``yoagent.core.skills`` until core ships it: each skill's name and
description (from its YAML frontmatter) go into the system prompt, and the ``read_skill``
tool returns a skill's full text when the model decides it needs it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from yoagent.core import AgentTool, FunctionTool, ToolError

_FRONTMATTER = re.compile(r"\A---\s*\n(.*?)\n---\s*(?:\n|\Z)", re.DOTALL)


@dataclass(slots=True, frozen=True)
class Skill:
    """One skill: its name, what it is for, and the file holding it."""

    name: str
    description: str
    path: Path


def _field(frontmatter: str, key: str) -> str:
    match = re.search(rf"^{key}\s*:\s*(.*)$", frontmatter, re.MULTILINE)
    if match is None:
        return ""
    return match.group(1).strip().strip("\"'")


def read_skill_file(path: Path) -> Skill:
    """The skill in ``path`` (a ``SKILL.md``); its name defaults to its folder's."""
    text = path.read_text(encoding="utf-8", errors="replace")
    match = _FRONTMATTER.match(text)
    frontmatter = match.group(1) if match else ""
    name = _field(frontmatter, "name") or path.parent.name
    description = _field(frontmatter, "description")
    if not description:
        body = text[match.end() :] if match else text
        description = next(
            (line.strip("# ").strip() for line in body.splitlines() if line.strip()), ""
        )
    return Skill(name=name, description=description, path=path)


def load_skills(dirs: Iterable[Path]) -> list[Skill]:
    """Every ``<dir>/<name>/SKILL.md`` (and ``<dir>/SKILL.md``) under ``dirs``; the first of
    a name wins. A folder that does not exist is an error (:class:`FileNotFoundError`)."""
    found: dict[str, Skill] = {}
    for directory in dirs:
        if not directory.is_dir():
            raise FileNotFoundError(f"--skills {directory}: not a folder")
        candidates = [directory / "SKILL.md", *sorted(directory.glob("*/SKILL.md"))]
        for candidate in candidates:
            if candidate.is_file():
                skill = read_skill_file(candidate)
                found.setdefault(skill.name, skill)
    return list(found.values())


def prompt_section(skills: Sequence[Skill]) -> str:
    """The system prompt's list of skills."""
    if not skills:
        return ""
    lines = [
        "## Skills",
        "",
        "These skills hold instructions for particular jobs. When a task matches one, call "
        "`read_skill` with its name and follow what it says.",
        "",
    ]
    lines += [f"- {skill.name}: {skill.description}" for skill in skills]
    return "\n".join(lines)


def read_skill_tool(skills: Sequence[Skill]) -> AgentTool:
    """The ``read_skill`` tool: the full text of one skill, by name."""
    by_name = {skill.name: skill for skill in skills}

    async def read_skill(name: str) -> str:
        """Read the full instructions of a skill listed in the system prompt."""
        skill = by_name.get(name)
        if skill is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise ToolError(f"no skill named {name!r}; skills: {known}")
        text = skill.path.read_text(encoding="utf-8", errors="replace")
        return f"{text}\n\n(Skill folder: {skill.path.parent})"

    return FunctionTool(read_skill)
