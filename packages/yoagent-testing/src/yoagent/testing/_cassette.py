"""Cassettes: the model calls (and, optionally, the tool results) of a run, as JSONL.

The format, version 1 — one JSON object per line:

- the header, first: ``{"kind": "header", "format": "yoagent-cassette", "version": 1}``;
- ``{"kind": "call", "n", "request", "deltas", ...}`` per model call, numbered from 0 in the
  order the calls began, ending in one of ``"reply"`` (the final message),
  ``"error"`` (``kind``, ``message``, ``status``, ``retry_after`` of the ``ProviderError``)
  or ``"cancelled": true``; ``"times"`` (seconds since the call began, one per delta) and
  ``"elapsed"`` when timing was recorded;
- ``{"kind": "tool", "tool_call_id", "tool_name", "arguments", "content", "details",
  "is_error", "updates"}`` per recorded tool execution.

A line is written when its call ends, so concurrent calls may appear out of ``n`` order. A
request naming a ``base`` call states only the fields that differ from that call's request,
and its ``messages`` follow the first ``keep`` messages of that request: a long run's
history is written once, not once per turn. Readers skip record kinds they do not know and
refuse a newer version.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic import ValidationError

from yoagent.core import AgentMessage, AssistantMessage, ProviderError

from ._codec import (
    CassetteError,
    Delta,
    JsonObject,
    delta_from_json,
    error_from_json,
    message_from_json,
    reply_from_json,
)

FORMAT = "yoagent-cassette"
FORMAT_VERSION = 1
HEADER: JsonObject = {"kind": "header", "format": FORMAT, "version": FORMAT_VERSION}

_BASE_WINDOW = 16
"""How many of the latest calls a request may name as its base (a run's own previous call
is almost always among them, even with a few concurrent sub-agents)."""


@dataclass(slots=True, kw_only=True)
class RecordedCall:
    """One model call: the request as yoagent built it, the deltas it streamed, its end.

    ``request`` is the JSON form (see :func:`~yoagent.testing.request_json`); exactly one
    of ``reply`` (the final message's JSON form), ``error`` and ``cancelled`` says how it
    ended. ``times`` (seconds since the call began, one per delta) and ``elapsed`` are
    ``None`` unless timing was recorded.
    """

    n: int
    request: JsonObject
    deltas: list[JsonObject] = field(default_factory=list[JsonObject])
    times: list[float] | None = None
    elapsed: float | None = None
    reply: JsonObject | None = None
    error: JsonObject | None = None
    cancelled: bool = False

    def delta_objects(self) -> list[Delta]:
        """The streamed deltas, as fresh objects."""
        return [delta_from_json(delta) for delta in self.deltas]

    def reply_message(self) -> AssistantMessage | None:
        """The final message, as a fresh object (``None`` for a failed or cancelled call)."""
        return None if self.reply is None else reply_from_json(self.reply)

    def provider_error(self) -> ProviderError | None:
        """The error the call raised, as a fresh object (``None`` unless it failed)."""
        return None if self.error is None else error_from_json(self.error)

    def messages(self) -> list[AgentMessage]:
        """The request's messages, as fresh objects."""
        return [message_from_json(message) for message in self.request["messages"]]

    @property
    def succeeded(self) -> bool:
        """True when the call returned a final message (it is a turn of its run)."""
        return self.reply is not None

    def to_json(self) -> JsonObject:
        """The record as a line holds it, its request written out in full."""
        record: JsonObject = {"kind": "call", "n": self.n, "request": self.request}
        record["deltas"] = self.deltas
        if self.times is not None:
            record["times"] = self.times
        if self.elapsed is not None:
            record["elapsed"] = self.elapsed
        if self.reply is not None:
            record["reply"] = self.reply
        elif self.error is not None:
            record["error"] = self.error
        else:
            record["cancelled"] = True
        return record


@dataclass(slots=True, kw_only=True)
class RecordedTool:
    """One tool execution: the call, the result the tool gave, and its progress reports.

    ``content``/``details`` are the tool's output in JSON form; ``is_error`` means the tool
    failed (raised) with ``content`` as its message. ``updates`` are its partial outputs
    (``{"kind": "update", "content", "details"}``) and progress notes (``{"kind":
    "progress", "text"}``), in order.
    """

    tool_call_id: str
    tool_name: str
    arguments: JsonObject
    content: list[JsonObject]
    details: Any = None
    is_error: bool = False
    updates: list[JsonObject] = field(default_factory=list[JsonObject])

    def to_json(self) -> JsonObject:
        """The record as a line holds it."""
        return {
            "kind": "tool",
            "tool_call_id": self.tool_call_id,
            "tool_name": self.tool_name,
            "arguments": self.arguments,
            "content": self.content,
            "details": self.details,
            "is_error": self.is_error,
            "updates": self.updates,
        }


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
        reader = _Reader(source)
        for position, (number, line) in enumerate(numbered):
            last = position == len(numbered) - 1
            try:
                reader.read(line, first=position == 0)
            except CassetteError as error:
                if last and cut_off and position > 0:
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


# -- lines ---------------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")


def dump_line(record: JsonObject) -> str:
    """One record as a line of JSONL. Lone surrogates (which UTF-8 cannot hold) become
    ``\\uXXXX`` escapes, which mean the same inside JSON strings."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", text) + "\n"


def _key(value: Any) -> str:
    """A message's identity for sharing history: its JSON text (dumped by one serializer,
    so equal messages give equal texts; a rare false difference only costs space)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _same_json(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _unchanged(value: Any) -> Any:
    return value


class RequestEncoder:
    """Writes each call's request relative to the earlier call it shares most history with."""

    __slots__ = ("_interned", "_recent")

    def __init__(self) -> None:
        self._recent: list[tuple[int, JsonObject, list[str]]] = []
        self._interned: dict[str, str] = {}

    def remember(self, call: RecordedCall) -> None:
        """Make ``call`` (as read back) available as a base for later requests."""
        self._keep(call.n, call.request, [self._intern(m) for m in call.request["messages"]])

    def encode(
        self, call: RecordedCall, scrub: Callable[[Any], Any] = _unchanged
    ) -> tuple[JsonObject, RecordedCall]:
        """The line's record for ``call`` and the call as that line reads back, each part
        passed through ``scrub`` (which keeps secrets out). The request is written
        relative to the earlier call it shares the most messages with, if any; only what
        it adds is scrubbed, the shared part having been scrubbed when it was written."""
        request = call.request
        messages: list[Any] = request["messages"]
        keys = [self._intern(message) for message in messages]
        best: tuple[int, JsonObject, list[str], int] | None = None
        for n, base, base_keys in reversed(self._recent):
            shared = _shared_prefix(base_keys, keys)
            if shared and (best is None or shared > best[3]):
                best = (n, base, base_keys, shared)
        if best is None:
            resolved: JsonObject = scrub(request)
            written = resolved
            stored_keys = [self._intern(message) for message in resolved["messages"]]
        else:
            n, base, base_keys, keep = best
            added = scrub(messages[keep:])
            written = {"base": n, "keep": keep, "messages": added}
            resolved = dict(base)
            for name, value in request.items():
                if name != "messages":
                    clean = scrub(value)
                    if name not in base or not _same_json(base[name], clean):
                        written[name] = resolved[name] = clean
            resolved["messages"] = base["messages"][:keep] + added
            stored_keys = base_keys[:keep] + [self._intern(message) for message in added]
        self._keep(call.n, resolved, stored_keys)
        clean_call = RecordedCall(
            n=call.n,
            request=resolved,
            deltas=scrub(call.deltas),
            times=call.times,
            elapsed=call.elapsed,
            reply=scrub(call.reply),
            error=scrub(call.error),
            cancelled=call.cancelled,
        )
        record = clean_call.to_json()
        record["request"] = written
        return record, clean_call

    def _keep(self, n: int, request: JsonObject, keys: list[str]) -> None:
        self._recent.append((n, request, keys))
        del self._recent[:-_BASE_WINDOW]

    def _intern(self, message: Any) -> str:
        key = _key(message)
        return self._interned.setdefault(key, key)


def _shared_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left is not right:
            break
        count += 1
    return count


class _Reader:
    """Reads the lines of one cassette, resolving requests against their base calls."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.calls: dict[int, RecordedCall] = {}
        self.tools: list[RecordedTool] = []
        self.warnings: list[str] = []

    def read(self, line: str, *, first: bool) -> None:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError) as error:
            raise CassetteError(f"not JSON ({error})") from None
        if not isinstance(record, dict):
            raise CassetteError("a record must be a JSON object")
        fields = cast(JsonObject, record)
        kind = fields.get("kind")
        if first:
            _check_header(fields)
        elif kind == "call":
            call = self._call(fields)
            self.calls[call.n] = call
        elif kind == "tool":
            self.tools.append(tool_from_json(fields))
        elif kind == "header":
            raise CassetteError("a second header")
        # Other kinds come from a later minor addition to the format: skipped.

    def _call(self, fields: JsonObject) -> RecordedCall:
        n = fields.get("n")
        if not isinstance(n, int) or isinstance(n, bool) or n < 0:
            raise CassetteError(f"a call's n must be a whole number, not {n!r}")
        if n in self.calls:
            raise CassetteError(f"call {n} appears twice")
        request = fields.get("request")
        if not isinstance(request, dict):
            raise CassetteError(f"call {n} has no request object")
        outcomes = [name for name in ("reply", "error", "cancelled") if name in fields]
        if len(outcomes) != 1:
            raise CassetteError(f"call {n} must end in one of reply, error or cancelled")
        call = RecordedCall(
            n=n,
            request=self._resolve(n, cast(JsonObject, request)),
            deltas=_list_of_objects(fields.get("deltas", []), f"call {n}'s deltas"),
            times=fields.get("times"),
            elapsed=fields.get("elapsed"),
            reply=fields.get("reply"),
            error=fields.get("error"),
            cancelled=fields.get("cancelled") is True,
        )
        try:  # check now what replay builds later, so a bad record fails at load
            call.delta_objects()
            call.reply_message()
            call.provider_error()
            call.messages()
        except (ValidationError, ValueError, KeyError, TypeError) as error:
            raise CassetteError(f"call {n} holds an invalid record ({_brief(error)})") from None
        times: Any = call.times
        if times is not None and (
            not isinstance(times, list)
            or len(cast(list[Any], times)) != len(call.deltas)
            or not all(_is_number(t) for t in cast(list[Any], times))
        ):
            raise CassetteError(f"call {n} needs one time (in seconds) per delta")
        if call.elapsed is not None and not _is_number(call.elapsed):
            raise CassetteError(f"call {n}'s elapsed time must be a number of seconds")
        return call

    def _resolve(self, n: int, request: JsonObject) -> JsonObject:
        if "base" not in request:
            if not isinstance(request.get("messages"), list):
                raise CassetteError(f"call {n}'s request has no messages list")
            return request
        base_n, keep = request.get("base"), request.get("keep")
        base = self.calls.get(base_n) if isinstance(base_n, int) else None
        if base is None:  # a base is always a line written earlier
            raise CassetteError(f"call {n} names base {base_n!r}, which no earlier line holds")
        base_messages: list[Any] = base.request["messages"]
        if not isinstance(keep, int) or not 0 <= keep <= len(base_messages):
            raise CassetteError(
                f"call {n} keeps {keep!r} of the {len(base_messages)} base messages"
            )
        more = request.get("messages", [])
        if not isinstance(more, list):
            raise CassetteError(f"call {n}'s request has no messages list")
        resolved = {**base.request, **request}
        del resolved["base"], resolved["keep"]
        resolved["messages"] = base_messages[:keep] + cast(list[Any], more)
        return resolved


def _check_header(fields: JsonObject) -> None:
    if fields.get("kind") != "header" or fields.get("format") != FORMAT:
        raise CassetteError(f"not a cassette: the first line is not a {FORMAT} header")
    version = fields.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise CassetteError(f"the header's version is {version!r}, not a format version")
    if version > FORMAT_VERSION:
        raise CassetteError(
            f"cassette format version {version} is newer than this yoagent-testing reads "
            f"({FORMAT_VERSION}); upgrade yoagent-testing"
        )


def tool_from_json(fields: JsonObject) -> RecordedTool:
    """The tool record a ``{"kind": "tool", ...}`` line describes (:class:`CassetteError`
    when it is malformed)."""
    call_id, name = fields.get("tool_call_id"), fields.get("tool_name")
    if not isinstance(call_id, str) or not isinstance(name, str):
        raise CassetteError("a tool record needs a tool_call_id and a tool_name")
    arguments = fields.get("arguments", {})
    if not isinstance(arguments, dict):
        raise CassetteError(f"tool record {call_id!r}: arguments must be an object")
    return RecordedTool(
        tool_call_id=call_id,
        tool_name=name,
        arguments=cast(JsonObject, arguments),
        content=_list_of_objects(fields.get("content", []), f"tool record {call_id!r}'s content"),
        details=fields.get("details"),
        is_error=fields.get("is_error") is True,
        updates=_list_of_objects(fields.get("updates", []), f"tool record {call_id!r}'s updates"),
    )


def _list_of_objects(value: Any, what: str) -> list[JsonObject]:
    if not isinstance(value, list) or not all(
        isinstance(item, dict) for item in cast(list[Any], value)
    ):
        raise CassetteError(f"{what} must be a list of objects")
    return cast(list[JsonObject], value)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _brief(error: Exception) -> str:
    if isinstance(error, ValidationError):
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        return f"{where}: {first['msg']}"
    return f"{type(error).__name__}: {error}"
