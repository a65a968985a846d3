"""The cassette file format: its lines, written and read.

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
refuse a newer version. Every field's type is checked as its line is read (``_line_types``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, TypeGuard, cast

from pydantic import ValidationError

from yoagent.core.support import utf8_safe_json

from ._codec import CassetteError, JsonObject
from ._line_types import CallFields, brief, check_fields
from ._records import RecordedCall, RecordedTool, tool_from_json

FORMAT = "yoagent-cassette"
FORMAT_VERSION = 1
HEADER: JsonObject = {"kind": "header", "format": FORMAT, "version": FORMAT_VERSION}

_BASE_WINDOW = 16
"""How many of the latest calls a request may name as its base (a run's own previous call
is almost always among them, even with a few concurrent sub-agents)."""


def dump_line(record: JsonObject) -> str:
    """One record as a line of JSONL. Lone surrogates (which UTF-8 cannot hold) become
    ``\\uXXXX`` escapes, which mean the same inside JSON strings (the floor's lossless
    surrogate policy)."""
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return utf8_safe_json(text, lossless=True) + "\n"


def _key(value: Any) -> str:
    """A message's identity for sharing history: its JSON text (dumped by one serializer,
    so equal messages give equal texts; a rare false difference only costs space)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _field_texts(request: JsonObject) -> dict[str, str]:
    """Each field but the messages as canonical JSON text, to tell changed fields apart
    (``true`` is not ``1``; key order does not count)."""
    return {
        name: json.dumps(value, sort_keys=True)
        for name, value in request.items()
        if name != "messages"
    }


def _unchanged(value: Any) -> Any:
    return value


class _Written:
    """A call already written, as a base for later requests."""

    __slots__ = ("keys", "n", "request", "texts")

    def __init__(self, n: int, request: JsonObject, keys: list[str]) -> None:
        self.n = n
        self.request = request  # as it reads back: resolved, secrets replaced
        self.keys = keys  # each message's interned JSON text
        self.texts = _field_texts(request)


class RequestEncoder:
    """Writes each call's request relative to the earlier call it shares most history with."""

    __slots__ = ("_interned", "_recent")

    def __init__(self) -> None:
        self._recent: list[_Written] = []
        self._interned: dict[str, str] = {}

    def remember(self, call: RecordedCall) -> None:
        """Make ``call`` (as read back) available as a base for later requests."""
        self._keep(_Written(call.n, call.request, self._keys(call.request["messages"])))

    def encode(
        self,
        call: RecordedCall,
        scrub: Callable[[Any], Any] = _unchanged,
        scrub_deltas: Callable[[list[JsonObject]], list[JsonObject]] | None = None,
    ) -> tuple[JsonObject, RecordedCall]:
        """The line's record for ``call`` and the call as that line reads back, each part
        passed through ``scrub`` (which keeps secrets out), the deltas through
        ``scrub_deltas`` when given (which scrubs each stream as one text). The request is
        written relative to the earlier call it shares the most messages with, if any;
        only what it adds is scrubbed, the shared part having been scrubbed when it was
        written."""
        request = call.request
        messages: list[Any] = request["messages"]
        keys = self._keys(messages)
        best: tuple[_Written, int] | None = None
        for base in reversed(self._recent):
            if not base.request.keys() <= request.keys():  # it would lend a missing field
                continue
            shared = _shared_prefix(base.keys, keys)
            if shared and (best is None or shared > best[1]):
                best = (base, shared)
        if best is None:
            resolved: JsonObject = scrub(request)
            written = resolved
            self._keep(_Written(call.n, resolved, self._keys(resolved["messages"])))
        else:
            base, keep = best
            added = scrub(messages[keep:])
            written = {"base": base.n, "keep": keep, "messages": added}
            resolved = dict(base.request)
            fields = {name: scrub(value) for name, value in request.items() if name != "messages"}
            for name, text in _field_texts(fields).items():
                if base.texts.get(name) != text:
                    written[name] = resolved[name] = fields[name]
            resolved["messages"] = base.request["messages"][:keep] + added
            self._keep(_Written(call.n, resolved, base.keys[:keep] + self._keys(added)))
        clean_call = RecordedCall(
            n=call.n,
            request=resolved,
            deltas=(scrub_deltas or scrub)(call.deltas),
            times=call.times,
            elapsed=call.elapsed,
            reply=scrub(call.reply),
            error=scrub(call.error),
            cancelled=call.cancelled,
        )
        record = clean_call.to_json()
        record["request"] = written
        return record, clean_call

    def _keep(self, written: _Written) -> None:
        self._recent.append(written)
        del self._recent[:-_BASE_WINDOW]

    def _keys(self, messages: list[Any]) -> list[str]:
        return [self._interned.setdefault(key, key) for key in map(_key, messages)]


def _shared_prefix(a: Sequence[str], b: Sequence[str]) -> int:
    count = 0
    for left, right in zip(a, b, strict=False):
        if left is not right:
            break
        count += 1
    return count


class LineReader:
    """Reads the lines of one cassette, resolving requests against their base calls."""

    def __init__(self) -> None:
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
        if not _whole(n) or n < 0:
            raise CassetteError(f"a call's n must be a whole number, not {n!r}")
        if n in self.calls:
            raise CassetteError(f"call {n} appears twice")
        request = fields.get("request")
        if not isinstance(request, dict):
            raise CassetteError(f"call {n} has no request object")
        outcomes = [name for name in ("reply", "error", "cancelled") if name in fields]
        if len(outcomes) != 1:
            raise CassetteError(f"call {n} must end in one of reply, error or cancelled")
        checked = check_fields(CallFields, fields, f"call {n}")
        if checked.times is not None and len(checked.times) != len(checked.deltas):
            raise CassetteError(f"call {n} needs one time (in seconds) per delta")
        call = RecordedCall(
            n=n,
            request=self._resolve(n, cast(JsonObject, request)),
            deltas=checked.deltas,
            times=checked.times,
            elapsed=checked.elapsed,
            reply=checked.reply,
            error=fields.get("error"),  # as written (checked: ErrorFields)
            cancelled=checked.cancelled is True,
        )
        try:  # check now what replay builds later, so a bad record fails at load
            call.delta_objects()
            call.reply_message()
            call.messages()
        except (ValidationError, ValueError, KeyError, TypeError) as error:
            raise CassetteError(f"call {n} holds an invalid record ({_brief(error)})") from None
        return call

    def _resolve(self, n: int, request: JsonObject) -> JsonObject:
        if "base" not in request:
            if not isinstance(request.get("messages"), list):
                raise CassetteError(f"call {n}'s request has no messages list")
            return request
        base_n, keep = request.get("base"), request.get("keep")
        base = self.calls.get(base_n) if _whole(base_n) else None
        if base is None:  # a base is always a line written earlier
            raise CassetteError(f"call {n} names base {base_n!r}, which no earlier line holds")
        base_messages: list[Any] = base.request["messages"]
        if not _whole(keep) or not 0 <= keep <= len(base_messages):
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
    if not _whole(version) or version < 1:
        raise CassetteError(f"the header's version is {version!r}, not a format version")
    if version > FORMAT_VERSION:
        raise CassetteError(
            f"cassette format version {version} is newer than this yoagent-testing reads "
            f"({FORMAT_VERSION}); upgrade yoagent-testing"
        )


def _whole(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a JSON whole number (``true`` is not ``1``, nor is ``1.0``)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _brief(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return brief(error)
    return f"{type(error).__name__}: {error}"
