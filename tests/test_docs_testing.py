"""docs/testing.md runs as written: each Python block on its own, in a fresh folder.

A block's ``print(...)  # expected`` comments must match what it prints, and a ``text``
block right after a Python block lists lines its output must hold. A block marked
``<!-- doc-test: skip (reason) -->`` (the pytest module, which records against a real
model) is compiled only; the same flow runs against a loopback server in
test_record_replay_protocols.py.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[1] / "docs" / "testing.md"
BLOCK = re.compile(r"(<!-- doc-test: skip \([^)]+\) -->\n)?```(\w+)\n(.*?)```", re.DOTALL)
EXPECTED = re.compile(r"print\(.*\)\s+# (.+)$")


def _blocks() -> list[tuple[str, str, bool, list[str]]]:
    """Each Python block: an id, its code, whether it is skipped, the text shown after it."""
    text = PAGE.read_text(encoding="utf-8")
    found = [(m.start(), bool(m.group(1)), m.group(2), m.group(3)) for m in BLOCK.finditer(text)]
    out: list[tuple[str, str, bool, list[str]]] = []
    for index, (offset, skip, language, code) in enumerate(found):
        if language != "python":
            continue
        after = found[index + 1] if index + 1 < len(found) else None
        shown = after[3].splitlines() if after and after[2] == "text" else []
        out.append((f"line {text.count(chr(10), 0, offset) + 1}", code, skip, shown))
    return out


BLOCKS = _blocks()


def test_the_page_has_its_examples() -> None:
    assert len(BLOCKS) >= 6
    assert sum(skip for _, _, skip, _ in BLOCKS) == 1


@pytest.mark.parametrize(("name", "code", "skip", "shown"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_the_block_runs_and_prints_what_the_page_says(
    name: str,
    code: str,
    skip: bool,
    shown: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    compiled = compile(code, f"{PAGE.name} {name}", "exec")
    if skip:
        pytest.skip("a test module recording against a real model: compiled only")
    monkeypatch.chdir(tmp_path)
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        exec(compiled, {"__name__": "__main__"})
    printed = output.getvalue().splitlines()
    expected = [m.group(1) for line in code.splitlines() if (m := EXPECTED.search(line))]
    assert [line for line in printed if line in expected] == expected, printed
    for line in shown:
        assert line in printed, (line, printed)
