"""Hostile SKILL.md files: each is refused with a reason in ``SkillSet.problems``, quickly and
without reading or expanding more than the caps allow, and the other skills still load.

Every test runs on libyaml's loader and on the pure-Python fallback."""

from __future__ import annotations

import resource
from pathlib import Path

import pytest

from yoagent.core import _skill_frontmatter, load_skills
from yoagent.core._skill_frontmatter import (
    MAX_FRONTMATTER_CHARS,
    MAX_NESTING,
    MAX_SKILL_BYTES,
    SkillError,
    load_yaml,
)


@pytest.fixture(params=["libyaml", "python"], autouse=True)
def loader(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setattr(_skill_frontmatter, "_Loader", _skill_frontmatter._PythonLoader)
    elif _skill_frontmatter._Loader is _skill_frontmatter._PythonLoader:
        pytest.skip("PyYAML is built without libyaml here")
    return str(request.param)


def only_problem(root: Path, folder: str, data: bytes) -> str:
    """Load ``root`` holding a good skill and ``folder`` with ``data`` as its SKILL.md; the
    one problem reported (the good skill must load)."""
    good = root / "good" / "SKILL.md"
    good.parent.mkdir(parents=True, exist_ok=True)
    good.write_text("---\nname: good\ndescription: fine\n---\nbody\n")
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    skills = load_skills(root)
    assert skills.names == ["good"]
    (problem,) = skills.problems
    assert problem.path == path
    return problem.problem


def billion_laughs(levels: int = 9) -> str:
    lines = ["lol0: &lol0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join([f"*lol{level - 1}"] * 10)
        lines.append(f"lol{level}: &lol{level} [{refs}]")
    return "\n".join(lines) + "\n"


def test_libyaml_is_used_where_pyyaml_has_it(loader: str) -> None:
    import yaml

    if loader == "libyaml":
        assert yaml.__with_libyaml__
        assert issubclass(_skill_frontmatter._Loader, yaml.CSafeLoader)


def test_an_alias_bomb_is_refused_before_anything_expands(tmp_path: Path) -> None:
    text = f"---\nname: bomb\ndescription: d\n{billion_laughs()}---\n"
    problem = only_problem(tmp_path, "bomb", text.encode())
    assert problem == (
        "line 4: the value anchored here is repeated through an alias (*name); aliases are "
        "not allowed in a skill's frontmatter"
    )


def test_a_self_referring_alias_is_refused() -> None:
    with pytest.raises(SkillError, match="aliases are not allowed"):
        load_yaml("loop: &a [*a]\n")
    with pytest.raises(SkillError, match="aliases are not allowed"):
        load_yaml("a: &m {b: *m}\n")


def test_an_anchor_used_once_is_harmless() -> None:
    assert load_yaml("description: &d text\n") == {"description": "text"}


def test_a_huge_file_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    path = tmp_path / "huge" / "SKILL.md"
    path.parent.mkdir()
    with path.open("wb") as file:  # a sparse 8 GiB file: reading it whole would take minutes
        file.write(b"---\nname: huge\ndescription: d\n---\n")
        file.truncate(8 * 1024**3)
    (tmp_path / "good").mkdir()
    (tmp_path / "good" / "SKILL.md").write_text("---\nname: good\ndescription: fine\n---\n")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    skills = load_skills(tmp_path)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert skills.names == ["good"]
    assert str(skills.problems[0]).endswith(f"SKILL.md is larger than {MAX_SKILL_BYTES} bytes")
    assert grown_kib < 64 * 1024  # nowhere near the file's size


def test_a_frontmatter_over_the_cap_is_refused_before_parsing(tmp_path: Path) -> None:
    padding = "# " + "x" * 78 + "\n"
    filler = padding * (MAX_FRONTMATTER_CHARS // len(padding) + 1)
    text = f"---\nname: big\ndescription: d\n{filler}---\nbody\n"
    assert len(text.encode()) < MAX_SKILL_BYTES
    problem = only_problem(tmp_path, "big", text.encode())
    assert problem.startswith("the frontmatter is ")
    assert problem.endswith(f" characters; the limit is {MAX_FRONTMATTER_CHARS}")


def test_a_frontmatter_never_closed_in_a_long_file_is_reported(tmp_path: Path) -> None:
    text = "---\nname: open\ndescription: d\n" + "line\n" * 40_000
    problem = only_problem(tmp_path, "open", text.encode())
    assert problem == "the frontmatter is never closed (no second '---' line)"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "SKILL.md is not UTF-8 text (byte 0x89 at offset 0)",
        ),
        (
            b"---\nname: latin\ndescription: caf\xe9\n---\n",
            "SKILL.md is not UTF-8 text (byte 0xe9 at offset 32)",
        ),
        (
            b"---\nname: nul\ndescription: a\x00b\n---\n",
            "line 3: character #x0000 is not allowed in YAML",
        ),
        (
            b"---\nname: esc\ndescription: \x1b[31mred\n---\n",
            "line 3: character #x001b is not allowed in YAML",
        ),
    ],
)
def test_binary_and_non_utf8_files_are_refused(tmp_path: Path, data: bytes, problem: str) -> None:
    assert only_problem(tmp_path, "bin", data) == problem


def assert_too_deep(text: str) -> None:
    assert len(text) < MAX_FRONTMATTER_CHARS  # parsed, not refused for its size
    with pytest.raises(SkillError) as caught:
        _skill_frontmatter.parse_frontmatter(text)
    message = str(caught.value)
    assert f"nested deeper than {MAX_NESTING} levels" in message or (
        "exceeded maximum nesting depth" in message  # libyaml's own limit (1000 levels)
    )


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 1_500, 30_000])
def test_deep_flow_nesting_is_refused(depth: int) -> None:
    assert_too_deep(f"---\nname: deep\ndescription: d\nmetadata: {'[' * depth}{']' * depth}\n---\n")


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 300])
def test_deep_block_nesting_is_refused(depth: int) -> None:
    body = "".join(" " * level + "a:\n" for level in range(depth)) + " " * depth + "x\n"
    assert_too_deep(f"---\nname: deep\ndescription: d\n{body}---\n")


def test_the_nesting_limit_counts_every_level_from_the_frontmatter_map() -> None:
    def nested(depth: int) -> str:  # the map, metadata's map and the lists: depth + 3 levels
        return f"metadata:\n  deep: {'[' * depth}x{']' * depth}\n"

    assert isinstance(load_yaml(nested(MAX_NESTING - 3)), dict)
    with pytest.raises(SkillError, match=f"line 3: nested deeper than {MAX_NESTING} levels"):
        load_yaml(nested(MAX_NESTING - 2))


@pytest.mark.parametrize(
    ("frontmatter", "problem"),
    [
        ("? [a, b]\n: c\n", "line 4: a key must be plain text"),
        ("!!int 3: x\n", "line 4: a key must be plain text"),
        ("~: x\n", "line 4: a key must be plain text"),
        ("metadata:\n  ? {a: b}\n  : c\n", "line 5: a key must be plain text"),
        ("license: !!set {a, b}\n", "'license' must be a string, not a list"),
        ("license: !!timestamp 2024-01-01\n", "'license' must be a string, not a date"),
        ("license: !custom x\n", "line 4: could not determine a constructor for the tag '!custom'"),
    ],
)
def test_odd_keys_and_tags_are_refused(tmp_path: Path, frontmatter: str, problem: str) -> None:
    text = f"---\nname: odd\ndescription: d\n{frontmatter}---\n"
    assert problem in only_problem(tmp_path, "odd", text.encode())
