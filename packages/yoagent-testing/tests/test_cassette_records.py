"""Every record of a cassette is checked field by field when it is read: a value of the
wrong type is refused with a CassetteError naming its line, never loaded as something
else (a null reply as a cancelled call, ``"true"`` as a success) or left to fail at
replay (NaN times, a tool result that is not content)."""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

import anyio
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yoagent.core import ModelConfig, ToolContext, ToolError, UserMessage, message_adapter, tool
from yoagent.core.provider import StreamConfig
from yoagent.testing import Cassette, CassetteError, RecordedCall, ReplayProvider, request_json

HEADER = '{"kind":"header","format":"yoagent-cassette","version":1}'
CONFIG = StreamConfig(
    model=ModelConfig.mock(), system_prompt="", messages=[UserMessage.from_text("hi")]
)
REQUEST = request_json(CONFIG)
REPLY = message_adapter.dump_python(
    message_adapter.validate_python(
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    ),
    mode="json",
)
DELTA = {"type": "text_delta", "content_index": 0, "delta": "hello"}


def call_line(**fields: Any) -> dict[str, Any]:
    """A valid call record (a reply, one delta, timed), with ``fields`` changed."""
    record: dict[str, Any] = {
        "kind": "call",
        "n": 0,
        "request": REQUEST,
        "deltas": [DELTA],
        "times": [0.01],
        "elapsed": 0.02,
        "reply": REPLY,
    }
    record.update(fields)
    return record


def tool_line(**fields: Any) -> dict[str, Any]:
    """A valid tool record (a success with one text block), with ``fields`` changed."""
    record: dict[str, Any] = {
        "kind": "tool",
        "tool_call_id": "c1",
        "tool_name": "probe",
        "arguments": {"x": 1},
        "content": [{"type": "text", "text": "fine"}],
        "details": None,
        "is_error": False,
        "updates": [],
    }
    record.update(fields)
    return record


def jsonl(*records: dict[str, Any]) -> str:
    # allow_nan: the point is what a reader does with the NaN and Infinity json.dumps writes.
    return "\n".join([HEADER, *(json.dumps(r, allow_nan=True) for r in records)]) + "\n"


def without(record: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in names}


REFUSED = [
    pytest.param(call_line(times=[math.nan]), "times", id="nan-time"),
    pytest.param(call_line(times=[math.inf]), "times", id="infinite-time"),
    pytest.param(call_line(times=[-0.5]), "times", id="negative-time"),
    pytest.param(call_line(times=["0.01"]), "times", id="text-time"),
    pytest.param(call_line(times=[True]), "times", id="boolean-time"),
    pytest.param(call_line(elapsed=math.nan), "elapsed", id="nan-elapsed"),
    pytest.param(call_line(elapsed=-math.inf), "elapsed", id="infinite-elapsed"),
    pytest.param(call_line(times=None), "times", id="null-times"),
    pytest.param(call_line(reply=None), "reply", id="null-reply"),
    pytest.param(without(call_line(), "reply") | {"error": None}, "error", id="null-error"),
    pytest.param(
        without(call_line(), "reply") | {"cancelled": "no"}, "cancelled", id="cancelled-no"
    ),
    pytest.param(
        without(call_line(), "reply") | {"cancelled": False}, "cancelled", id="cancelled-false"
    ),
    pytest.param(without(call_line(), "reply") | {"cancelled": 1}, "cancelled", id="cancelled-one"),
    pytest.param(call_line(n=True), "n", id="boolean-n"),
    pytest.param(call_line(n=1.0), "n", id="float-n"),
    pytest.param(call_line(deltas={"0": DELTA}), "deltas", id="deltas-object"),
    pytest.param(
        without(call_line(), "reply") | {"error": {"kind": "network", "message": 5}},
        "error.message",
        id="error-message-number",
    ),
    pytest.param(
        without(call_line(), "reply")
        | {"error": {"kind": "network", "message": "down", "status": "500"}},
        "error.status",
        id="error-status-text",
    ),
    pytest.param(
        without(call_line(), "reply")
        | {"error": {"kind": "rate_limited", "message": "slow", "retry_after": math.nan}},
        "error.retry_after",
        id="error-retry-after-nan",
    ),
    pytest.param(
        without(call_line(), "reply") | {"error": {"kind": "sleepy", "message": "x"}},
        "error.kind",
        id="error-unknown-kind",
    ),
    pytest.param(tool_line(is_error="true"), "is_error", id="is-error-text"),
    pytest.param(tool_line(is_error=1), "is_error", id="is-error-number"),
    pytest.param(tool_line(is_error=None), "is_error", id="is-error-null"),
    pytest.param(tool_line(tool_call_id=7), "tool_call_id", id="call-id-number"),
    pytest.param(
        tool_line(content=[{"type": "text", "text": 5}]), "content", id="content-text-number"
    ),
    pytest.param(tool_line(content=[{"type": "video"}]), "content", id="content-unknown-block"),
    pytest.param(
        tool_line(updates=[{"kind": "update", "content": "x"}]), "updates", id="update-content"
    ),
    pytest.param(
        tool_line(updates=[{"kind": "progress", "text": None}]), "updates", id="progress-null"
    ),
    pytest.param(tool_line(updates=[{"kind": 5}]), "updates", id="update-kind-number"),
]


@pytest.mark.parametrize(("record", "field"), REFUSED)
def test_a_record_of_the_wrong_type_is_refused_naming_its_line_and_field(
    record: dict[str, Any], field: str
) -> None:
    with pytest.raises(CassetteError, match=r"^run\.jsonl: line 2: ") as refused:
        Cassette.from_jsonl(jsonl(record), source="run.jsonl")
    assert field in str(refused.value)


@pytest.mark.parametrize(
    ("shared", "said"),
    [
        ({"base": True, "keep": 0}, "call 2 names base True"),
        ({"base": 1, "keep": True}, "call 2 keeps True of the 1 base messages"),
        ({"base": 1.0, "keep": 0}, "call 2 names base 1.0"),
    ],
)
def test_a_base_or_keep_that_is_not_a_whole_number_is_refused(
    shared: dict[str, Any], said: str
) -> None:
    """``true`` is not ``1``: read as one, it named call 1 as the base, or kept one message."""
    later = call_line(n=2, request={**shared, "messages": []})
    with pytest.raises(CassetteError, match=r"^run\.jsonl: line 3: ") as refused:
        Cassette.from_jsonl(jsonl(call_line(n=1), later), source="run.jsonl")
    assert said in str(refused.value)


def test_valid_records_still_load_with_their_values() -> None:
    errored = without(call_line(n=1), "reply") | {
        "error": {"kind": "rate_limited", "message": "slow", "status": 429, "retry_after": "inf"}
    }
    cancelled = without(call_line(n=2, times=[0], elapsed=1), "reply") | {"cancelled": True}
    cassette = Cassette.from_jsonl(jsonl(call_line(), errored, cancelled, tool_line()))
    first, second, third = cassette.calls
    assert first.times == [0.01] and first.elapsed == 0.02 and first.reply == REPLY
    assert second.error is not None and second.provider_error() is not None
    assert math.isinf(second.provider_error().retry_after or 0)  # type: ignore[union-attr]
    assert third.cancelled and third.times == [0.0] and third.elapsed == 1.0
    assert cassette.tools[0].is_error is False


def test_an_update_kind_from_a_later_format_is_kept_and_skipped() -> None:
    """Like a record kind it does not know, a reader skips an update kind it does not know."""
    later = {"kind": "later", "anything": [1]}
    cassette = Cassette.from_jsonl(jsonl(tool_line(updates=[later])))
    assert cassette.tools[0].updates == [later]


async def test_a_recorded_tool_failure_replays_as_a_failure() -> None:
    """``"is_error": true`` is the one way to say a recorded call failed, and it replays so."""

    @tool
    async def probe(x: int, ctx: ToolContext) -> str:
        """Never runs in a replay."""
        raise AssertionError("the recording answers")

    cassette = Cassette.from_jsonl(
        jsonl(tool_line(is_error=True, content=[{"type": "text", "text": "boom"}]))
    )
    (replaying,) = ReplayProvider(cassette).replay_tools([probe])
    with pytest.raises(ToolError, match="boom"):
        await replaying.execute({"x": 1}, ToolContext(tool_call_id="c1", tool_name="probe"))


# --- properties ------------------------------------------------------------------------------

NEAR_MISSES = [
    "true",
    "no",
    1,
    0.5,
    [math.nan],
    [0.01, 0.02],
    [{"type": "text", "text": 5}],
    [{"type": "text", "text": "fine"}],
    [{"kind": "update", "content": [{"type": "text", "text": "x"}], "details": None}],
    [{"kind": "progress", "text": 3}],
    [DELTA],
    REPLY,
    {"kind": "network", "message": "down"},
    {"kind": "network", "message": "down", "retry_after": -1},
]
"""Values one field away from a valid record (plain random JSON rarely builds these)."""
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**53), max_value=2**53)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
) | st.sampled_from(NEAR_MISSES)
CALL_FIELDS = ["n", "deltas", "times", "elapsed", "reply", "error", "cancelled"]
TOOL_FIELDS = [
    "tool_call_id",
    "tool_name",
    "arguments",
    "content",
    "details",
    "is_error",
    "updates",
]


def read_checked(record: dict[str, Any]) -> Cassette | None:
    """The cassette of one ``record``, its types checked (``_check_loaded``); ``None`` when
    reading refused it, as it must, with a CassetteError naming the record's line."""
    try:
        cassette = Cassette.from_jsonl(jsonl(record), source="c.jsonl")
    except CassetteError as error:
        refusal = str(error)
    else:
        _check_loaded(cassette)
        return cassette
    assert refusal.startswith("c.jsonl: line 2: ")
    return None


def same(a: Any, b: Any) -> bool:
    """JSON values equal, a number to a number of the same value, NaN to NaN."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # type: ignore[index]
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a):
        return math.isnan(b)
    if a != b:
        return False
    return type(a) is type(b) or {type(a), type(b)} == {int, float}


def _is_seconds(value: object) -> bool:
    return type(value) is float and math.isfinite(value) and value >= 0


def _check_loaded(cassette: Cassette) -> None:
    """What a loaded record holds has the types replay relies on."""
    for call in cassette.calls:
        assert isinstance(call, RecordedCall)
        assert type(call.n) is int and call.n >= 0
        outcomes = [call.reply is not None, call.error is not None, call.cancelled]
        assert outcomes.count(True) == 1
        assert call.times is None or (
            len(call.times) == len(call.deltas) and all(map(_is_seconds, call.times))
        )
        assert call.elapsed is None or _is_seconds(call.elapsed)
        call.delta_objects()
        call.reply_message()
        error = call.provider_error()
        assert error is None or error.retry_after is None or error.retry_after >= 0
    for recorded in cassette.tools:
        assert type(recorded.is_error) is bool
        assert isinstance(recorded.tool_call_id, str) and isinstance(recorded.tool_name, str)


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(CALL_FIELDS), value=JSON_VALUES, drop=st.booleans())
def test_any_value_in_a_call_field_loads_well_typed_or_is_refused_naming_the_line(
    field: str, value: Any, drop: bool
) -> None:
    """For any JSON value in any field of a call record (or the field left out), reading
    the cassette either refuses it with a CassetteError naming line 2, or yields a record
    whose every field has the type replay relies on."""
    record = without(call_line(), field) if drop else call_line(**{field: value})
    cassette = read_checked(record)
    if cassette is None:
        return
    (loaded,) = cassette.calls
    assert same(loaded.to_json(), {"deltas": [], **record})  # read as written


@settings(max_examples=300, deadline=None)
@given(field=st.sampled_from(TOOL_FIELDS), value=JSON_VALUES, drop=st.booleans())
def test_any_value_in_a_tool_field_loads_well_typed_or_is_refused_naming_the_line(
    field: str, value: Any, drop: bool
) -> None:
    """The same for a tool record: refused naming line 2, or well typed, its content and
    updates readable as replay reads them."""
    record = without(tool_line(), field) if drop else tool_line(**{field: value})
    cassette = read_checked(record)
    if cassette is None:
        return
    (loaded,) = cassette.tools
    defaults = {"arguments": {}, "content": [], "details": None, "is_error": False, "updates": []}
    assert same(loaded.to_json(), {**defaults, **record})  # read as written

    @tool
    async def probe(x: int) -> str:
        """Never runs in a replay."""
        raise AssertionError("the recording answers")

    (replaying,) = ReplayProvider(cassette).replay_tools([probe])
    ctx = ToolContext(tool_call_id=loaded.tool_call_id, tool_name=loaded.tool_name)

    async def replay() -> None:
        # A recorded failure, or arguments recorded for another call: both say so.
        with contextlib.suppress(ToolError):
            await replaying.execute(loaded.arguments, ctx)

    anyio.run(replay)
