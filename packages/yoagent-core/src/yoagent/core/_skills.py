"""Skills: folders of instructions in the AgentSkills format (``<name>/SKILL.md``).

:func:`load_skills` reads every ``<dir>/<name>/SKILL.md``: YAML frontmatter (``name``,
``description``; optional ``license``, ``compatibility``, ``metadata``, ``allowed-tools``)
and a Markdown body. :meth:`SkillSet.prompt_section` lists the skills for a system prompt;
:class:`ReadSkillTool` (``read_skill``) lets the model read one when a task calls for it.
A malformed skill is skipped and reported in :attr:`SkillSet.problems`.

The frontmatter reader handles the subset skills use — ``key: value`` scalars (plain,
multi-line, quoted, ``|``/``>`` blocks), lists of strings (``allowed-tools``), comments, and
one level of nested map (``metadata:``) — without a YAML library.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ._tools.contract import ToolContext, ToolError, ToolResult

SKILL_FILE = "SKILL.md"
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500
MAX_FILE_BYTES = 256 * 1024
"""Largest skill file :class:`ReadSkillTool` returns."""
MAX_LISTED_DEPTH = 16
"""How many folders deep :meth:`Skill.files` looks."""
MAX_LISTED_ENTRIES = 10_000
"""How many entries :meth:`Skill.files` looks at before it stops."""
_KEY = re.compile(r"^([A-Za-z0-9_][A-Za-z0-9_.-]*)\s*:(?:\s+(.*))?$")

Frontmatter = dict[str, "str | list[str] | dict[str, str]"]


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


# ---------------------------------------------------------------------------
# Frontmatter
# ---------------------------------------------------------------------------


def _quoted(text: str, number: int) -> tuple[str, int]:
    """The quoted string at the start of ``text`` and the index just after it."""
    if text.startswith('"'):
        try:
            value, stop = json.JSONDecoder().raw_decode(text)
        except ValueError:
            raise SkillError(f"line {number}: malformed double-quoted string {text!r}") from None
        if not isinstance(value, str):
            raise SkillError(f"line {number}: malformed double-quoted string {text!r}")
        return value, stop
    index = 1
    while True:
        index = text.find("'", index)
        if index < 0:
            raise SkillError(f"line {number}: malformed single-quoted string {text!r}")
        if text.startswith("''", index):
            index += 2
            continue
        return text[1:index].replace("''", "'"), index + 1


def _no_trailing_text(rest: str, text: str, number: int) -> None:
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        kind = "double" if text.startswith('"') else "single"
        raise SkillError(
            f"line {number}: malformed {kind}-quoted string {text!r} "
            "(only a '# comment' may follow the closing quote)"
        )


def _strip_comment(text: str) -> str:
    comment = re.search(r"(?:^|\s)#", text)
    return (text[: comment.start()] if comment else text).strip()


def _check_plain(text: str, number: int) -> None:
    if text[0] in "&*!%@`":
        raise SkillError(f"line {number}: a value may not start with {text[0]!r}; quote it")


def _flow_list(text: str, number: int) -> list[str]:
    """The items of a one-line ``[a, "b", 'c']`` (``text`` starts with ``[``)."""
    items: list[str] = []
    index = 1
    while True:
        while index < len(text) and text[index] == " ":
            index += 1
        if index >= len(text):
            raise SkillError(f"line {number}: the list {text!r} is never closed with ']'")
        char = text[index]
        if char == "]" and (not items or text[index - 1] == ","):
            index += 1
            break
        if char in "[{":
            raise SkillError(f"line {number}: nested lists and maps are not supported")
        if char in "\"'":
            item, stop = _quoted(text[index:], number)
            index += stop
        else:
            stop = index
            while stop < len(text) and text[stop] not in ",]":
                stop += 1
            item = text[index:stop].strip()
            if not item:
                raise SkillError(f"line {number}: an empty item in the list {text!r}")
            _check_plain(item, number)
            index = stop
        items.append(item)
        while index < len(text) and text[index] == " ":
            index += 1
        if index >= len(text):
            raise SkillError(f"line {number}: the list {text!r} is never closed with ']'")
        if text[index] == ",":
            index += 1
        elif text[index] == "]":
            index += 1
            break
        else:
            raise SkillError(f"line {number}: expected ',' or ']' in the list {text!r}")
    rest = text[index:].strip()
    if rest and not rest.startswith("#"):
        raise SkillError(f"line {number}: unexpected text after the list: {rest!r}")
    return items


_BLOCK_HEADER = re.compile(r"([|>])([+-]?)([1-9]?)([+-]?)(?:\s+#.*)?")


def _fold(lines: list[str]) -> str:
    """YAML folding: a break between two plain lines is a space, an empty line is a
    newline, and more-indented lines keep their breaks."""
    out: list[str] = []
    previous_more = False
    empty = 0
    for line in lines:
        if not line:
            empty += 1
            continue
        more = line[0] in " \t"
        if out:
            if more or previous_more:
                out.append("\n" * (empty + 1))
            else:
                out.append("\n" * empty if empty else " ")
        else:
            out.append("\n" * empty)
        out.append(line)
        previous_more = more
        empty = 0
    return "".join(out)


class _Reader:
    """The frontmatter lines and a cursor, for a small recursive-descent YAML subset."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = [line.rstrip("\r").rstrip() for line in lines]

    @staticmethod
    def number(index: int) -> int:
        return index + 2  # line 1 is the opening '---'

    def indent(self, index: int) -> int:
        line = self.lines[index]
        stripped = line.lstrip(" ")
        if stripped.startswith("\t"):
            raise SkillError(f"line {self.number(index)}: indent with spaces, not tabs")
        return len(line) - len(stripped)

    def skip(self, index: int) -> int:
        """The first line from ``index`` on that is not blank or a comment."""
        while index < len(self.lines):
            stripped = self.lines[index].strip()
            if stripped and not stripped.startswith("#"):
                break
            index += 1
        return index

    def key(self, index: int) -> tuple[str, str]:
        stripped = self.lines[index].strip()
        match = _KEY.match(stripped)
        if match is None:
            raise SkillError(f"line {self.number(index)}: expected 'key: value', got {stripped!r}")
        return match.group(1), match.group(2) or ""

    def document(self) -> Frontmatter:
        fields: Frontmatter = {}
        index = self.skip(0)
        while index < len(self.lines):
            number = self.number(index)
            if self.indent(index):
                raise SkillError(f"line {number}: unexpected indentation")
            key, raw = self.key(index)
            if key in fields:
                raise SkillError(f"line {number}: {key!r} appears twice")
            fields[key], index = self.value(raw, index, 0, nested=True)
            index = self.skip(index)
        return fields

    def value(
        self, raw: str, index: int, parent: int, *, nested: bool
    ) -> tuple[str | list[str] | dict[str, str], int]:
        """The value starting with ``raw`` on line ``index`` (its key or ``-`` at indent
        ``parent``) and the line after it. ``nested``: a map or list may follow."""
        number = self.number(index)
        text = raw.strip()
        if not text or text.startswith("#"):
            following = self.skip(index + 1)
            if following < len(self.lines):
                indent = self.indent(following)
                item = self.lines[following].strip()
                is_item = item == "-" or item.startswith("- ")
                if indent > parent or (is_item and indent == parent and nested):
                    if not nested:
                        raise SkillError(
                            f"line {self.number(following)}: only one level of nesting is supported"
                        )
                    if is_item:
                        return self.block_list(following, indent)
                    return self.block_map(following, indent)
            if not nested:
                raise SkillError(f"line {number}: a value is needed here (nesting goes one level)")
            return {}, index + 1
        if text[0] in "|>":
            return self.block_scalar(text, index, parent)
        if text[0] == "{":
            raise SkillError(
                f"line {number}: inline maps are not supported; write indented 'key: value' lines"
            )
        if text[0] == "[":
            if not nested:
                raise SkillError(f"line {number}: only one level of nesting is supported")
            return _flow_list(text, number), index + 1
        if text[0] in "\"'":
            value, stop = _quoted(text, number)
            _no_trailing_text(text[stop:], text, number)
            return value, index + 1
        _check_plain(text, number)
        return self.plain(_strip_comment(text), index, parent)

    def plain(self, first: str, index: int, parent: int) -> tuple[str, int]:
        """A plain scalar, with any more-indented lines that continue it (folded)."""
        lines = [first]
        end = index + 1
        following = index + 1
        while following < len(self.lines):
            stripped = self.lines[following].strip()
            if not stripped:
                lines.append("")
                following += 1
                continue
            if stripped.startswith("#") or self.indent(following) <= parent:
                break
            if _KEY.match(stripped):
                raise SkillError(
                    f"line {self.number(following)}: only one level of nesting is supported "
                    f"({stripped!r} continues the value above; quote it if that is meant)"
                )
            lines.append(_strip_comment(stripped))
            following += 1
            end = following
        return _fold(lines[: end - index]), end

    def block_scalar(self, header: str, index: int, parent: int) -> tuple[str, int]:
        number = self.number(index)
        match = _BLOCK_HEADER.fullmatch(header)
        if match is None or (match.group(2) and match.group(4)):
            raise SkillError(f"line {number}: malformed block scalar header {header!r}")
        style, chomping = match.group(1), match.group(2) or match.group(4)
        content = parent + int(match.group(3)) if match.group(3) else None
        lines: list[str] = []
        following = index + 1
        while following < len(self.lines):
            line = self.lines[following]
            if not line.strip():
                lines.append("")
                following += 1
                continue
            indent = len(line) - len(line.lstrip(" "))
            if content is None:
                if indent <= parent:
                    break
                content = indent
            if indent < content:
                if indent > parent:
                    raise SkillError(
                        f"line {self.number(following)}: less indented than the block "
                        "scalar it is in"
                    )
                break
            lines.append(line[content:])
            following += 1
        trailing = 0
        while lines and not lines[-1]:
            lines.pop()
            trailing += 1
        if not lines:
            text = "\n" * trailing if chomping == "+" else ""
        else:
            text = "\n".join(lines) if style == "|" else _fold(lines)
            if chomping == "+":
                text += "\n" * (trailing + 1)
            elif chomping != "-":
                text += "\n"
        return text, following

    def block_list(self, index: int, indent: int) -> tuple[list[str], int]:
        items: list[str] = []
        while index < len(self.lines):
            number = self.number(index)
            here = self.indent(index)
            if here < indent:
                break
            stripped = self.lines[index].strip()
            is_item = stripped == "-" or stripped.startswith("- ")
            if not is_item:
                if here == indent and indent == 0:
                    break  # the next top-level key
                raise SkillError(f"line {number}: expected a '- item' line, got {stripped!r}")
            if here > indent:
                raise SkillError(f"line {number}: only one level of nesting is supported")
            raw = stripped[1:].strip()
            if not raw or raw.startswith("#"):
                raise SkillError(f"line {number}: an empty list item")
            if raw == "-" or raw.startswith("- ") or _KEY.match(raw):
                raise SkillError(
                    f"line {number}: list items must be strings (nested lists and maps "
                    "are not supported)"
                )
            item, index = self.value(raw, index, indent, nested=False)
            assert isinstance(item, str)
            items.append(item)
            index = self.skip(index)
        return items, index

    def block_map(self, index: int, indent: int) -> tuple[dict[str, str], int]:
        values: dict[str, str] = {}
        while index < len(self.lines):
            number = self.number(index)
            here = self.indent(index)
            if here < indent:
                if here:
                    raise SkillError(f"line {number}: unexpected indentation")
                break
            if here > indent:
                raise SkillError(f"line {number}: only one level of nesting is supported")
            key, raw = self.key(index)
            if key in values:
                raise SkillError(f"line {number}: {key!r} appears twice")
            value, index = self.value(raw, index, indent, nested=False)
            assert isinstance(value, str)
            values[key] = value
            index = self.skip(index)
        return values, index


def parse_frontmatter(text: str) -> tuple[Frontmatter, str]:
    """Split a SKILL.md into its frontmatter fields and its body.

    The frontmatter may hold ``key: value`` scalars (plain, possibly continued on more
    indented lines; quoted; or ``|``/``>`` block scalars), lists of strings (``- item``
    lines or ``[a, b]``), one level of nested map, and comments. Raises
    :class:`SkillError` naming the line of anything outside that subset.
    """
    lines = text.removeprefix("\ufeff").split("\n")
    if not lines or lines[0].rstrip() != "---":
        raise SkillError("line 1: no YAML frontmatter (the file must start with a '---' line)")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SkillError("the frontmatter is never closed (no second '---' line)")
    fields = _Reader(lines[1:end]).document()
    body = "\n".join(lines[end + 1 :]).lstrip("\n")
    return fields, body


def _string(fields: Frontmatter, key: str) -> str | None:
    value = fields.get(key)
    if isinstance(value, dict):
        if not value:
            return None  # `key:` with nothing after it
        raise SkillError(f"{key!r} must be a string, not a map")
    if isinstance(value, list):
        raise SkillError(f"{key!r} must be a string, not a list")
    return value


def _words(fields: Frontmatter, key: str) -> list[str]:
    """A list field: a YAML list, or one string of space-separated words."""
    value = fields.get(key)
    if isinstance(value, list):
        return value
    if isinstance(value, dict):
        if not value:
            return []
        raise SkillError(f"{key!r} must be a list or a string, not a map")
    return value.split() if value else []


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
    description = (_string(fields, "description") or "").strip()  # a block scalar ends in a newline
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
    return Skill(
        name=name,
        description=description,
        path=path,
        body=body,
        license=_string(fields, "license"),
        compatibility=compatibility,
        metadata=dict(metadata),
        allowed_tools=_words(fields, "allowed-tools"),
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
