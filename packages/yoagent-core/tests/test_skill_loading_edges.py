"""Skills at their edges: what :meth:`Skill.files` lists and where it stops, each problem
:func:`load_skills` reports (its path and words), the prompt section and the
``read_skill`` tool's text, details and errors word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from core_helpers import route_reads

from yoagent.core import _skills
from yoagent.core._skill_frontmatter import MAX_SKILL_BYTES
from yoagent.core._skills import Skill, SkillProblem, SkillSet, load_skills
from yoagent.core._tools.contract import ToolContext, ToolError


def write_skill(root: Path, name: str, description: str = "does things", **extra: str) -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        f"name: {name}",
        f"description: {description}",
        *(f"{k}: {v}" for k, v in extra.items()),
    ]
    path.write_text("---\n" + "\n".join(lines) + "\n---\nbody\n", encoding="utf-8")
    return path


def skill_in(folder: Path) -> Skill:
    return Skill(name=folder.name, description="d", path=folder / "SKILL.md", body="b")


def ctx() -> ToolContext:
    return ToolContext(tool_call_id="t", tool_name="read_skill")


# -- Skill.files ------------------------------------------------------------------


def test_files_lists_200_by_default(tmp_path: Path) -> None:
    for index in range(201):
        (tmp_path / f"f{index:03d}").write_text("")
    files = skill_in(tmp_path).files()
    assert files == [f"f{index:03d}" for index in range(200)]


def test_files_lists_up_to_its_limit_exactly(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text("")
    assert skill_in(tmp_path).files(limit=2) == ["a", "b"]


def test_files_stops_after_the_entries_it_may_look_at(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_skills, "MAX_LISTED_ENTRIES", 5)
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "inner").write_text("")
    for name in ("b", "c", "d", "e", "f", "g"):
        (tmp_path / name).write_text("")
    # Looked at: a, a/inner, b, c, d (five entries, the folder counted as one).
    assert skill_in(tmp_path).files() == ["a/inner", "b", "c", "d"]


def test_files_looks_only_as_deep_as_its_depth_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_skills, "MAX_LISTED_DEPTH", 2)
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "deep.md").write_text("")
    (tmp_path / "a" / "near.md").write_text("")
    assert skill_in(tmp_path).files() == ["a/near.md"]


def test_files_neither_follows_nor_lists_a_link_to_a_folder(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("")
    folder = tmp_path / "skill"
    folder.mkdir()
    (folder / "link").symlink_to(outside, target_is_directory=True)
    (folder / "own.md").write_text("")
    assert skill_in(folder).files() == ["own.md"]


def test_files_leaves_out_hidden_files_and_folders(tmp_path: Path) -> None:
    (tmp_path / ".hidden").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    (tmp_path / "seen.md").write_text("")
    assert skill_in(tmp_path).files() == ["seen.md"]


def test_files_of_a_folder_that_is_gone_is_empty(tmp_path: Path) -> None:
    assert skill_in(tmp_path / "gone").files() == []


def test_files_skips_an_entry_it_cannot_stat_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    class Entry:
        def __init__(self, name: str, *, fails: bool) -> None:
            self.name = name
            self.path = str(tmp_path / name)
            self.fails = fails

        def is_dir(self, *, follow_symlinks: bool = True) -> bool:
            if self.fails:
                raise PermissionError(13, "Permission denied")
            return False

        def is_file(self, *, follow_symlinks: bool = True) -> bool:
            return True

    entries: list[Any] = [Entry("a", fails=True), Entry("b", fails=False)]
    monkeypatch.setattr(_skills, "_listing", lambda folder: iter(entries))
    assert skill_in(tmp_path).files() == ["b"]


# -- loading ----------------------------------------------------------------------


def test_a_skill_keeps_its_compatibility(tmp_path: Path) -> None:
    write_skill(tmp_path, "pdf", compatibility="needs poppler")
    skill = load_skills(tmp_path).get("pdf")
    assert skill is not None
    assert skill.compatibility == "needs poppler"


def test_a_skill_file_of_the_largest_size_is_read(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "big")
    text = path.read_text()
    path.write_text(text + "x" * (MAX_SKILL_BYTES - len(text)))
    assert path.stat().st_size == MAX_SKILL_BYTES
    skills = load_skills(tmp_path)
    assert skills.names == ["big"]
    assert skills.problems == []


def test_a_duplicate_is_reported_at_its_own_path_naming_the_first(tmp_path: Path) -> None:
    first = write_skill(tmp_path / "one", "x")
    second = write_skill(tmp_path / "two", "x")
    skills = load_skills([tmp_path / "one", tmp_path / "two"])
    assert skills.problems == [SkillProblem(second, f"skill 'x' is already loaded from {first}")]


def test_a_missing_directory_is_reported_and_the_next_one_loads(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    write_skill(tmp_path / "real", "x")
    skills = load_skills([missing, tmp_path / "real"])
    assert skills.names == ["x"]
    assert skills.problems == [SkillProblem(missing, "skills directory does not exist")]


def test_a_skills_own_folder_passed_as_the_root_is_reported_at_the_root(tmp_path: Path) -> None:
    folder = write_skill(tmp_path, "x").parent
    skills = load_skills(folder)
    assert skills.problems == [
        SkillProblem(
            folder, "this is a skill's own folder; pass the folder that holds skill folders"
        )
    ]


def test_hidden_folders_are_passed_over_and_the_rest_load(tmp_path: Path) -> None:
    write_skill(tmp_path, ".hidden")
    write_skill(tmp_path, "shown")
    skills = load_skills(tmp_path)
    assert skills.names == ["shown"]
    assert skills.problems == []


# -- the prompt section and the tool ---------------------------------------------


def test_the_prompt_section_word_for_word(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "pdf", "Fills PDF forms.")
    assert load_skills(tmp_path).prompt_section() == (
        "## Skills\n"
        "Skills hold instructions for particular jobs. When a task matches a skill's "
        "description, read it first with the read_skill tool.\n"
        "\n"
        f"- pdf: Fills PDF forms. ({path})"
    )


def test_the_tools_description_names_the_skills_or_none(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    write_skill(tmp_path, "b")
    assert load_skills(tmp_path).tool().description == (
        "Read a skill's instructions (its SKILL.md) before a task it covers; with "
        "'file', read one of the skill's other files. Skills: a, b."
    )
    assert SkillSet().tool().description.endswith("Skills: none loaded.")


async def test_an_unknown_skill_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    write_skill(tmp_path, "b")
    with pytest.raises(ToolError) as caught:
        await load_skills(tmp_path).tool().execute({"name": "c"}, ctx())
    assert str(caught.value) == "read_skill: no skill named 'c' (skills: a, b)"
    with pytest.raises(ToolError) as caught:
        await SkillSet().tool().execute({"name": "c"}, ctx())
    assert str(caught.value) == "read_skill: no skill named 'c' (skills: none)"


async def test_a_skills_text_lists_its_other_files_and_details_name_it(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "a")
    (path.parent / "one.md").write_text("")
    (path.parent / "two.md").write_text("")
    result = await load_skills(tmp_path).tool().execute({"name": "a"}, ctx())
    assert result.text == (
        "body\n\n\n---\nOther files in this skill (read_skill with 'file'):\n- one.md\n- two.md"
    )
    assert result.details == {"skill": "a", "path": str(path)}


async def test_a_file_read_gives_its_text_and_details_name_it(tmp_path: Path) -> None:
    path = write_skill(tmp_path, "a")
    (path.parent / "one.md").write_text("one")
    result = await load_skills(tmp_path).tool().execute({"name": "a", "file": "one.md"}, ctx())
    assert result.text == "one"
    assert result.details == {"skill": "a", "path": str((path.parent / "one.md").resolve())}


async def test_a_file_is_read_no_further_than_one_byte_past_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_skill(tmp_path, "a")
    (path.parent / "one.md").write_text("one")
    asked: list[int] = []

    def recording(handle: Any, size: int) -> bytes:
        asked.append(size)
        return handle.read(size)

    route_reads(monkeypatch, recording)
    await load_skills(tmp_path).tool().execute({"name": "a", "file": "one.md"}, ctx())
    assert asked == [MAX_SKILL_BYTES + 1]


async def test_a_path_the_os_refuses_is_a_bad_path(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    with pytest.raises(ToolError) as caught:
        await load_skills(tmp_path).tool().execute({"name": "a", "file": "x\x00y"}, ctx())
    assert str(caught.value) == "read_skill: 'x\\x00y' cannot be read (bad path)"


async def test_a_name_too_long_is_quoted_by_its_first_200_characters(tmp_path: Path) -> None:
    write_skill(tmp_path, "a")
    name = "".join(chr(ord("a") + i % 26) for i in range(300))
    with pytest.raises(ToolError) as caught:
        await load_skills(tmp_path).tool().execute({"name": "a", "file": name}, ctx())
    assert str(caught.value) == f"read_skill: {name[:200]!r} cannot be read (File name too long)"
