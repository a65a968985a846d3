"""edit_file word for word: each refusal's text, the match count and its lines, the "did you
mean" hint (which window it picks, its numbering and similarity, its bounds), line endings
normalised only where the file's are uniform, the diff's cut, and the tool's details."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from tools_helpers import make_ctx

from yoagent.core import CancelToken, ToolContext, ToolError
from yoagent.tools import EditFileTool, PathSandbox, edit_file
from yoagent.tools._diff import ChangedSpans, unified_diff
from yoagent.tools.edit_file import (
    Edit,
    EditError,
    EditFileArguments,
    _closest,
    _diff,
    apply_edits,
)

NOT_FOUND = "edit_file: old_text was not found in the file. No edit was applied."


def refused(data: bytes, *edits: Edit, **options: object) -> str:
    with pytest.raises(EditError) as info:
        apply_edits(data, list(edits), **options)  # type: ignore[arg-type]
    return str(info.value)


def after_reading(monkeypatch: pytest.MonkeyPatch, action: Callable[[], None]) -> None:
    """Run ``action`` once edit_file has read the file, before it writes it."""
    real_read_all = edit_file.read_all

    def read_then_act(fd: int) -> bytes:
        data = real_read_all(fd)
        action()
        return data

    monkeypatch.setattr(edit_file, "read_all", read_then_act)


async def edit_refused(tool: EditFileTool, arguments: dict[str, object], ctx: ToolContext) -> str:
    """The text of the ToolError ``tool`` raises for ``arguments``."""
    with pytest.raises(ToolError) as info:
        await tool.execute(arguments, ctx)
    return str(info.value)


def test_no_edit_and_a_plain_miss_are_said_in_full() -> None:
    assert refused(b"abc") == ("edit_file: no edit given (pass old_text and new_text, or edits)")
    assert refused(b"abc\n", Edit("zzz", "y")) == NOT_FOUND
    assert refused(b"abc\n", Edit("zzz", "y"), shown="m.py") == (
        "edit_file: old_text was not found in m.py. No edit was applied."
    )


def test_crlf_in_the_arguments_is_normalised_only_for_a_file_without_lone_crs() -> None:
    lf = apply_edits(b"a\nb\nc\n", [Edit("a\r\nb", "p\r\nq")])
    assert lf.data == b"p\nq\nc\n" and lf.line_endings == "LF"
    crlf = apply_edits(b"a\r\nb\r\nc\r\n", [Edit("a\r\nb", "p\nq")])
    assert crlf.data == b"p\r\nq\r\nc\r\n" and crlf.line_endings == "CRLF"
    mixed = apply_edits(b"a\r\nb\nc\n", [Edit("a\r\nb", "p\r\nq")])
    assert mixed.data == b"p\r\nq\nc\n" and mixed.line_endings == "LF"
    assert refused(b"a\r\nb\nc\n", Edit("a\nb", "x")).startswith(NOT_FOUND)


def test_the_diff_of_a_crlf_and_of_a_mixed_file_shows_only_the_edited_line() -> None:
    crlf = apply_edits(b"a\r\nb\r\nc\r\n", [Edit("b", "B")], shown="f")
    assert crlf.diff == "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"
    mixed = apply_edits(b"a\r\nb\nc\n", [Edit("c", "C")], shown="f")
    assert mixed.diff == "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\r\n b\n-c\n+C"


def test_the_match_count_names_up_to_ten_lines() -> None:
    def found(count: int, lead: str = "") -> str:
        return refused((lead + "x\n" * count).encode(), Edit("x", "y"))

    ten = ", ".join(str(n) for n in range(1, 11))
    assert found(10) == (
        f"edit_file: old_text was found 10 times in the file (starting on lines {ten}); "
        "it must be unique: include more surrounding lines. No edit was applied."
    )
    assert f"found 11 times in the file (starting on lines {ten}, …);" in found(11)
    assert "found 100 times in the file" in found(100)
    assert "found more than 100 times in the file" in found(101)
    assert "(starting on lines 2, 3);" in found(2, lead="\n")


def test_overlapping_matches_count_as_several() -> None:
    assert "found 2 times in the file (starting on lines 1, 1);" in refused(
        b"aaa\n", Edit("aa", "b")
    )


def test_several_edits_name_the_one_that_failed() -> None:
    message = refused(b"abc\n", Edit("a", "A"), Edit("zzz", "y"))
    assert (
        message
        == "edit_file: edit 2 of 2: old_text was not found in the file. No edit was applied."
    )


def test_the_line_number_hint_needs_every_line_numbered() -> None:
    hint = (
        "old_text seems to start its lines with the line numbers read_file shows; leave them out."
    )
    numbered = refused(b"foo\nbar\n", Edit("     1\tfoo\n     2\tbaz", "x"))
    assert hint in numbered.splitlines()
    assert hint not in refused(b"foo\nbar\n", Edit("     1\tfoo\nbaz", "x"))
    assert hint not in refused(b"a\nb\n", Edit("\n\n\n", "x"))


def test_the_whitespace_hint_and_the_closest_lines_word_for_word() -> None:
    message = refused(b"def f():\n    return  a\n    pass\n", Edit("return a\npass", "x"))
    assert message == "\n".join(
        [
            NOT_FOUND,
            "The text is there with different whitespace or indentation.",
            "Did you mean lines 2-3 (74% similar)?",
            "     2\t    return  a",
            "     3\t    pass",
        ]
    )


def test_the_hint_picks_the_first_of_equally_close_windows() -> None:
    data = b"foo bar baz\nx\nfoo bar baz\n"
    assert "Did you mean lines 1-1 (91% similar)?" in refused(data, Edit("foo bar bax", "y"))


def test_the_hint_finds_the_closest_window_at_either_end_of_a_long_file() -> None:
    filler = [f"unrelated line number {n}" for n in range(20)]
    last = "\n".join([*filler, "alpha beta gamma", "delta epsilon zeta"]).encode()
    old = Edit("alpha beta gamma\ndelta epsilon zetx", "y")
    assert "Did you mean lines 21-22 (97% similar)?" in refused(last, old)
    first = "\n".join(["alpha beta gamma", "delta epsilon zeta", *filler]).encode()
    assert "Did you mean lines 1-2 (97% similar)?" in refused(first, old)
    second = "\n".join(["zero", "alpha beta gamma", "delta epsilon zeta", *filler]).encode()
    assert "Did you mean lines 2-3 (97% similar)?" in refused(second, old)


def test_the_hint_ranks_windows_by_the_share_of_their_words_old_text_has() -> None:
    long_lines = ["foo x x x x x x x x x x"] * 9
    data = "\n".join([*long_lines, "foo baz"]).encode()
    assert "Did you mean lines 10-10 (86% similar)?" in refused(data, Edit("foo bar", "y"))
    blanks = "\n".join([*[""] * 9, "foo baz"]).encode()
    assert "Did you mean lines 10-10 (86% similar)?" in refused(blanks, Edit("foo bar", "y"))


def test_a_short_window_that_cannot_win_does_not_end_the_search() -> None:
    data = b"alpha beta gamma deltaY\nalpha\nbeta\n"
    message = refused(data, Edit("alpha beta gamma deltaX", "y"))
    assert "Did you mean lines 1-1 (96% similar)?" in message


def test_a_hint_needs_60_percent_similarity_exactly() -> None:
    assert "Did you mean lines 1-1 (60% similar)?" in refused(b"abcde\n", Edit("abcxy", "z"))
    assert refused(b"abcde\n", Edit("abxyz", "z")) == NOT_FOUND


def test_a_long_repetitive_line_is_compared_without_junk_heuristics() -> None:
    line = "".join(chr(ord("a") + n % 26) for n in range(300))
    old = line[:150] + "Q" + line[150:]
    assert "Did you mean lines 1-1 (100% similar)?" in refused(line.encode(), Edit(old, "z"))


def test_of_two_windows_as_close_the_first_is_kept() -> None:
    message = refused(b"haebbcdg\nahbfccdg\n", Edit("abcdefgh", "z"))
    assert "Did you mean lines 1-1 (62% similar)?\n     1\thaebbcdg" in message


def test_a_windows_word_score_is_a_rolling_sum() -> None:
    pairs = ["zzz", "alpha zzz"] * 10
    data = "\n".join(["beta", "alpha  beta", *pairs]).encode()
    assert "Did you mean lines 2-2 (95% similar)?" in refused(data, Edit("alpha beta", "z"))


def test_a_file_past_the_hint_bound_gets_no_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(edit_file, "_HINT_MAX_LINES", 3)
    assert "Did you mean" in refused(b"foo bar\nx\ny", Edit("foo baz", "z"))
    assert refused(b"foo bar\nx\ny\nz", Edit("foo baz", "z")) == NOT_FOUND


def test_old_texts_surrounding_newlines_are_not_part_of_the_hint() -> None:
    assert _closest("foo bar\nx", "\nfoo bar!\n") == (1, pytest.approx(14 / 15), ["foo bar"])
    assert _closest("Xfoo bar\nx", "Xfoo bar!") == (1, pytest.approx(16 / 17), ["Xfoo bar"])
    assert _closest("foo bar\nx", "  foo bar!") == (1, pytest.approx(14 / 17), ["foo bar"])


def test_the_hint_keeps_the_best_window_found_before_it_was_stopped() -> None:
    calls: list[int] = []

    def stop() -> bool:
        calls.append(1)
        return len(calls) > 1

    data = b"foo bar\nfoo baz qux\n"
    message = refused(data, Edit("foo bax", "y"), stop=stop)
    assert "Did you mean lines 1-1 (86% similar)?" in message


def test_the_diff_is_cut_after_80_lines() -> None:
    def lines_for(count: int) -> tuple[str, str, list[str], ChangedSpans]:
        changed = "".join(f"line {n}\n" for n in range(count))
        before, after = changed + "kept\n", changed.upper() + "kept\n"
        spans = ChangedSpans()
        spans.replace(0, len(changed), len(changed))
        return before, after, unified_diff(before, after, spans.spans, "f"), spans

    sizes = {len(lines_for(n)[2]): n for n in range(30, 45)}
    before, after, lines, spans = lines_for(sizes[80])
    assert _diff(before, after, spans.spans, "f") == "\n".join(lines)
    before, after, lines, spans = lines_for(sizes[82])
    assert _diff(before, after, spans.spans, "f") == "\n".join(
        [*lines[:80], "[... 2 more diff lines ...]"]
    )


async def test_the_arguments_need_one_form_exactly(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "f").write_text("abc\n")
    tool = EditFileTool(PathSandbox([tmp_path]))
    with pytest.raises(ToolError) as both:
        await tool.execute(
            {
                "path": "f",
                "old_text": "a",
                "new_text": "b",
                "edits": [{"old_text": "b", "new_text": "c"}],
            },
            ctx,
        )
    assert str(both.value) == "edit_file: pass either old_text/new_text or edits, not both"
    assert (
        await edit_refused(tool, {"path": "f"}, ctx)
        == "edit_file: old_text and new_text are required (strings), or edits"
    )


async def test_allowed_paths_confine_the_tool(tmp_path: Path, ctx: ToolContext) -> None:
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    (outside / "f").write_text("abc\n")
    tool = EditFileTool(allowed_paths=[inside])
    with pytest.raises(ToolError, match="outside the allowed paths"):
        await tool.execute({"path": str(outside / "f"), "old_text": "a", "new_text": "b"}, ctx)
    assert (outside / "f").read_text() == "abc\n"


async def test_the_result_counts_the_edits_and_names_its_details(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "f").write_text("abc\n")
    tool = EditFileTool(PathSandbox([tmp_path]))
    edits = [{"old_text": "a", "new_text": "A"}, {"old_text": "b", "new_text": "B"}]
    result = await tool.execute({"path": "f", "edits": edits}, ctx)
    assert result.text.startswith("Edited f (2 edits applied).\n")
    assert result.details == {
        "path": "f",
        "edits": 2,
        "diff": "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-abc\n+ABc",
        "encoding": "utf-8",
        "line_endings": "LF",
    }


async def test_a_cancelled_call_looks_for_no_closest_lines(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("foo bar\n")
    token = CancelToken()
    token.cancel()
    ctx = make_ctx("edit_file", cancel=token)
    tool = EditFileTool(PathSandbox([tmp_path]))
    with pytest.raises(ToolError) as info:
        await tool.run(
            EditFileArguments.model_validate({"path": "f", "old_text": "foo baz", "new_text": "x"}),
            ctx,
        )
    assert str(info.value) == "edit_file: old_text was not found in f. No edit was applied."


async def test_a_file_over_the_size_bound_is_refused(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(edit_file, "MAX_EDIT_BYTES", 4)
    tool = EditFileTool(PathSandbox([tmp_path]))
    (tmp_path / "f").write_text("abc\n")
    await tool.execute({"path": "f", "old_text": "a", "new_text": "A"}, ctx)
    (tmp_path / "g").write_text("abcd\n")
    assert (
        await edit_refused(tool, {"path": "g", "old_text": "a", "new_text": "A"}, ctx)
        == "edit_file: g is 5 bytes, more than 4; edit it with bash instead"
    )


async def test_a_failed_write_names_the_tool_and_the_file(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "f").write_text("abc\n")

    def folder_made_a_file() -> None:
        shutil.rmtree(tmp_path / "sub")
        (tmp_path / "sub").write_text("now a file\n")

    after_reading(monkeypatch, folder_made_a_file)
    tool = EditFileTool(PathSandbox([tmp_path]))
    assert (
        await edit_refused(tool, {"path": "sub/f", "old_text": "a", "new_text": "A"}, ctx)
        == "edit_file: sub/f: a parent in the path is not a folder"
    )


async def test_a_link_swapped_in_after_the_check_is_never_followed(
    tmp_path: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret").write_text("abc\n")
    (root / "f").write_text("abc\n")
    tool = EditFileTool(PathSandbox([root]))

    def file_made_a_link() -> None:
        (root / "f").unlink()
        (root / "f").symlink_to(outside / "secret")

    after_reading(monkeypatch, file_made_a_link)
    assert await edit_refused(tool, {"path": "f", "old_text": "a", "new_text": "A"}, ctx) == (
        "edit_file: f: a symbolic link appeared in the path after it was checked; refused"
    )
    assert (outside / "secret").read_text() == "abc\n"
    assert (root / "f").is_symlink()
    monkeypatch.undo()
    (outside / "other").write_text("zzz\n")
    (root / "g").symlink_to(outside / "other")

    class CheckedBeforeTheSwap(PathSandbox):
        def check(self, path: object, *, tool: str) -> str:  # type: ignore[override]
            return str(root / "g")  # as if "g" became a link after the check

    swapped = EditFileTool(CheckedBeforeTheSwap([root]))
    assert await edit_refused(
        swapped, {"path": "g", "old_text": "a", "new_text": "A"}, ctx
    ) == (  # refused before reading, not "old_text was not found"
        "edit_file: g: a symbolic link appeared in the path after it was checked; refused"
    )
