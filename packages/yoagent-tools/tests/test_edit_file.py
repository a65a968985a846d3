"""edit_file: exact unique matches, helpful failures, all-or-nothing, endings and encodings."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tools_helpers import make_ctx

from yoagent.core import ToolContext, ToolError
from yoagent.tools import EditFileTool, PathSandbox
from yoagent.tools.edit_file import Edit, EditError, apply_edits

SOURCE = """def add(a, b):
    return a - b


def mul(a, b):
    return a * b
"""


async def test_replaces_the_unique_match_and_shows_a_diff(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    tool = EditFileTool(PathSandbox([tmp_path]))
    result = await tool.execute(
        {"path": "m.py", "old_text": "return a - b", "new_text": "return a + b"}, ctx
    )
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("a - b", "a + b")
    assert result.text.startswith("Edited m.py (1 edit applied).")
    assert "-    return a - b\n+    return a + b" in result.text


async def test_no_match_says_so_with_the_closest_lines(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as info:
        await EditFileTool().execute(
            {"path": str(tmp_path / "m.py"), "old_text": "return a-b", "new_text": "x"}, ctx
        )
    message = str(info.value)
    assert "old_text was not found" in message
    assert "No edit was applied" in message
    assert "Did you mean lines 2-2" in message
    assert "     2\t    return a - b" in message
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_whitespace_and_line_number_hints(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    tool = EditFileTool()
    with pytest.raises(ToolError, match="different whitespace or indentation"):
        await tool.execute(
            {"path": str(tmp_path / "m.py"), "old_text": "return  a  *  b", "new_text": "x"},
            ctx,
        )
    with pytest.raises(ToolError, match="line numbers read_file shows"):
        await tool.execute(
            {
                "path": str(tmp_path / "m.py"),
                "old_text": "     2\t    return a - b",
                "new_text": "x",
            },
            ctx,
        )


async def test_several_matches_are_an_error_with_the_count_and_lines(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    with pytest.raises(ToolError) as info:
        await EditFileTool().execute(
            {"path": str(tmp_path / "m.py"), "old_text": "(a, b):", "new_text": "(a, b, c):"}, ctx
        )
    assert "found 2 times" in str(info.value)
    assert "lines 1, 5" in str(info.value)
    assert (tmp_path / "m.py").read_text() == SOURCE


async def test_a_match_count_past_the_cap_is_not_reported_as_exact(
    tmp_path: Path, ctx: ToolContext
) -> None:
    (tmp_path / "many.py").write_text("x = 1\n" * 500)
    with pytest.raises(ToolError) as info:
        await EditFileTool().execute(
            {"path": str(tmp_path / "many.py"), "old_text": "x = 1", "new_text": "y = 2"}, ctx
        )
    message = str(info.value).replace(str(tmp_path), "<tmp>")  # its path may hold "101"
    assert "found more than 100 times" in message
    assert "101" not in message


async def test_several_edits_apply_all_or_nothing(tmp_path: Path, ctx: ToolContext) -> None:
    (tmp_path / "m.py").write_text(SOURCE)
    tool = EditFileTool()
    edits = [
        {"old_text": "return a - b", "new_text": "return a + b"},
        {"old_text": "not there", "new_text": "y"},
    ]
    with pytest.raises(ToolError, match="edit 2 of 2: old_text was not found"):
        await tool.execute({"path": str(tmp_path / "m.py"), "edits": edits}, ctx)
    assert (tmp_path / "m.py").read_text() == SOURCE
    edits[1] = {"old_text": "a * b", "new_text": "b * a"}
    result = await tool.execute({"path": str(tmp_path / "m.py"), "edits": edits}, ctx)
    assert result.details["edits"] == 2
    assert (tmp_path / "m.py").read_text() == SOURCE.replace("a - b", "a + b").replace(
        "a * b", "b * a"
    )


async def test_crlf_endings_utf8_bom_and_latin1_are_kept(tmp_path: Path, ctx: ToolContext) -> None:
    tool = EditFileTool()
    crlf = tmp_path / "crlf.txt"
    crlf.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await tool.execute({"path": str(crlf), "old_text": "two\nthree", "new_text": "2\n3\n3b"}, ctx)
    assert crlf.read_bytes() == b"one\r\n2\r\n3\r\n3b\r\n"

    bom = tmp_path / "bom.txt"
    bom.write_bytes(b"\xef\xbb\xbfna\xc3\xafve\n")
    await tool.execute({"path": str(bom), "old_text": "naïve", "new_text": "naïf"}, ctx)
    assert bom.read_bytes() == b"\xef\xbb\xbfna\xc3\xaff\n"

    latin = tmp_path / "latin.txt"
    latin.write_bytes("café crème\n".encode("latin-1"))
    result = await tool.execute(
        {"path": str(latin), "old_text": "crème", "new_text": "brûlée"}, ctx
    )
    assert latin.read_bytes() == "café brûlée\n".encode("latin-1")
    assert result.details["encoding"] == "latin-1"
    with pytest.raises(ToolError, match=r"latin-1-encoded.*cannot hold"):
        await tool.execute({"path": str(latin), "old_text": "café", "new_text": "カフェ"}, ctx)
    assert latin.read_bytes() == "café brûlée\n".encode("latin-1")


async def test_missing_files_and_bad_arguments(tmp_path: Path, ctx: ToolContext) -> None:
    tool = EditFileTool()
    with pytest.raises(ToolError, match="does not exist; use write_file to create it"):
        await tool.execute({"path": str(tmp_path / "x"), "old_text": "a", "new_text": "b"}, ctx)
    (tmp_path / "f").write_text("abc")
    with pytest.raises(ToolError, match="old_text is empty"):
        await tool.execute({"path": str(tmp_path / "f"), "old_text": "", "new_text": "b"}, ctx)
    with pytest.raises(ToolError, match="the same"):
        await tool.execute({"path": str(tmp_path / "f"), "old_text": "a", "new_text": "a"}, ctx)
    with pytest.raises(ToolError, match="are required"):
        await tool.execute({"path": str(tmp_path / "f")}, ctx)


# -- properties ------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from("ab \n\t€x"), max_size=60)


@settings(max_examples=400)
@given(before=_TEXT, old=_TEXT.filter(bool), after=_TEXT, new=_TEXT)
def test_an_applied_edit_changes_exactly_the_matched_span(
    before: str, old: str, after: str, new: str
) -> None:
    """Invariant: when ``old`` occurs once, the result is the bytes before it, ``new``,
    then the bytes after it; nothing else changes."""
    content = before + old + after
    assume(content.count(old) == 1 and content.find(old, content.find(old) + 1) < 0)
    assume(old != new)
    data = content.encode()
    outcome = apply_edits(data, [Edit(old, new)])
    assert outcome.data == (before + new + after).encode()


@settings(
    max_examples=300,
    deadline=None,  # a failed edit may spend up to HINT_BUDGET_S on its hint
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    content=st.binary(max_size=200) | _TEXT.map(str.encode),
    old=_TEXT,
    new=_TEXT,
)
def test_a_failed_edit_leaves_the_file_byte_for_byte_unchanged(
    tmp_path: Path, content: bytes, old: str, new: str
) -> None:
    """Invariant: whatever the content, an edit that fails writes nothing."""
    target = tmp_path / "f.bin"
    target.write_bytes(content)
    try:
        apply_edits(content, [Edit(old, new)])
    except EditError:

        async def run() -> None:
            with pytest.raises(ToolError):
                await EditFileTool().execute(
                    {"path": str(target), "old_text": old, "new_text": new}, make_ctx()
                )

        anyio.run(run)
        assert target.read_bytes() == content


@settings(max_examples=200)
@given(
    lines=st.lists(st.text(alphabet="ab€ ", max_size=8), min_size=1, max_size=8),
    data=st.data(),
)
def test_crlf_files_stay_crlf_outside_and_inside_the_edit(
    lines: list[str], data: st.DataObject
) -> None:
    """Invariant: a CRLF file edited with LF text is still CRLF throughout."""
    content = "\r\n".join(lines) + "\r\n"
    index = data.draw(st.integers(0, len(lines) - 1))
    old = lines[index] + "\n"
    assume(old.strip() and content.replace("\r\n", "\n").count(old) == 1)
    new = data.draw(st.text(alphabet="xy\n", max_size=8))
    assume(new != old)
    out = apply_edits(content.encode(), [Edit(old, new)]).data
    assert b"\n" not in out.replace(b"\r\n", b"")
