"""Cassette: the model calls (and, optionally, the tool results) of a run, as JSONL
(the format: :mod:`._lines`)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from yoagent.core import AgentMessage

from ._codec import CassetteError
from ._lines import HEADER, LineReader, RequestEncoder, dump_line
from ._records import RecordedCall, RecordedTool


class Cassette:
    """The recorded model calls and tool executions of one run (or one test)."""

    __slots__ = ("calls", "load_warnings", "path", "tools")

    def __init__(
        self,
        calls: Iterable[RecordedCall] = (),
        tools: Iterable[RecordedTool] = (),
        *,
        path: Path | None = None,
    ) -> None:
        self.calls: list[RecordedCall] = sorted(calls, key=lambda call: call.n)
        """The model calls, in the order they began."""
        self.tools: list[RecordedTool] = list(tools)
        """The tool executions, in the order they ended."""
        self.path = path
        """The file it was loaded from or written to, if any."""
        self.load_warnings: list[str] = []
        """What loading skipped over (a cut-off last line)."""

    def __repr__(self) -> str:
        where = f" {str(self.path)!r}" if self.path else ""
        return f"<Cassette{where} calls={len(self.calls)} tool_results={len(self.tools)}>"

    # -- reading -----------------------------------------------------------------------

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        """Read a cassette file. A cut-off last line (a write interrupted by a crash) is
        skipped and noted in :attr:`load_warnings`; any other bad line raises
        :class:`CassetteError` naming the line."""
        target = Path(path)
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CassetteError(f"no cassette at {target}") from None
        except (OSError, UnicodeDecodeError) as error:
            raise CassetteError(f"{target}: cannot read the cassette ({error})") from None
        cassette = cls.from_jsonl(text, source=str(target))
        cassette.path = target
        return cassette

    @classmethod
    def from_jsonl(cls, text: str, *, source: str = "<cassette>") -> Cassette:
        """Read a cassette from its JSONL text (see :meth:`load`)."""
        lines = text.split("\n")
        numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
        cut_off = not text.endswith("\n")  # a crash mid-write leaves no final newline
        reader = LineReader()
        for position, (number, line) in enumerate(numbered):
            last = position == len(numbered) - 1
            try:
                reader.read(line, first=position == 0)
            except CassetteError as error:
                if last and cut_off and position > 0 and not _is_json(line):
                    reader.warnings.append(f"line {number}: skipped a cut-off record ({error})")
                    break
                raise CassetteError(f"{source}: line {number}: {error}") from None
        if not numbered:
            raise CassetteError(f"{source}: empty file, not a cassette")
        cassette = cls(reader.calls.values(), reader.tools)
        cassette.load_warnings = reader.warnings
        return cassette

    # -- writing -----------------------------------------------------------------------

    def to_jsonl(self) -> str:
        """The whole cassette as JSONL text (requests sharing history written once)."""
        encoder = RequestEncoder()
        lines = [dump_line(HEADER)]
        lines += [dump_line(encoder.encode(call)[0]) for call in self.calls]
        lines += [dump_line(tool.to_json()) for tool in self.tools]
        return "".join(lines)

    # -- what the run was -----------------------------------------------------------------

    def transcript(self, call: int | None = None) -> list[AgentMessage]:
        """The conversation as of a call that succeeded: its request's messages and its
        reply. ``call`` is the call's ``n`` (default: the last call that succeeded)."""
        chosen = self._succeeded_call(call)
        reply = chosen.reply_message()
        assert reply is not None
        return [*chosen.messages(), reply]

    def calls_through_turn(self, turn: int) -> int:
        """How many calls (from the first) it took to get the first ``turn`` replies:
        failed and cancelled attempts before a reply count toward its turn."""
        if turn < 0:
            raise ValueError(f"turn must be 0 or more, not {turn}")
        if turn == 0:
            return 0
        replies = 0
        for position, call in enumerate(self.calls):
            if call.succeeded:
                replies += 1
                if replies == turn:
                    return position + 1
        raise CassetteError(f"the cassette holds {replies} replies; there is no turn {turn}")

    def _succeeded_call(self, n: int | None) -> RecordedCall:
        succeeded = [call for call in self.calls if call.succeeded]
        if not succeeded:
            raise CassetteError("the cassette holds no call that returned a reply")
        if n is None:
            return succeeded[-1]
        for call in succeeded:
            if call.n == n:
                return call
        raise CassetteError(f"the cassette holds no call {n} that returned a reply")


def _is_json(line: str) -> bool:
    try:
        json.loads(line)
    except (ValueError, RecursionError):
        return False
    return True
