"""Skills: folders of instructions in the AgentSkills format (``<name>/SKILL.md``).

:func:`load_skills` reads every ``<dir>/<name>/SKILL.md``: YAML frontmatter (``name``,
``description``; optional ``license``, ``compatibility``, ``metadata``, ``allowed-tools``)
and a Markdown body. :meth:`SkillSet.prompt_section` lists the skills for a system prompt;
:class:`ReadSkillTool` (``read_skill``) lets the model read one when a task calls for it.
A malformed skill is skipped and reported in :attr:`SkillSet.problems`.

The frontmatter is read by PyYAML's safe loader into a pydantic model, bounded against
hostile files (see :mod:`yoagent.core._skill_frontmatter`).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from ._skill_frontmatter import (
    MAX_SKILL_BYTES,
    SkillError,
    parse_frontmatter,
    read_frontmatter,
)
from ._tools.arguments import ToolArguments
from ._tools.contract import ToolContext, ToolError, ToolResult
from ._tools.model_tool import ModelTool

SKILL_FILE = "SKILL.md"
MAX_LISTED_DEPTH = 16
"""How many folders deep :meth:`Skill.files` looks."""
MAX_LISTED_ENTRIES = 10_000
"""How many entries :meth:`Skill.files` looks at before it stops."""
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


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
        """The skill's other files, relative to its folder, sorted (at most ``limit``).

        Hidden files and folders are left out, and so is anything deeper than
        :data:`MAX_LISTED_DEPTH` folders or past :data:`MAX_LISTED_ENTRIES` entries looked
        at: a hostile tree (deep, huge, or with unreadable folders) lists what it can.
        """
        found: list[str] = []
        seen = 0
        # Depth first with children in name order (the order of sorted paths), on a stack of
        # folder listings rather than by recursion, which a deep tree would exhaust.
        stack: list[tuple[Iterator[os.DirEntry[str]], tuple[str, ...]]] = [
            (_listing(self.folder), ())
        ]
        while stack and len(found) < limit and seen < MAX_LISTED_ENTRIES:
            entries, parts = stack[-1]
            entry = next(entries, None)
            if entry is None:
                stack.pop()
                continue
            seen += 1
            relative = (*parts, entry.name)
            try:
                is_folder = entry.is_dir(follow_symlinks=False)
                is_file = not is_folder and entry.is_file()
            except OSError:
                continue
            if is_folder and len(relative) < MAX_LISTED_DEPTH:
                stack.append((_listing(Path(entry.path)), relative))
            elif is_file and relative != (SKILL_FILE,):
                found.append("/".join(relative))
        return found


def _listing(folder: Path) -> Iterator[os.DirEntry[str]]:
    """The visible entries of ``folder`` in name order (none when it cannot be read)."""
    try:
        with os.scandir(folder) as scan:
            entries = [entry for entry in scan if not entry.name.startswith(".")]
    except (OSError, ValueError):
        return iter(())
    entries.sort(key=lambda entry: entry.name)
    return iter(entries)


@dataclass(slots=True, frozen=True)
class SkillProblem:
    """A skill that was skipped, and why."""

    path: Path
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"


def parse_skill(text: str, path: Path) -> Skill:
    """A :class:`Skill` from the text of ``path`` (a ``<name>/SKILL.md``), checked against
    the AgentSkills rules; :class:`SkillError` says what is wrong."""
    fields, body = parse_frontmatter(text)
    frontmatter = read_frontmatter(fields)
    folder = path.parent.name
    if frontmatter.name != folder:
        raise SkillError(f"name {frontmatter.name!r} does not match its folder {folder!r}")
    return Skill(
        name=frontmatter.name,
        description=frontmatter.description,
        path=path,
        body=body,
        license=frontmatter.license,
        compatibility=frontmatter.compatibility,
        metadata=dict(frontmatter.metadata),
        allowed_tools=list(frontmatter.allowed_tools),
    )


def read_skill_file(path: Path) -> str:
    """The text of the SKILL.md at ``path``, read up to :data:`MAX_SKILL_BYTES` (a
    larger file, or one that is not UTF-8, is a :class:`SkillError`)."""
    with path.open("rb") as file:
        data = file.read(MAX_SKILL_BYTES + 1)
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"{SKILL_FILE} is larger than {MAX_SKILL_BYTES} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SkillError(
            f"{SKILL_FILE} is not UTF-8 text (byte 0x{data[error.start]:02x} at offset "
            f"{error.start})"
        ) from None


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

    Folders without a SKILL.md and hidden folders are ignored. A malformed or unreadable
    skill, a missing or unreadable directory, or a name already loaded from an earlier
    directory is skipped and reported in :attr:`SkillSet.problems`.
    """
    roots = [dirs] if isinstance(dirs, str | Path) else list(dirs)
    skills: list[Skill] = []
    problems: list[SkillProblem] = []
    for root in map(Path, roots):
        try:
            if not root.is_dir():
                problems.append(SkillProblem(root, "skills directory does not exist"))
                continue
            own_folder = (root / SKILL_FILE).is_file()
            folders = sorted(root.iterdir())
        except OSError as error:
            problems.append(SkillProblem(root, f"cannot read the skills directory: {error}"))
            continue
        if own_folder:
            problems.append(
                SkillProblem(
                    root,
                    "this is a skill's own folder; pass the folder that holds skill folders",
                )
            )
        for folder in folders:
            skill_file = folder / SKILL_FILE
            if folder.name.startswith("."):
                continue
            try:
                if not skill_file.is_file():
                    continue
                skills.append(parse_skill(read_skill_file(skill_file), skill_file))
            except (SkillError, OSError) as error:
                problems.append(SkillProblem(skill_file, str(error)))
    return SkillSet(skills, problems)


class ReadSkillArguments(ToolArguments):
    """The arguments of ``read_skill``."""

    name: str = Field(description="The skill's name.")
    file: str = Field(
        "",
        description="A file in the skill's folder to read instead of SKILL.md "
        "(a path relative to the folder, as listed after the instructions).",
    )


class ReadSkillTool(ModelTool[ReadSkillArguments]):
    """The ``read_skill`` tool: a skill's SKILL.md instructions, or one of its other files."""

    def __init__(self, skills: SkillSet) -> None:
        names = ", ".join(skills.names) or "none loaded"
        super().__init__(
            name="read_skill",
            description=(
                "Read a skill's instructions (its SKILL.md) before a task it covers; with "
                f"'file', read one of the skill's other files. Skills: {names}."
            ),
            arguments=ReadSkillArguments,
        )
        self.skills = skills

    async def run(self, arguments: ReadSkillArguments, ctx: ToolContext) -> ToolResult:
        """The skill's instructions and the list of its other files, or the file asked for."""
        skill = self.skills.get(arguments.name)
        if skill is None:
            known = ", ".join(self.skills.names) or "none"
            raise ToolError(f"read_skill: no skill named {arguments.name!r} (skills: {known})")
        if arguments.file:
            return _read_file(skill, arguments.file)
        text = skill.body
        others = skill.files()
        if others:
            text += "\n\n---\nOther files in this skill (read_skill with 'file'):\n"
            text += "\n".join(f"- {other}" for other in others)
        return ToolResult.from_text(text, details={"skill": skill.name, "path": str(skill.path)})


def _read_file(skill: Skill, file: str) -> ToolResult:
    try:
        return _read_checked(skill, file)
    except (OSError, ValueError, RecursionError) as error:
        # A path the OS refuses (too long, a NUL byte, a symlink loop) or a file that went
        # away: an error the model reads, never an exception out of the tool.
        reason = error.strerror if isinstance(error, OSError) and error.strerror else "bad path"
        raise ToolError(f"read_skill: {file[:200]!r} cannot be read ({reason})") from None


def _read_checked(skill: Skill, file: str) -> ToolResult:
    folder = skill.folder.resolve()
    target = (folder / file).resolve()
    if not target.is_relative_to(folder):
        raise ToolError(f"read_skill: {file!r} is outside the skill's folder")
    missing = ToolError(f"read_skill: skill {skill.name!r} has no file {file!r}")
    try:
        # Non-blocking, so a FIFO put in place of the file cannot hang the tool; what it is
        # and how much of it is read are decided on this one descriptor.
        fd = os.open(target, os.O_RDONLY | _NONBLOCK | _CLOEXEC)
    except FileNotFoundError:
        raise missing from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise missing
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(MAX_SKILL_BYTES + 1)  # bounded even if the file grows meanwhile
    if len(data) > MAX_SKILL_BYTES:
        raise ToolError(
            f"read_skill: {file!r} is larger than {MAX_SKILL_BYTES} bytes "
            "(read it with a file tool instead)"
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"read_skill: {file!r} is not UTF-8 text") from None
    return ToolResult.from_text(text, details={"skill": skill.name, "path": str(target)})
