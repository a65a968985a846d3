"""docs/approvals.md runs as written: each Python block on its own, in a fresh folder.

The conventions of test_docs_testing.py: a ``print(...)  # expected`` comment must match
the line printed, and a ``text`` block right after a Python block lists lines its output
must hold.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "approvals.md"
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.DOTALL)
EXPECTED = re.compile(r"print\(.*\)\s+# (.+)$")


def _blocks() -> list[tuple[str, str, list[str]]]:
    """Each Python block: an id (its line), its code, the text shown after it."""
    text = PAGE.read_text(encoding="utf-8")
    found = [(m.start(), m.group(1), m.group(2)) for m in BLOCK.finditer(text)]
    out: list[tuple[str, str, list[str]]] = []
    for index, (offset, language, code) in enumerate(found):
        if language != "python":
            continue
        after = found[index + 1] if index + 1 < len(found) else None
        shown = after[2].splitlines() if after and after[1] == "text" else []
        out.append((f"line {text.count(chr(10), 0, offset) + 1}", code, shown))
    return out


BLOCKS = _blocks()


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) == 4


@pytest.mark.parametrize(("name", "code", "shown"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_the_block_runs_and_prints_what_the_page_says(
    name: str, code: str, shown: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = compile(code, f"{PAGE.name} {name}", "exec")
    monkeypatch.chdir(tmp_path)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compiled, {"__name__": "__main__"})
    printed = output.getvalue().splitlines()
    expected = [m.group(1) for line in code.splitlines() if (m := EXPECTED.search(line))]
    assert [line for line in printed if line in expected] == expected, printed
    for line in shown:
        assert line in printed, (line, printed)
