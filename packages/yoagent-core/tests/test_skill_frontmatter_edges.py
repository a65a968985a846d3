"""A SKILL.md's frontmatter at its edges: a byte-order mark, '---' lines with trailing
spaces, the body's first spaces kept, the size and nesting bounds exactly, and the line a
character YAML refuses is reported on."""

from __future__ import annotations

import pytest
from yaml import MarkedYAMLError

from yoagent.core import _skill_frontmatter
from yoagent.core._skill_frontmatter import (
    MAX_FRONTMATTER_CHARS,
    MAX_NESTING,
    SkillError,
    load_yaml,
    parse_frontmatter,
    read_frontmatter,
    split_frontmatter,
)


def refusal(text: str) -> str:
    with pytest.raises(SkillError) as caught:
        parse_frontmatter(text)
    return str(caught.value)


def test_a_byte_order_mark_before_the_first_line_is_skipped() -> None:
    assert parse_frontmatter("\ufeff---\nname: x\n---\nbody") == ({"name": "x"}, "body")


def test_the_dashes_lines_may_end_in_spaces() -> None:
    assert parse_frontmatter("---  \nname: x\n---\t\nbody") == ({"name": "x"}, "body")


def test_a_file_without_the_opening_line_is_refused_in_these_words() -> None:
    assert refusal("name: x\n") == (
        "line 1: no YAML frontmatter (the file must start with a '---' line)"
    )


def test_the_body_keeps_its_leading_spaces_after_the_blank_lines() -> None:
    assert split_frontmatter("---\nname: x\n---\n\n\n  Xindented\n") == (
        "name: x\n",
        "  Xindented\n",
    )


def test_a_frontmatter_of_the_largest_size_is_read() -> None:
    filler = "c" * (MAX_FRONTMATTER_CHARS - len("name: x\n# \n"))
    frontmatter, _ = split_frontmatter(f"---\nname: x\n# {filler}\n---\n")
    assert len(frontmatter) == MAX_FRONTMATTER_CHARS


def nested(depth: int) -> str:
    """A frontmatter map holding lists ``depth`` - 1 deep: ``depth`` levels in all."""
    return "---\nname: x\nd: " + "[" * (depth - 1) + "]" * (depth - 1) + "\n---\n"


def test_nesting_up_to_the_bound_is_read_and_one_level_more_is_refused() -> None:
    fields, _ = parse_frontmatter(nested(MAX_NESTING))
    assert fields["name"] == "x"
    assert refusal(nested(MAX_NESTING + 1)) == f"line 3: nested deeper than {MAX_NESTING} levels"


def test_a_second_nested_value_is_measured_from_its_own_depth() -> None:
    shallow = "[" * (MAX_NESTING - 2) + "]" * (MAX_NESTING - 2)
    fields, _ = parse_frontmatter(f"---\na: {shallow}\nb: {shallow}\nc: {shallow}\n---\n")
    assert set(fields) == {"a", "b", "c"}


def test_a_character_yaml_refuses_is_reported_on_its_own_line() -> None:
    assert refusal("---\nname: x\ndescription: a\x07b\nlicense: MIT\n---\n") == (
        "line 3: character #x0007 is not allowed in YAML"
    )
    assert refusal("---\n\nname: x\ndescription: a\x07b\n---\n") == (
        "line 4: character #x0007 is not allowed in YAML"
    )


@pytest.fixture
def python_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyYAML's pure-Python loader, the fallback without libyaml (its nesting bound is
    its own, and its messages are the same everywhere)."""
    monkeypatch.setattr(_skill_frontmatter, "_Loader", _skill_frontmatter._PythonLoader)  # pyright: ignore[reportPrivateUsage]


@pytest.mark.usefixtures("python_loader")
def test_the_python_loader_reads_to_the_nesting_bound_and_refuses_one_level_more() -> None:
    fields, _ = parse_frontmatter(nested(MAX_NESTING))
    assert fields["name"] == "x"
    assert refusal(nested(MAX_NESTING + 1)) == f"line 3: nested deeper than {MAX_NESTING} levels"


@pytest.mark.usefixtures("python_loader")
def test_the_python_loaders_depth_comes_back_one_level_per_node() -> None:
    """Ten lists deep, an item, then a chain reaching one level past the bound: the item
    before the chain must leave the depth where it found it."""
    value = "[" * 10 + "x, " + "[" * 22 + "]" * 22 + "]" * 10
    assert refusal(f"---\nname: x\nd: {value}\n---\n") == (
        f"line 3: nested deeper than {MAX_NESTING} levels"
    )


def test_a_recursion_error_while_loading_is_reported_as_nesting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def too_deep(text: str) -> object:
        raise RecursionError

    monkeypatch.setattr(_skill_frontmatter, "_load", too_deep)
    with pytest.raises(SkillError) as caught:
        load_yaml("a: 1")
    assert str(caught.value) == f"nested deeper than {MAX_NESTING} levels"


@pytest.mark.usefixtures("python_loader")
def test_a_problem_on_the_line_its_context_started_names_the_line_once() -> None:
    assert refusal("---\nname: x\ntools: {a: b: c}\n---\n") == (
        "line 3: while parsing a flow mapping, expected ',' or '}', but got ':'"
    )


def test_a_metadata_key_that_is_not_text_is_named_by_its_kind() -> None:
    with pytest.raises(SkillError) as caught:
        read_frontmatter({"name": "x", "description": "d", "metadata": {1: "v"}})
    assert str(caught.value) == (
        "'metadata' keys must be strings, not a number (from an explicit tag)"
    )


def test_the_body_may_start_with_any_character_after_the_blank_lines() -> None:
    assert split_frontmatter("---\nname: x\n---\n\nXbody") == ("name: x\n", "Xbody")


@pytest.mark.usefixtures("python_loader")
def test_the_python_loader_stops_a_deep_value_after_many_siblings_while_composing() -> None:
    """A thousand items, then a value a thousand levels deep: refused at the bound
    while composing (with its line), not by the interpreter's recursion limit."""
    value = "[" + "x, " * 1_000 + "[" * 1_000 + "]" * 1_000 + "]"
    assert refusal(f"---\nname: x\nd: {value}\n---\n") == (
        f"line 3: nested deeper than {MAX_NESTING} levels"
    )


def test_a_yaml_error_with_no_mark_context_or_problem_is_invalid_yaml_on_the_first_line() -> None:
    """The fallback of the problem's wording: an error PyYAML left bare."""
    assert _skill_frontmatter._yaml_problem(MarkedYAMLError(), "a: 1") == (  # pyright: ignore[reportPrivateUsage]
        "line 2: invalid YAML"
    )
