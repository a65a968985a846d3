"""A SKILL.md's frontmatter at its edges: a byte-order mark, '---' lines with trailing
spaces, the body's first spaces kept, the size and nesting bounds exactly, and the line a
character YAML refuses is reported on."""

from __future__ import annotations

import pytest

from yoagent.core._skill_frontmatter import (
    MAX_FRONTMATTER_CHARS,
    MAX_NESTING,
    SkillError,
    parse_frontmatter,
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
