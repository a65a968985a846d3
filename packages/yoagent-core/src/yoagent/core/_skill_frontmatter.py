"""A SKILL.md's YAML frontmatter: PyYAML's safe loader, then a pydantic model of the fields.

The loader is PyYAML's ``CSafeLoader`` (libyaml) where it is installed, ``SafeLoader``
otherwise, with these decisions on top:

- **Every plain scalar is text.** The AgentSkills fields are all strings, and YAML 1.1's
  implicit typing would turn ``version: 1.10`` into the number 1.1 and
  ``description: No`` into ``False``. Only ``~``, ``null`` and an empty value mean
  "absent". An explicit tag (``!!int 3``) still makes a number, which the model refuses.
- **Aliases are refused.** A frontmatter never needs one, and an alias bomb ("billion
  laughs") is a few hundred bytes that expand to billions of items as soon as anything
  walks the loaded value. The node graph is checked before anything is built from it.
- **A key given twice is refused** (PyYAML would keep the last one silently), and so is
  a key that is not text.
- **Bounded before parsing**: the file is read up to :data:`MAX_SKILL_BYTES`, the
  frontmatter up to :data:`MAX_FRONTMATTER_CHARS`, nesting up to :data:`MAX_NESTING`
  levels (libyaml stops at 1000 itself; the pure-Python loader is stopped while it
  composes, before its recursion gets deep). Measured in ``benchmarks/skills_frontmatter.py``.

Every refusal is a :class:`SkillError` naming the line (of the file) and the problem.
"""

from __future__ import annotations

import re
from typing import Any, cast

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from yaml.composer import ComposerError
from yaml.error import Mark, MarkedYAMLError, YAMLError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.reader import ReaderError

from ._types.errors import YoagentError

MAX_SKILL_BYTES = 256 * 1024
"""Largest skill file read: a SKILL.md when loading, another file by ``read_skill``."""
MAX_FRONTMATTER_CHARS = 64 * 1024
"""Longest frontmatter parsed (the fields a skill has fit in a few hundred characters)."""
MAX_NESTING = 32
"""Deepest nesting of lists and maps in a frontmatter."""
NAME_PATTERN = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME_LENGTH = 64
MAX_DESCRIPTION_LENGTH = 1024
MAX_COMPATIBILITY_LENGTH = 500

_FIRST_LINE = 2  # the frontmatter's first line is the file's second, after the opening '---'
_STR = "tag:yaml.org,2002:str"
_NULL = "tag:yaml.org,2002:null"
_NULL_PATTERN = re.compile(r"^(?:~|null|Null|NULL|)$")


class SkillError(YoagentError, ValueError):
    """A SKILL.md file that cannot be used; the text names the line and the problem."""


# ---------------------------------------------------------------------------
# YAML
# ---------------------------------------------------------------------------


class _TextScalars:
    """Resolve a plain scalar to text, or to null for ``~``/``null``/nothing; nothing else."""

    yaml_implicit_resolvers: dict[Any, Any] = {  # noqa: RUF012 (PyYAML's class attribute)
        first: [(_NULL, _NULL_PATTERN)] for first in ("~", "n", "N", "")
    }


class _PythonLoader(_TextScalars, yaml.SafeLoader):
    """The pure-Python safe loader, stopped at :data:`MAX_NESTING` while it composes."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                mark = cast(Mark, cast(Any, self).peek_event().start_mark)
                raise ComposerError(None, None, f"nested deeper than {MAX_NESTING} levels", mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_Loader: type[yaml.SafeLoader] | type[yaml.CSafeLoader]
try:
    from yaml import CSafeLoader

    class _LibyamlLoader(_TextScalars, CSafeLoader):
        """libyaml's safe loader (C), with text scalars."""

    _Loader = _LibyamlLoader
except ImportError:  # PyYAML built without libyaml
    _Loader = _PythonLoader


def _line(mark: Mark | None) -> int:
    return (mark.line if mark is not None else 0) + _FIRST_LINE


def _yaml_problem(error: YAMLError, text: str) -> str:
    """PyYAML's error as ``line N: problem`` (lines of the file)."""
    if isinstance(error, MarkedYAMLError):
        parts: list[str] = []
        if error.context:
            started = error.context_mark
            where = (
                f" (line {_line(started)})"
                if started is not None and _line(started) != _line(error.problem_mark)
                else ""
            )
            parts.append(f"{error.context}{where}")
        if error.problem:
            parts.append(error.problem)
        return f"line {_line(error.problem_mark)}: {', '.join(parts) or 'invalid YAML'}"
    if isinstance(error, ReaderError):
        line = text.count("\n", 0, error.position) + _FIRST_LINE
        return f"line {line}: character #x{error.character:04x} is not allowed in YAML"
    return f"invalid YAML: {error}"


def _check_nodes(root: Node) -> None:
    """Refuse aliases, keys that are not text or appear twice, and deep nesting.

    Walks the node graph once with an explicit stack: a node met twice is an alias
    (PyYAML composes ``*name`` as the anchored node itself), so an alias bomb stops here
    at its first repeat instead of being expanded.
    """
    seen: set[int] = set()
    stack: list[tuple[Node, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if id(node) in seen:
            raise SkillError(
                f"line {_line(node.start_mark)}: the value anchored here is repeated through an "
                "alias (*name); aliases are not allowed in a skill's frontmatter"
            )
        seen.add(id(node))
        if depth > MAX_NESTING:
            raise SkillError(
                f"line {_line(node.start_mark)}: nested deeper than {MAX_NESTING} levels"
            )
        if isinstance(node, SequenceNode):
            items = cast(list[Node], node.value)
            stack.extend((item, depth + 1) for item in reversed(items))
        elif isinstance(node, MappingNode):
            keys: set[str] = set()
            pairs = cast(list[tuple[Node, Node]], node.value)
            for key, _ in pairs:
                if not isinstance(key, ScalarNode) or key.tag != _STR:
                    raise SkillError(f"line {_line(key.start_mark)}: a key must be plain text")
                name = cast(str, key.value)
                if name in keys:
                    raise SkillError(f"line {_line(key.start_mark)}: {name!r} appears twice")
                keys.add(name)
            stack.extend((value, depth + 1) for _, value in reversed(pairs))


def load_yaml(text: str) -> object:
    """The value of the YAML document ``text`` (a frontmatter), checked as described above."""
    try:
        return _load(text)
    except YAMLError as error:
        raise SkillError(_yaml_problem(error, text)) from None
    except RecursionError:  # a defence in depth: nesting is bounded before construction
        raise SkillError(f"nested deeper than {MAX_NESTING} levels") from None


def _load(text: str) -> object:
    loader = _Loader(text)  # the pure-Python reader refuses control characters right here
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_nodes(node)
        return cast(object, cast(Any, loader).construct_document(node))
    finally:
        cast(Any, loader).dispose()


def split_frontmatter(text: str) -> tuple[str, str]:
    """A SKILL.md's text as (frontmatter, body), the frontmatter checked for size."""
    lines = text.removeprefix("\ufeff").split("\n")
    if lines[0].rstrip() != "---":
        raise SkillError("line 1: no YAML frontmatter (the file must start with a '---' line)")
    end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
    if end is None:
        raise SkillError("the frontmatter is never closed (no second '---' line)")
    frontmatter = "".join(f"{line}\n" for line in lines[1:end])  # each line ends, as in the file
    if len(frontmatter) > MAX_FRONTMATTER_CHARS:
        raise SkillError(
            f"the frontmatter is {len(frontmatter)} characters; the limit is "
            f"{MAX_FRONTMATTER_CHARS}"
        )
    return frontmatter, "\n".join(lines[end + 1 :]).lstrip("\n")


def parse_frontmatter(text: str) -> tuple[dict[str, Any], str]:
    """Split a SKILL.md into its frontmatter fields (as YAML gives them) and its body.

    Raises :class:`SkillError` naming the line of anything YAML or these rules refuse,
    and when the frontmatter is not a map of ``key: value`` lines.
    """
    frontmatter, body = split_frontmatter(text)
    value = load_yaml(frontmatter)
    if value is None:
        return {}, body
    if not isinstance(value, dict):
        raise SkillError(f"the frontmatter must be a map of 'key: value' lines, not {_kind(value)}")
    return cast(dict[str, Any], value), body


# ---------------------------------------------------------------------------
# The fields
# ---------------------------------------------------------------------------


def _kind(value: object) -> str:
    """How a problem names a YAML value's type."""
    if isinstance(value, dict):
        return "a map"
    if isinstance(value, list | tuple | set):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes):
        return "binary data (!!binary)"
    if isinstance(value, bool):
        return "a boolean (from an explicit tag)"
    if isinstance(value, int | float):
        return "a number (from an explicit tag)"
    return f"a {type(value).__name__} (from an explicit tag)"


class SkillFrontmatter(BaseModel):
    """The AgentSkills fields of a SKILL.md (other keys are ignored).

    ``name`` and ``description`` are required; ``allowed-tools`` is a space-separated
    string or a list of strings; ``metadata`` maps strings to strings. A field given as
    ``~``/``null`` or left empty counts as absent.
    """

    model_config = ConfigDict(extra="ignore", strict=True, frozen=True, populate_by_name=True)

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = Field(default_factory=dict[str, str])
    allowed_tools: list[str] = Field(default_factory=list[str], alias="allowed-tools")

    @field_validator("name")
    @classmethod
    def _valid_name(cls, name: str) -> str:
        if not name:
            raise PydanticCustomError("empty", "'name' is required")
        if len(name) > MAX_NAME_LENGTH or not NAME_PATTERN.match(name):
            raise PydanticCustomError(
                "skill_name",
                "name {name} is not valid: use at most {limit} lowercase letters, digits and "
                "single hyphens, not at the start or end",
                {"name": repr(name), "limit": MAX_NAME_LENGTH},
            )
        return name

    @field_validator("description")
    @classmethod
    def _valid_description(cls, description: str) -> str:
        description = description.strip()  # a block scalar ends in a newline
        if not description:
            raise PydanticCustomError("empty", "'description' is required")
        if len(description) > MAX_DESCRIPTION_LENGTH:
            raise PydanticCustomError(
                "too_long",
                "description is {length} characters; the limit is {limit}",
                {"length": len(description), "limit": MAX_DESCRIPTION_LENGTH},
            )
        return description

    @field_validator("compatibility")
    @classmethod
    def _valid_compatibility(cls, compatibility: str | None) -> str | None:
        if compatibility is not None and len(compatibility) > MAX_COMPATIBILITY_LENGTH:
            raise PydanticCustomError(
                "too_long",
                "compatibility is {length} characters; the limit is {limit}",
                {"length": len(compatibility), "limit": MAX_COMPATIBILITY_LENGTH},
            )
        return compatibility

    @field_validator("allowed_tools", mode="before")
    @classmethod
    def _words(cls, value: object) -> object:
        return value.split() if isinstance(value, str) else value


def read_frontmatter(fields: dict[str, Any]) -> SkillFrontmatter:
    """The frontmatter ``fields`` checked against the AgentSkills rules."""
    present = {key: value for key, value in fields.items() if value is not None}
    try:
        return SkillFrontmatter.model_validate(present)
    except ValidationError as error:
        raise SkillError("; ".join(_field_problem(e) for e in error.errors())) from None


_EXPECTED = {
    "string_type": "a string",
    "list_type": "a list of strings",
    "dict_type": "a map of key: value lines",
}


def _field_problem(error: Any) -> str:
    """One pydantic error in the words of the rest of this module."""
    kind = cast(str, error["type"])
    location = [str(part) for part in cast(tuple[Any, ...], error["loc"])]
    if kind == "missing":
        return f"{location[0]!r} is required"
    if kind not in _EXPECTED:
        return cast(str, error["msg"])  # one of the validators' own messages
    field, *inside = location
    if inside and inside[-1] == "[key]":
        return f"{field!r} keys must be strings, not {_kind(error['input'])}"
    if not inside:
        where = repr(field)
    elif inside[0].isdigit():
        where = f"{field!r} item {int(inside[0]) + 1}"
    else:
        where = f"{field!r} entry {inside[0]!r}"
    return f"{where} must be {_EXPECTED[kind]}, not {_kind(error['input'])}"
