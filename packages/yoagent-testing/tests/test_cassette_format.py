"""The cassette file: a versioned JSONL format that survives crashes and stays small."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from replay_helpers import CountingAdd, add_call, run_agent, text_reply, tool_reply

from yoagent.core import MockProvider, ModelConfig, UserMessage, message_adapter
from yoagent.core.provider import StreamConfig
from yoagent.testing import (
    FORMAT_VERSION,
    Cassette,
    CassetteError,
    CassetteWriter,
    RecordedCall,
    RecordingProvider,
    ReplayProvider,
    request_json,
)

HEADER = '{"kind":"header","format":"yoagent-cassette","version":1}\n'


async def _long_run(path: Path, turns: int) -> None:
    replies = [tool_reply(add_call(f"call_{i}"), text="x" * 500) for i in range(turns)]
    script = MockProvider([*replies, text_reply("done")])
    await run_agent(
        RecordingProvider(script, path), tools=[CountingAdd()], max_repeated_tool_calls=None
    )


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_the_first_line_is_a_versioned_header(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("hi"), path))
    assert path.read_text().startswith(HEADER)
    assert FORMAT_VERSION == 1


async def test_a_long_run_writes_its_history_once_not_once_per_turn(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _long_run(path, turns=12)
    lines = _lines(path)
    calls = [line for line in lines if line["kind"] == "call"]
    assert len(calls) == 13
    # Each later request states only the messages its turn added, and nothing unchanged.
    for n, call in enumerate(calls[1:], start=1):
        assert call["request"] == {
            "base": n - 1,
            "keep": 2 * n - 1,
            "messages": call["request"]["messages"],  # type: ignore[index]
        }
        assert [m["role"] for m in call["request"]["messages"]] == ["assistant", "tool_result"]  # type: ignore[index]
    cassette = Cassette.load(path)
    assert len(cassette.calls[-1].request["messages"]) == 1 + 2 * 12
    assert cassette.calls[-1].request["tools"] == cassette.calls[0].request["tools"]


async def test_to_jsonl_and_from_jsonl_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await _long_run(path, turns=3)
    cassette = Cassette.load(path)
    again = Cassette.from_jsonl(cassette.to_jsonl())
    assert [c.to_json() for c in again.calls] == [c.to_json() for c in cassette.calls]
    assert [t.to_json() for t in again.tools] == [t.to_json() for t in cassette.tools]


async def test_a_cut_off_last_line_is_skipped_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("a", "b"), path), "one")
    await run_agent(ReplayProvider(path), "one")  # fine before the damage
    text = path.read_text()
    path.write_text(text + '{"kind":"call","n":1,"request":{"mess')

    cassette = Cassette.load(path)

    assert len(cassette.calls) == 1
    assert len(cassette.load_warnings) == 1 and "line 3" in cassette.load_warnings[0]


def test_a_bad_line_before_the_last_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + "not json\n" + '{"kind":"future"}\n')
    with pytest.raises(CassetteError, match=r"run\.jsonl: line 2: not JSON"):
        Cassette.load(path)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty file"),
        ('{"kind":"call"}\n', "not a cassette"),
        ('{"kind":"header","format":"yoagent-cassette","version":2}\n', "newer than"),
        ('{"kind":"header","format":"yoagent-cassette","version":"1"}\n', "not a format version"),
        (HEADER + "[1]\n", "must be a JSON object"),
        (HEADER + HEADER, "a second header"),
        (HEADER + '{"kind":"call","n":0,"request":{"messages":[]}}\n', "one of reply, error"),
        (HEADER + '{"kind":"call","n":-1,"request":{},"cancelled":true}\n', "whole number"),
        (
            HEADER + '{"kind":"call","n":0,"request":{"base":5,"keep":0},"cancelled":true}\n',
            "names base 5, which no earlier line holds",
        ),
        (
            HEADER
            + '{"kind":"call","n":0,"request":{"messages":[{"role":"nobody"}]},"cancelled":true}\n',
            "call 0 holds an invalid record",
        ),
        (
            HEADER + '{"kind":"call","n":0,"request":{"messages":[]},"deltas":[{"type":"x"}],'
            '"cancelled":true}\n',
            "invalid record",
        ),
        (
            HEADER + '{"kind":"call","n":0,"request":{"messages":[]},"times":[1,2],'
            '"cancelled":true}\n',
            "one time",
        ),
        (HEADER + '{"kind":"tool","tool_name":"x"}\n', "needs a tool_call_id"),
    ],
)
def test_malformed_cassettes_are_refused_with_the_reason(text: str, problem: str) -> None:
    with pytest.raises(CassetteError, match=problem):
        Cassette.from_jsonl(text + "\n")


def test_a_missing_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no cassette at"):
        Cassette.load(tmp_path / "absent.jsonl")


def test_record_kinds_from_a_later_format_are_skipped() -> None:
    text = HEADER + '{"kind":"defer","tool_call_id":"c1"}\n'
    assert Cassette.from_jsonl(text).calls == []


def test_calls_written_out_of_order_are_played_in_the_order_they_began(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    writer = CassetteWriter(path)
    config = StreamConfig(
        model=ModelConfig.mock(), system_prompt="", messages=[UserMessage.from_text("a")]
    )
    request = request_json(config)
    first, second = writer.reserve(), writer.reserve()
    writer.write_call(RecordedCall(n=second, request=request, reply=_reply("second")))
    writer.write_call(RecordedCall(n=first, request=request, reply=_reply("first")))
    assert [line.get("n") for line in _lines(path)] == [None, 1, 0]

    cassette = Cassette.load(path)

    assert [call.n for call in cassette.calls] == [0, 1]
    replay = ReplayProvider(cassette)
    texts = [anyio.run(replay.stream, config, lambda d: None).text for _ in range(2)]
    assert texts == ["first", "second"]


def _reply(text: str) -> dict[str, Any]:
    return message_adapter.dump_python(text_reply(text), mode="json")


async def test_appending_numbers_new_calls_after_the_old_ones(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("a"), path), "one")
    await run_agent(RecordingProvider(MockProvider.text("b"), path, append=True), "two")
    cassette = Cassette.load(path)
    assert [call.n for call in cassette.calls] == [0, 1]
    assert path.read_text().count('"kind":"header"') == 1


async def test_appending_after_a_cut_off_line_drops_it_first(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("a"), path), "one")
    path.write_text(path.read_text() + '{"kind":"call","n":1,"req')
    await run_agent(RecordingProvider(MockProvider.text("b"), path, append=True), "two")
    cassette = Cassette.load(path)
    assert [call.n for call in cassette.calls] == [0, 1]
    assert cassette.load_warnings == []


async def test_a_new_recording_replaces_the_old_file_and_makes_folders(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "run.jsonl"
    await run_agent(RecordingProvider(MockProvider.text("a", "b"), path), "one")
    await run_agent(RecordingProvider(MockProvider.text("c"), path), "two")
    assert [call.n for call in Cassette.load(path).calls] == [0]


async def test_the_transcript_is_the_last_successful_calls_conversation(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(
        RecordingProvider(MockProvider([tool_reply(add_call()), text_reply("5")]), path),
        tools=[CountingAdd()],
    )
    cassette = Cassette.load(path)
    assert [m.role for m in cassette.transcript()] == [
        "user",
        "assistant",
        "tool_result",
        "assistant",
    ]
    assert [m.role for m in cassette.transcript(call=0)] == ["user", "assistant"]
    with pytest.raises(CassetteError, match="no call 7"):
        cassette.transcript(call=7)
    with pytest.raises(CassetteError, match="no call that returned"):
        Cassette().transcript()


def test_a_complete_but_invalid_last_line_is_an_error_not_a_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(HEADER + '{"kind":"call","n":0,"request":{"messages":[]}}')  # no newline
    with pytest.raises(CassetteError, match="line 2: call 0 must end in one of"):
        Cassette.load(path)


def test_a_credential_variable_that_is_not_utf8_is_scrubbed_and_the_writer_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Latin-1 byte in a password variable decodes to a lone surrogate."""
    monkeypatch.setitem(os.environb, b"MY_SERVICE_PASSWORD", b"caf\xe9-password-123")
    writer = CassetteWriter(tmp_path / "run.jsonl", secrets=["unrelated-secret"])
    config = StreamConfig(
        model=ModelConfig.mock(),
        system_prompt="",
        messages=[UserMessage.from_text(os.environ["MY_SERVICE_PASSWORD"])],
    )
    writer.write_call(
        RecordedCall(n=writer.reserve(), request=request_json(config), reply=_reply("ok"))
    )
    assert b"caf" not in (tmp_path / "run.jsonl").read_bytes()
