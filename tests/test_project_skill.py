"""The project's own skill, skills/yoagent/SKILL.md: it loads, and every API name it
mentions exists in the installed packages. (Its code blocks run in test_docs_examples.py.)

It lives here, not in yoagent-core's tests, because it reads the repository's skills/
folder and names yoagent.tools and yoagent.providers APIs."""

from __future__ import annotations

import importlib
import re
import warnings
from pathlib import Path

import yoagent.core
from yoagent.core import load_skills

REPO = Path(__file__).resolve().parents[1]
PROJECT_SKILL = REPO / "skills" / "yoagent" / "SKILL.md"

_API_SPAN = re.compile(r"^@?([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?:\(\))?$")


def _resolve(name: str) -> object:
    """``yoagent.x.y.Name.attr`` by import, anything else as an attribute path on yoagent.core."""
    parts = name.split(".")
    if parts[0] == "yoagent":
        for split in range(len(parts), 1, -1):
            try:
                target: object = importlib.import_module(".".join(parts[:split]))
            except ImportError:
                continue
            for attr in parts[split:]:
                target = getattr(target, attr)
            return target
        raise ImportError(name)
    target = yoagent.core
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # a moved name is not current API
        for attr in parts:
            target = getattr(target, attr)
    return target


def _api_names(markdown: str) -> set[str]:
    """Inline code spans naming an API: ``Name``, ``Name.attr``, ``@name``, ``yoagent.x.y``."""
    prose = re.sub(r"```.*?```", "", markdown, flags=re.DOTALL)
    names: set[str] = set()
    for span in re.findall(r"`([^`\n]+)`", prose):
        match = _API_SPAN.match(span)
        if match is None:
            continue
        name = match.group(1)
        if name[0].isupper() or span.startswith("@") or name.startswith("yoagent."):
            names.add(name)
    return names


def test_the_project_skill_loads() -> None:
    skills = load_skills(REPO / "skills")
    assert skills.problems == []
    skill = skills.get("yoagent")
    assert skill is not None
    assert "Jobs and the feature for each" in skill.body


def test_every_api_name_in_the_project_skill_exists() -> None:
    names = _api_names(PROJECT_SKILL.read_text(encoding="utf-8"))
    assert {"Agent.from_config", "MockProvider", "tool", "Deny", "ExecutionLimits"} <= names
    missing: list[str] = []
    for name in sorted(names):
        try:
            _resolve(name)
        except (AttributeError, ImportError):
            missing.append(name)
    assert missing == []
