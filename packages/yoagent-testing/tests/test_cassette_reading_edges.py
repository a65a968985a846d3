"""Reading and writing cassette lines at their edges: each refusal's exact words, shared
history written relative to the right call, a cut-off line told from a bad one (from the
mutation triage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from yoagent.core import ModelConfig, UserMessage, message_adapter
from yoagent.core.provider import StreamConfig
from yoagent.testing import (
    Cassette,
    CassetteError,
    CassetteWriter,
    RecordedCall,
    RecordedTool,
    request_json,
)
from yoagent.testing._lines import RequestEncoder, dump_line

HEADER = '{"kind":"header","format":"yoagent-cassette","version":1}'
REPLY = message_adapter.dump_python(
    message_adapter.validate_python(
        {"role": "assistant", "content": [{"type": "text", "text": "hello"}]}
    ),
    mode="json",
)


MESSAGES = {text: UserMessage.from_text(text) for text in "ab"}


def _request(*texts: str, system_prompt: str = "") -> dict[str, Any]:
    """A request of the messages ``texts`` (the same message objects for the same text)."""
    return request_json(
        StreamConfig(
            model=ModelConfig.mock(),
            system_prompt=system_prompt,
            messages=[MESSAGES[text] for text in texts],
        )
    )


def _call(n: int, *texts: str, **fields: Any) -> dict[str, Any]:
    record: dict[str, Any] = {"kind": "call", "n": n, "request": _request(*texts), "reply": REPLY}
    record.update(fields)
    return record


def _jsonl(*records: dict[str, Any]) -> str:
    return "\n".join([HEADER, *(json.dumps(r) for r in records)]) + "\n"


def _refused(text: str) -> str:
    with pytest.raises(CassetteError) as raised:
        Cassette.from_jsonl(text)
    return str(raised.value)


def test_each_refusal_names_the_source_line_and_problem() -> None:
    assert _refused(HEADER + "\n[1]\n") == "<cassette>: line 2: a record must be a JSON object"
    assert _refused(HEADER + "\n" + HEADER + "\n") == "<cassette>: line 2: a second header"
    twice = _jsonl(_call(0, "a"), _call(0, "a"))
    assert _refused(twice) == "<cassette>: line 3: call 0 appears twice"
    assert _refused(_jsonl(_call(0, request=5))) == (
        "<cassette>: line 2: call 0 has no request object"
    )
    assert _refused(_jsonl(_call(0, "a", elapsed="soon"))).startswith(
        "<cassette>: line 2: call 0: elapsed: "
    )
    no_messages = _call(0, "a")
    del no_messages["request"]["messages"]
    assert _refused(_jsonl(no_messages)) == (
        "<cassette>: line 2: call 0's request has no messages list"
    )
    listless = _call(1, request={"base": 0, "keep": 1, "messages": "more"})
    assert _refused(_jsonl(_call(0, "a"), listless)) == (
        "<cassette>: line 3: call 1's request has no messages list"
    )


def test_a_reply_that_is_not_an_assistant_message_is_refused_in_words() -> None:
    user = message_adapter.dump_python(UserMessage.from_text("hi"), mode="json")
    assert _refused(_jsonl(_call(0, "a", reply=user))) == (
        "<cassette>: line 2: a recorded reply is a user message, not an assistant one"
    )


def test_an_invalid_record_is_named_with_its_first_wrong_field() -> None:
    message = _refused(_jsonl(_call(0, "a", deltas=[{"type": "text_delta"}])))
    assert message.startswith("<cassette>: line 2: call 0 holds an invalid record (")
    assert "NoneType" not in message


def test_the_true_and_null_rules_say_what_to_do_instead() -> None:
    cancelled = _call(0, "a", cancelled=False)
    del cancelled["reply"]
    assert _refused(_jsonl(cancelled)) == (
        "<cassette>: line 2: call 0: cancelled: Value error, must be true (leave the field "
        "out instead)"
    )
    assert _refused(_jsonl(_call(0, "a", elapsed=None))) == (
        "<cassette>: line 2: call 0: elapsed: Value error, must not be null (leave the field "
        "out instead)"
    )


def test_a_tool_record_refusal_names_the_record() -> None:
    tool = {"kind": "tool", "tool_call_id": "c1", "tool_name": "t", "is_error": "yes"}
    assert _refused(_jsonl(tool)).startswith("<cassette>: line 2: tool record 'c1': is_error: ")
    nameless = {"kind": "tool", "tool_call_id": "c1"}
    assert _refused(_jsonl(nameless)) == (
        "<cassette>: line 2: a tool record needs a tool_call_id and a tool_name (text)"
    )


def test_tool_updates_of_a_later_kind_are_kept_and_non_objects_refused() -> None:
    later = {"kind": "tool", "tool_call_id": "c1", "tool_name": "t", "updates": [{"kind": "x"}]}
    assert Cassette.from_jsonl(_jsonl(later)).tools[0].updates == [{"kind": "x"}]
    odd = {"kind": "tool", "tool_call_id": "c1", "tool_name": "t", "updates": [5]}
    assert _refused(_jsonl(odd)).startswith("<cassette>: line 2: tool record 'c1': updates.0")


def test_a_header_of_another_format_is_not_a_cassette() -> None:
    other = '{"kind":"header","format":"other","version":1}\n'
    assert _refused(other) == (
        "<cassette>: line 1: not a cassette: the first line is not a yoagent-cassette header"
    )


def test_a_bad_last_line_ending_in_a_newline_is_not_taken_for_a_cut_off_one() -> None:
    assert _refused(HEADER + '\n{"kind": "ca\n').startswith("<cassette>: line 2: not JSON")


def test_a_cut_off_second_line_is_skipped_and_a_cut_off_header_is_refused() -> None:
    cassette = Cassette.from_jsonl(HEADER + '\n{"kind": "ca')
    assert cassette.calls == []
    assert len(cassette.load_warnings) == 1
    assert cassette.load_warnings[0].startswith("line 2: skipped a cut-off record")
    assert _refused('{"kind": "hea').startswith("<cassette>: line 1: not JSON")


def test_a_base_may_lend_no_messages_and_a_request_may_add_none() -> None:
    first = _call(0, "a", "b")
    second = _call(1, request={"base": 0, "keep": 0, "system_prompt": "new"})
    cassette = Cassette.from_jsonl(_jsonl(first, second))
    request = cassette.calls[1].request
    assert request["messages"] == []
    assert request["system_prompt"] == "new"
    third = _call(2, request={"base": 0, "keep": 2})
    assert Cassette.from_jsonl(_jsonl(first, third)).calls[1].request == first["request"]


def test_a_file_that_cannot_be_read_is_named(tmp_path: Path) -> None:
    path = tmp_path / "latin.jsonl"
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(CassetteError) as raised:
        Cassette.load(path)
    assert str(raised.value).startswith(f"{path}: cannot read the cassette (")


def test_unicode_is_written_as_itself(tmp_path: Path) -> None:
    assert dump_line({"text": "café ☕"}) == '{"text":"café ☕"}\n'
    path = tmp_path / "run.jsonl"
    writer = CassetteWriter(path, scrub_environment=False)
    writer.write_tool(
        RecordedTool(
            tool_call_id="c",
            tool_name="t",
            arguments={},
            content=[{"type": "text", "text": "café ☕"}],
        )
    )
    assert "café ☕" in path.read_text(encoding="utf-8")
    assert Cassette.load(path).tools[0].content[0]["text"] == "café ☕"


def test_a_cassette_made_in_memory() -> None:
    empty = Cassette()
    assert (empty.path, empty.load_warnings) == (None, [])
    assert repr(empty) == "<Cassette calls=0 tool_results=0>"
    tool = RecordedTool(tool_call_id="c", tool_name="t", arguments={}, content=[])
    cassette = Cassette([], [tool], path=Path("x.jsonl"))
    assert cassette.path == Path("x.jsonl")
    assert repr(cassette) == "<Cassette 'x.jsonl' calls=0 tool_results=1>"
    assert Cassette.from_jsonl(cassette.to_jsonl()).tools == [tool]


def _answered(n: int, ok: bool) -> RecordedCall:
    outcome: dict[str, Any] = {"reply": REPLY} if ok else {"cancelled": True}
    return RecordedCall(n=n, request=_request("a"), **outcome)


def test_calls_through_each_turn_count_the_attempts_before_it() -> None:
    cassette = Cassette([_answered(0, False), _answered(1, True), _answered(2, True)])
    assert cassette.calls_through_turn(0) == 0
    assert cassette.calls_through_turn(1) == 2
    assert cassette.calls_through_turn(2) == 3
    with pytest.raises(ValueError, match=r"^turn must be 0 or more, not -1$"):
        cassette.calls_through_turn(-1)


def test_a_cassette_with_no_reply_has_no_transcript() -> None:
    with pytest.raises(CassetteError, match=r"^the cassette holds no call that returned a reply$"):
        Cassette([_answered(0, False)]).transcript()


def _encoded(encoder: RequestEncoder, n: int, request: dict[str, Any]) -> dict[str, Any]:
    record, _ = encoder.encode(RecordedCall(n=n, request=request, reply=REPLY))
    return record["request"]


def _shaped(messages: list[str], **fields: Any) -> dict[str, Any]:
    return {"messages": [{"m": text} for text in messages], **fields}


def test_a_request_is_written_relative_to_the_latest_call_sharing_most_history() -> None:
    encoder = RequestEncoder()
    _encoded(encoder, 0, _shaped(["a", "b"], x=1))
    _encoded(encoder, 1, _shaped(["a", "c"], x=1))
    # a tie goes to the latest call
    assert _encoded(encoder, 2, _shaped(["a", "d"], x=1)) == {
        "base": 1,
        "keep": 1,
        "messages": [{"m": "d"}],
    }


def test_a_call_lacking_a_field_is_skipped_as_a_base_not_the_end_of_the_search() -> None:
    encoder = RequestEncoder()
    _encoded(encoder, 0, _shaped(["a", "b"], x=1))
    _encoded(encoder, 1, _shaped(["z"], x=1, y=2))
    assert _encoded(encoder, 2, _shaped(["a", "b", "c"], x=1)) == {
        "base": 0,
        "keep": 2,
        "messages": [{"m": "c"}],
    }


def test_a_changed_field_is_written_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    writer = CassetteWriter(path, scrub_environment=False)
    first = RecordedCall(n=0, request=_request("a"), reply=REPLY)
    second = RecordedCall(n=1, request=_request("a", "b", system_prompt="be brief"), reply=REPLY)
    writer.write_call(first)
    writer.write_call(second)
    line = json.loads(path.read_text().splitlines()[2])
    assert line["request"]["base"] == 0 and line["request"]["system_prompt"] == "be brief"
    loaded = Cassette.load(path)
    assert loaded.calls[1].request == second.request
    assert [call.request for call in writer.cassette.calls] == [first.request, second.request]


def test_a_call_appended_is_written_relative_to_a_call_read_back(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    CassetteWriter(path, scrub_environment=False).write_call(
        RecordedCall(n=0, request=_request("a"), reply=REPLY)
    )
    writer = CassetteWriter(path, append=True, scrub_environment=False)
    writer.write_call(RecordedCall(n=writer.reserve(), request=_request("a", "b"), reply=REPLY))
    line = json.loads(path.read_text().splitlines()[2])
    assert (line["n"], line["request"]["base"], line["request"]["keep"]) == (1, 0, 1)
    assert Cassette.load(path).calls[1].request == _request("a", "b")
