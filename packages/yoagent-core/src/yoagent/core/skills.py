"""Skills: folders of instructions in the AgentSkills format (``<name>/SKILL.md``).

:func:`load_skills` reads every ``<dir>/<name>/SKILL.md``: YAML frontmatter (``name``,
``description``; optional ``license``, ``compatibility``, ``metadata``, ``allowed-tools``)
and a Markdown body. :meth:`SkillSet.prompt_section` lists the skills for a system prompt;
:class:`ReadSkillTool` (``read_skill``) lets the model read one when a task calls for it.
A malformed skill is skipped and reported in :attr:`SkillSet.problems`.

The frontmatter reader handles the subset skills use — ``key: value`` scalars, quoted
strings, comments, and one level of nested map (``metadata:``) — without a YAML library.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .agent_tool import ToolContext, ToolError, ToolResult

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
MAX_FILE_BYTES = 256 * 1024
"""Largest skill file :class:`ReadSkillTool` returns."""
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")

Frontmatter = dict[str, "str | dict[str, str]"]


class SkillError(ValueError):
    """A SKILL.md file that cannot be used; the text names the line and the problem."""


@dataclass(slots=True, kw_only=True, frozen=True)
class Skill:
    """One loaded skill."""

    name: str
    description: str
    path: Path
    """The SKILL.md file."""
    body: str
    """The Markdown after the frontmatter."""
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict[str, str])
    allowed_tools: list[str] = field(default_factory=list[str])

    @property
    def folder(self) -> Path:
        """The skill's folder."""
        return self.path.parent

    def files(self, limit: int = 200) -> list[str]:
        """The skill's other files, relative to its folder, sorted (at most ``limit``)."""
        found: list[str] = []
        for path in sorted(self.folder.rglob("*")):
            relative = path.relative_to(self.folder)
            if path.is_file() and relative.as_posix() != SKILL_FILE:
                if any(part.startswith(".") for part in relative.parts):
                    continue
                found.append(relative.as_posix())
                if len(found) >= limit:
                    break
        return found


@dataclass(slots=True, frozen=True)
class SkillProblem:
    """A skill that was skipped, and why."""

    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


# ---------------------------------------------------------------------------
# Frontmatter
# ---------------------------------------------------------------------------


def _scalar(raw: str, line: int) -> str:
    text = raw.strip()
    if not text:
        return ""
    if text.startswith('"'):
        try:
            value: Any = json.loads(text)
        except ValueError:
            raise SkillError(f"line {line}: malformed double-quoted string {text!r}") from None
        if not isinstance(value, str):
            raise SkillError(f"line {line}: malformed double-quoted string {text!r}")
        return value
    if text.startswith("'"):
        if len(text) < 2 or not text.endswith("'") or "'" in text[1:-1].replace("''", ""):
            raise SkillError(f"line {line}: malformed single-quoted string {text!r}")
        return text[1:-1].replace("''", "'")
    if text[0] in "[{":
        raise SkillError(
            f"line {line}: lists and inline maps are not supported here; write a plain string"
        )
    if text[0] in "|>":
        raise SkillError(
            f"line {line}: block scalars ('|' or '>') are not supported; "
            "write the value on one line"
        )
    if text[0] in "&*!%@`":
        raise SkillError(f"line {line}: a value may not start with {text[0]!r}; quote it")
    comment = re.search(r"\s#", text)
    return (text[: comment.start()] if comment else text).strip()


def parse_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """Split a SKILL.md into its frontmatter fields and its body.

    Raises :class:`SkillError` naming the line of anything outside the supported subset.
    """
    lines = text.removeprefix("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise SkillError("line 1: no YAML frontmatter (the file must start with a '---' line)")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SkillError("the frontmatter is never closed (no second '---' line)")
    fields: Frontmatter = {}
    current_map: dict[str, str] | None = None
    map_indent = 0
    for index in range(1, end):
        number = index + 1
        line = lines[index].rstrip("\r").rstrip()
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        if "\t" in line[: len(line) - len(stripped) + 1]:
            raise SkillError(f"line {number}: indent with spaces, not tabs")
        indent = len(line) - len(stripped)
        match = _KEY.match(stripped)
        if match is None:
            raise SkillError(f"line {number}: expected 'key: value', got {stripped!r}")
        key, raw = match.group(1), match.group(2) or ""
        if indent:
            if current_map is None:
                raise SkillError(f"line {number}: unexpected indentation")
            if map_indent and indent != map_indent:
                raise SkillError(f"line {number}: only one level of nesting is supported")
            map_indent = indent
            if key in current_map:
                raise SkillError(f"line {number}: {key!r} appears twice")
            if not raw.strip():
                raise SkillError(f"line {number}: {key!r} needs a value (nested maps go one level)")
            current_map[key] = _scalar(raw, number)
            continue
        if key in fields:
            raise SkillError(f"line {number}: {key!r} appears twice")
        if raw.strip() and not raw.lstrip().startswith("#"):
            fields[key] = _scalar(raw, number)
            current_map = None
        else:
            current_map = {}
            map_indent = 0
            fields[key] = current_map
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return fields, body


def _string(fields: Frontmatter, key: str) -> str | None:
    value = fields.get(key)
    if isinstance(value, dict):
        if not value:
            return None  # `key:` with nothing after it
        raise SkillError(f"{key!r} must be a string, not a map")
    return value


def parse_skill(text: str, path: Path) -> Skill:
    """A :class:`Skill` from the text of ``path`` (a ``<name>/SKILL.md``), checked against
    the AgentSkills rules; :class:`SkillError` says what is wrong."""
    fields, body = parse_frontmatter(text)
    name = _string(fields, "name")
    if not name:
        raise SkillError("'name' is required")
    if len(name) > MAX_NAME_LENGTH or not NAME_PATTERN.match(name):
        raise SkillError(
            f"name {name!r} is not valid: use at most {MAX_NAME_LENGTH} lowercase letters, "
            "digits and single hyphens, not at the start or end"
        )
    folder = path.parent.name
    if name != folder:
        raise SkillError(f"name {name!r} does not match its folder {folder!r}")
    description = _string(fields, "description")
    if not description:
        raise SkillError("'description' is required")
    if len(description) > MAX_DESCRIPTION_LENGTH:
        raise SkillError(
            f"description is {len(description)} characters; the limit is {MAX_DESCRIPTION_LENGTH}"
        )
    compatibility = _string(fields, "compatibility")
    if compatibility is not None and len(compatibility) > MAX_COMPATIBILITY_LENGTH:
        raise SkillError(
            f"compatibility is {len(compatibility)} characters; "
            f"the limit is {MAX_COMPATIBILITY_LENGTH}"
        )
    metadata = fields.get("metadata", {})
    if not isinstance(metadata, dict):
        raise SkillError("'metadata' must be a map of key: value lines")
    tools = _string(fields, "allowed-tools")
    return Skill(
        name=name,
        description=description,
        path=path,
        body=body,
        license=_string(fields, "license"),
        compatibility=compatibility,
        metadata=dict(metadata),
        allowed_tools=tools.split() if tools else [],
    )


# ---------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------


class SkillSet:
    """The skills found by :func:`load_skills`, and the ones it had to skip."""

    __slots__ = ("_skills", "problems")

    def __init__(self, skills: Iterable[Skill] = (), problems: Iterable[SkillProblem] = ()) -> None:
        self._skills: dict[str, Skill] = {}
        self.problems: list[SkillProblem] = list(problems)
        """Skills that were skipped, each with the reason."""
        for skill in skills:
            if skill.name in self._skills:
                first = self._skills[skill.name].path
                self.problems.append(
                    SkillProblem(skill.path, f"skill {skill.name!r} is already loaded from {first}")
                )
            else:
                self._skills[skill.name] = skill

    def __iter__(self) -> Iterator[Skill]:
        return iter(self._skills.values())

    def __len__(self) -> int:
        return len(self._skills)

    def __contains__(self, name: object) -> bool:
        return name in self._skills

    @property
    def names(self) -> list[str]:
        """The skills' names, in load order."""
        return list(self._skills)

    def get(self, name: str) -> Skill | None:
        """The skill called ``name``, if loaded."""
        return self._skills.get(name)

    def prompt_section(self) -> str:
        """A system-prompt section listing each skill's name, description and path
        (empty when there are none)."""
        if not self._skills:
            return ""
        lines = [
            "## Skills",
            "Skills hold instructions for particular jobs. When a task matches a skill's "
            "description, read it first with the read_skill tool.",
            "",
        ]
        lines.extend(
            f"- {skill.name}: {skill.description} ({skill.path})" for skill in self._skills.values()
        )
        return "\n".join(lines)

    def tool(self) -> ReadSkillTool:
        """A :class:`ReadSkillTool` over these skills."""
        return ReadSkillTool(self)


def load_skills(dirs: str | Path | Iterable[str | Path]) -> SkillSet:
    """Load every ``<dir>/<name>/SKILL.md`` under each of ``dirs``.

    Folders without a SKILL.md and hidden folders are ignored. A malformed skill, a
    missing directory, or a name already loaded from an earlier directory is skipped and
    reported in :attr:`SkillSet.problems`.
    """
    roots = [dirs] if isinstance(dirs, str | Path) else list(dirs)
    skills: list[Skill] = []
    problems: list[SkillProblem] = []
    for root in map(Path, roots):
        if not root.is_dir():
            problems.append(SkillProblem(root, "skills directory does not exist"))
            continue
        if (root / SKILL_FILE).is_file():
            problems.append(
                SkillProblem(
                    root,
                    "this is a skill's own folder; pass the folder that holds skill folders",
                )
            )
        for folder in sorted(root.iterdir()):
            skill_file = folder / SKILL_FILE
            if folder.name.startswith(".") or not skill_file.is_file():
                continue
            try:
                text = skill_file.read_text(encoding="utf-8")
                skills.append(parse_skill(text, skill_file))
            except (SkillError, OSError, UnicodeDecodeError) as error:
                problems.append(SkillProblem(skill_file, str(error)))
    return SkillSet(skills, problems)


class ReadSkillTool:
    """The ``read_skill`` tool: a skill's SKILL.md instructions, or one of its other files."""

    name = "read_skill"
    _parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "The skill's name."},
            "file": {
                "type": "string",
                "description": "A file in the skill's folder to read instead of SKILL.md "
                "(a path relative to the folder, as listed after the instructions).",
            },
        },
        "required": ["name"],
        "additionalProperties": False,
    }

    def __init__(self, skills: SkillSet) -> None:
        self.skills = skills

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self._parameters

    @property
    def description(self) -> str:
        names = ", ".join(self.skills.names) or "none loaded"
        return (
            "Read a skill's instructions (its SKILL.md) before a task it covers; with 'file', "
            f"read one of the skill's other files. Skills: {names}."
        )

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = arguments.get("name")
        if not isinstance(name, str) or not name:
            raise ToolError("read_skill needs 'name' (a skill's name)")
        skill = self.skills.get(name)
        if skill is None:
            known = ", ".join(self.skills.names) or "none"
            raise ToolError(f"read_skill: no skill named {name!r} (skills: {known})")
        file = arguments.get("file")
        if file:
            if not isinstance(file, str):
                raise ToolError("read_skill: 'file' must be a string")
            return _read_file(skill, file)
        text = skill.body
        others = skill.files()
        if others:
            text += "\n\n---\nOther files in this skill (read_skill with 'file'):\n"
            text += "\n".join(f"- {other}" for other in others)
        return ToolResult.from_text(text, details={"skill": skill.name, "path": str(skill.path)})


def _read_file(skill: Skill, file: str) -> ToolResult:
    folder = skill.folder.resolve()
    target = (folder / file).resolve()
    if not target.is_relative_to(folder):
        raise ToolError(f"read_skill: {file!r} is outside the skill's folder")
    if not target.is_file():
        raise ToolError(f"read_skill: skill {skill.name!r} has no file {file!r}")
    size = target.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ToolError(
            f"read_skill: {file!r} is {size} bytes; the limit is {MAX_FILE_BYTES} "
            "(read it with a file tool instead)"
        )
    try:
        text = target.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"read_skill: {file!r} is not UTF-8 text") from None
    return ToolResult.from_text(text, details={"skill": skill.name, "path": str(target)})
