"""The sandbox under a racing symlink swap: list_files and search (both engines) never escape.

A thread swaps a folder inside the allowed root for a symlink to a folder outside it
and back, as fast as it can, while the tools list and search the root. Any answer
holding the outside file's name or content is an escape. The number of calls is
``YOAGENT_RACE_CALLS`` (default 600; the figure in the package README comes from a
10,000-call run), bounded by ``YOAGENT_RACE_SECONDS`` (default 90).
"""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

import pytest
from tools_helpers import needs_rg

from yoagent.core import ToolContext, ToolError
from yoagent.tools import ListFilesTool, PathSandbox, SearchTool

CALLS = int(os.environ.get("YOAGENT_RACE_CALLS", "600"))
SECONDS = float(os.environ.get("YOAGENT_RACE_SECONDS", "90"))
SECRET = "TOPSECRET-7f3a"


class _Swapper(threading.Thread):
    """Swaps ``root/box`` between a real folder and a symlink to ``outside`` until stopped."""

    def __init__(self, root: Path, outside: Path) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.outside = outside
        self.halt = threading.Event()
        self.swaps = 0

    def run(self) -> None:
        box, parked = self.root / "box", self.root / "box.parked"
        while not self.halt.is_set():
            os.rename(box, parked)
            os.symlink(self.outside, box)
            time.sleep(0)  # let a walker meet the symlink
            os.unlink(box)
            os.rename(parked, box)
            time.sleep(0)  # and the real folder, so a check can pass just before a swap
            self.swaps += 1


def _escaped(text: str) -> bool:
    return SECRET in text or "leak-name" in text


@pytest.mark.parametrize("kind", ["list_files", "python", pytest.param("ripgrep", marks=needs_rg)])
async def test_a_symlink_swapped_in_a_loop_never_leaks_outside_files(
    tmp_path: Path, ctx: ToolContext, kind: str
) -> None:
    root = tmp_path / "root"
    (root / "box" / "deeper").mkdir(parents=True)
    (root / "box" / "inside.txt").write_text("harmless line\n")
    (root / "box" / "deeper" / "more.txt").write_text("harmless too\n")
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    (outside / "leak-name.txt").write_text(f"{SECRET}\n")
    (outside / "deeper" / "leak-name.txt").write_text(f"{SECRET} harmless\n")
    sandbox = PathSandbox([root])
    if kind == "list_files":
        tool = ListFilesTool(sandbox)
        argument_sets = [{"depth": 5}, {"path": "box", "depth": 5}]
    else:
        tool = SearchTool(sandbox, engine="python" if kind == "python" else "ripgrep")
        argument_sets = [
            {"pattern": f"harmless|{SECRET}"},
            {"pattern": f"harmless|{SECRET}", "path": "box"},
        ]
    swapper = _Swapper(root, outside)
    swapper.start()
    calls = escapes = refused = 0
    deadline = time.monotonic() + SECONDS
    try:
        for arguments in itertools.cycle(argument_sets):
            if calls >= CALLS or time.monotonic() > deadline:
                break
            calls += 1
            try:
                result = await tool.execute(dict(arguments), ctx)
            except ToolError as error:
                refused += 1
                escapes += _escaped(str(error))
                continue
            escapes += _escaped(result.text)
    finally:
        swapper.halt.set()
        swapper.join()
    assert swapper.swaps > 0
    assert calls >= min(CALLS, 50), f"only {calls} calls in {SECONDS} s"
    assert escapes == 0, f"{escapes} escapes in {calls} calls ({refused} refused)"
    print(f"\n{kind}: {calls} calls, {swapper.swaps} swaps, {refused} refused, 0 escapes")
