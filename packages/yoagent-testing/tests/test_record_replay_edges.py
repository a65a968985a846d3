"""Recording and replaying at their edges: recorded timing kept or ignored, what a
mismatch names, a tool's updates and context, the writer's numbering and paths, which
secrets are kept out and which text is left alone, and the options a UseCassette passes
on (from the mutation triage: each test pins a behaviour a surviving mutant changed)."""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from replay_helpers import CountingAdd, add_call, run_agent, text_reply, tool_reply

from yoagent.core import (
    AssistantMessage,
    CancelToken,
    ErrorKind,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    Session,
    SessionStats,
    TextContent,
    ToolContext,
    ToolError,
    ToolResult,
    UserMessage,
    message_adapter,
)
from yoagent.core.provider import DeltaSink, OutputSchema, StreamConfig, ToolDefinition
from yoagent.testing import (
    REDACTED,
    Cassette,
    CassetteError,
    CassetteWriter,
    Difference,
    Match,
    RecordedCall,
    RecordedTool,
    RecordingProvider,
    RecordingTool,
    ReplayingTool,
    ReplayProvider,
    RequestMismatch,
    ToolResultMismatch,
    UseCassette,
    fork,
    fork_point,
    fork_provider,
    request_json,
)
from yoagent.testing._secrets import (
    cassette_scrubber,
    environment_secrets,
    redact_url,
    scrub_deltas,
)
from yoagent.testing._tools import RecordedResults

REPLY = message_adapter.dump_python(text_reply("hello"), mode="json")
DELTA = {"type": "text_delta", "content_index": 0, "delta": "hello"}


def _ignore(delta: Any) -> None:
    pass


def _config(*texts: str, model: ModelConfig | None = None) -> StreamConfig:
    return StreamConfig(
        model=model or ModelConfig.mock(),
        system_prompt="",
        messages=[UserMessage.from_text(text) for text in texts],
    )


CONFIG = _config("hi")


def _timed_call(**fields: Any) -> RecordedCall:
    record: dict[str, Any] = {
        "n": 0,
        "request": request_json(CONFIG),
        "deltas": [DELTA],
        "times": [0.1],
        "elapsed": 0.1,
        "reply": REPLY,
    }
    record.update(fields)
    return RecordedCall(**record)


async def _delta_at(replay: ReplayProvider) -> tuple[float, float]:
    """When the delta arrived and when the call ended, in seconds from its start."""
    started = time.monotonic()
    arrived: list[float] = []
    await replay.stream(CONFIG, lambda delta: arrived.append(time.monotonic() - started))
    return arrived[0], time.monotonic() - started


async def test_a_replay_slowed_down_keeps_the_recorded_pace() -> None:
    delta, end = await _delta_at(ReplayProvider(Cassette([_timed_call()]), speed=0.5))
    assert 0.19 <= delta < 0.9
    assert end < 0.9


async def test_a_replay_without_speed_ignores_recorded_times() -> None:
    replay = ReplayProvider(Cassette([_timed_call(times=[5.0], elapsed=5.0)]))
    with anyio.fail_after(2):
        delta, _ = await _delta_at(replay)
    assert delta < 2
    assert replay.requests == [CONFIG]


async def test_the_requests_a_mismatch_names_are_numbered_from_0() -> None:
    capped = ReplayProvider(Cassette([_timed_call()]), max_calls=0)
    with pytest.raises(RequestMismatch) as raised:
        await capped.stream(CONFIG, _ignore)
    assert raised.value.request == 0
    replay = ReplayProvider(Cassette([_timed_call()]))
    await replay.stream(CONFIG, _ignore)
    with pytest.raises(RequestMismatch) as raised:
        await replay.stream(CONFIG, _ignore)
    assert raised.value.request == 1
    assert "all 1 calls of the cassette were played" in str(raised.value)


async def test_a_difference_json_cannot_show_names_the_whole_request() -> None:
    def keyed(request: dict[str, Any]) -> dict[str, Any]:
        live = "live" in json.dumps(request["messages"])
        return {1.0 if live else 1: "x"}  # equal in Python, not as JSON text

    replay = ReplayProvider(Cassette([_timed_call()]), match=Match(normalize=keyed))
    with pytest.raises(RequestMismatch) as raised:
        await replay.stream(_config("live"), _ignore)
    assert raised.value.difference == Difference((), {1: "x"}, {1.0: "x"})
    assert "against the next unplayed call (0), the request differs" in str(raised.value)


async def test_a_missing_message_is_named_by_its_recorded_role(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    two = _config("a", "b")
    await RecordingProvider(MockProvider([text_reply("ok")], validate=False), path).stream(
        two, _ignore
    )
    one = StreamConfig(model=two.model, system_prompt="", messages=two.messages[:1])
    with pytest.raises(RequestMismatch) as raised:
        await ReplayProvider(path).stream(one, _ignore)
    assert "messages[1] (message 1, user) differs" in str(raised.value)


def test_a_replay_may_run_slower_than_recorded() -> None:
    assert ReplayProvider(Cassette(), speed=0.5).speed == 0.5


# -- tools ---------------------------------------------------------------------------------


class Probe:
    """A tool that reports an update with details and a progress note, and sees its call."""

    name = "probe"
    description = "Probe."
    parameters: dict[str, Any] = {"type": "object"}  # noqa: RUF012 - the AgentTool protocol reads it

    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.seen: list[Any] = []

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.seen.append((ctx.tool_call_id, ctx.tool_name, ctx.cancelled))
        ctx.update(ToolResult(content=[TextContent(text="part")], details={"k": 1}))
        ctx.progress("step")
        ctx.report_delegated_run(SessionStats())
        if self.error is not None:
            raise self.error
        return ToolResult.from_text("done", details=Opaque())


class Opaque:
    def __repr__(self) -> str:
        return "<opaque>"


def _context(**callbacks: Any) -> ToolContext:
    return ToolContext(tool_call_id="c1", tool_name="probe", **callbacks)


async def test_a_recorded_tool_sees_its_call_and_passes_reports_on(tmp_path: Path) -> None:
    writer = CassetteWriter(tmp_path / "run.jsonl", scrub_environment=False)
    probe = Probe()
    token = CancelToken()
    token.cancel()
    updates: list[ToolResult] = []
    notes: list[str] = []
    delegated: list[SessionStats] = []
    ctx = _context(
        cancel=token,
        on_update=updates.append,
        on_progress=notes.append,
        on_delegated_run=delegated.append,
    )
    recording = RecordingTool(probe, writer)
    assert repr(recording) == f"RecordingTool({probe!r})"

    await recording.execute({}, ctx)

    assert probe.seen == [("c1", "probe", True)]
    assert [u.details for u in updates] == [{"k": 1}] and notes == ["step"]
    assert len(delegated) == 1
    recorded = writer.cassette.tools[0]
    assert recorded == Cassette.load(writer.path).tools[0]
    assert recorded.updates == [
        {"kind": "update", "content": [{"type": "text", "text": "part"}], "details": {"k": 1}},
        {"kind": "progress", "text": "step"},
    ]
    assert recorded.details == "<opaque>"  # what JSON cannot hold is recorded as its repr

    replayed: list[ToolResult] = []
    replaying = ReplayingTool(probe, RecordedResults(writer.cassette.tools, source="s"))
    await replaying.execute({}, _context(on_update=replayed.append))
    assert [u.details for u in replayed] == [{"k": 1}]


async def test_a_tool_error_without_text_is_recorded_as_its_type(tmp_path: Path) -> None:
    writer = CassetteWriter(tmp_path / "run.jsonl", scrub_environment=False)
    with pytest.raises(ToolError):
        await RecordingTool(Probe(ToolError("")), writer).execute({}, _context())
    assert writer.cassette.tools[0].content == [{"type": "text", "text": "ToolError"}]


async def test_recorded_updates_with_fields_left_out_replay_empty() -> None:
    tool = RecordedTool(
        tool_call_id="c1",
        tool_name="probe",
        arguments={},
        content=[{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
        is_error=True,
        updates=[{"kind": "progress"}, {"kind": "update"}],
    )
    notes: list[str] = []
    updates: list[ToolResult] = []
    replaying = ReplayingTool(Probe(), RecordedResults([tool], source="s"))
    with pytest.raises(ToolError) as raised:
        await replaying.execute({}, _context(on_update=updates.append, on_progress=notes.append))
    assert str(raised.value) == "a\nb"
    assert notes == [""]
    assert [(u.content, u.details) for u in updates] == [([], None)]


async def test_a_tool_call_with_no_recording_names_the_call_and_the_cassette(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    await RecordingProvider(MockProvider.text("ok"), path).stream(CONFIG, _ignore)
    replay = ReplayProvider(path)
    [tool] = replay.replay_tools([Probe()])
    with pytest.raises(ToolResultMismatch) as raised:
        await tool.execute({}, ToolContext(tool_call_id="c9", tool_name="probe"))
    assert raised.value.tool_call_id == "c9"
    assert str(raised.value) == f"no recorded result for probe call 'c9' in {path}"
    assert replay.mismatches == [raised.value]
    assert RecordedResults([], source="s").mismatches == []


# -- the recording provider ----------------------------------------------------------------


class Interrupted(BaseException):
    pass


class Scripted:
    def __init__(self, error: BaseException) -> None:
        self.error = error

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        raise self.error


async def test_a_call_ended_by_something_other_than_an_exception_is_not_recorded(
    tmp_path: Path,
) -> None:
    recorder = RecordingProvider(Scripted(Interrupted()), tmp_path / "run.jsonl")
    with pytest.raises(Interrupted):
        await recorder.stream(CONFIG, _ignore)
    assert Cassette.load(tmp_path / "run.jsonl").calls == []
    assert repr(recorder).endswith(f", {str(tmp_path / 'run.jsonl')!r})")


async def test_a_cancelled_call_is_kept_as_cancelled(tmp_path: Path) -> None:
    slow = MockProvider([MockReply(message=text_reply("late"), delay=10)])
    recorder = RecordingProvider(slow, tmp_path / "run.jsonl")
    with anyio.move_on_after(0.05):
        await recorder.stream(CONFIG, _ignore)
    assert recorder.cassette.calls[0].cancelled is True
    assert recorder.cassette.calls == Cassette.load(tmp_path / "run.jsonl").calls


@pytest.mark.parametrize(("retry_after", "written"), [(math.inf, "inf"), (math.nan, None)])
async def test_an_unbounded_retry_after_is_recorded_and_raised_again(
    tmp_path: Path, retry_after: float, written: str | None
) -> None:
    path = tmp_path / "run.jsonl"
    error = ProviderError(ErrorKind.RATE_LIMITED, "slow down", retry_after=retry_after)
    with pytest.raises(ProviderError):
        await RecordingProvider(Scripted(error), path).stream(CONFIG, _ignore)
    call = Cassette.load(path).calls[0]
    assert call.error is not None and call.error["retry_after"] == written
    with pytest.raises(ProviderError) as raised:
        await ReplayProvider(path).stream(CONFIG, _ignore)
    assert raised.value.retry_after == (math.inf if written else None)


async def test_recorded_times_are_rounded_to_a_tenth_of_a_millisecond(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorder = RecordingProvider(MockProvider.text("x" * 320), path, timing=True)
    await recorder.stream(CONFIG, _ignore)
    call = Cassette.load(path).calls[0]
    assert call.times is not None and len(call.times) == 20
    assert call.elapsed is not None
    assert all(round(t, 4) == t for t in [*call.times, call.elapsed])


def test_the_request_records_the_output_schema_tools_and_cache() -> None:
    config = StreamConfig(
        model=ModelConfig.mock(),
        system_prompt="",
        messages=[],
        tools=[ToolDefinition(name="t", description="d", parameters={"type": "object"})],
        output_schema=OutputSchema(name="answer", schema={"type": "object"}, description="A."),
    )
    request = request_json(config)
    assert request["output_schema"] == {
        "name": "answer",
        "schema": {"type": "object"},
        "description": "A.",
        "strict": True,
    }
    assert request["tools"] == [{"name": "t", "description": "d", "parameters": {"type": "object"}}]
    assert request["cache"] == {"enabled": config.cache.enabled, "session_key": None}


# -- the writer ----------------------------------------------------------------------------


def test_a_new_writer_replaces_the_cassette_and_an_appending_one_numbers_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    first = CassetteWriter(path, scrub_environment=False)
    first.write_call(RecordedCall(n=first.reserve(), request=request_json(CONFIG), reply=REPLY))
    assert first.cassette.path == path
    assert repr(first) == f"<CassetteWriter {str(path)!r}: 1 calls>"
    again = CassetteWriter(path, scrub_environment=False)
    assert Cassette.load(path).calls == [] and again.reserve() == 0
    appending = CassetteWriter(path, append=True, scrub_environment=False)
    assert appending.cassette.path == path
    assert appending.reserve() == 0  # a cassette with no calls yet numbers from 0


def test_environment_secrets_are_kept_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MUT_SERVICE_API_KEY", "env-secret-value-4711")
    text = [{"type": "text", "text": "env-secret-value-4711"}]
    kept = CassetteWriter(tmp_path / "kept.jsonl", scrub_environment=False)
    kept.write_tool(RecordedTool(tool_call_id="c", tool_name="t", arguments={}, content=text))
    assert "env-secret-value-4711" in (tmp_path / "kept.jsonl").read_text()
    assert environment_secrets({"MY_API_KEY": "v", "PATH": "/bin"}) == ["v"]


def test_a_key_shaped_value_nobody_named_is_left_alone() -> None:
    key_shaped = "sk-proj-" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY"
    assert cassette_scrubber().scrub(f"key {key_shaped}") == f"key {key_shaped}"


async def test_every_part_of_a_models_key_and_its_url_password_are_kept_out(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.jsonl"
    model = replace(
        ModelConfig.mock(),
        api_key="account-7:key-part-998877",
        base_url="https://user:url-password-5566@llm.example/v1",
    )
    said = "key-part-998877 and url-password-5566"
    recorder = RecordingProvider(MockProvider.text(said), path)
    await recorder.stream(_config("hi", model=model), _ignore)
    written = path.read_text()
    assert "key-part-998877" not in written and "url-password-5566" not in written
    assert f"{REDACTED} and {REDACTED}" in written


def test_deltas_are_scrubbed_per_block_and_kind() -> None:
    scrubber = cassette_scrubber(["SECRETVALUE12345"])

    def delta(kind: str, index: int, text: str) -> dict[str, Any]:
        return {"type": kind, "content_index": index, "delta": text}

    apart = [delta("text_delta", 0, "SECRETVA"), delta("text_delta", 1, "LUE12345")]
    assert scrub_deltas(scrubber, apart) == apart
    kinds = [delta("text_delta", 0, "SECRETVA"), delta("thinking_delta", 0, "LUE12345")]
    assert scrub_deltas(scrubber, kinds) == kinds
    split = [delta("text_delta", 0, "xxSECRETVA"), delta("text_delta", 0, "LUE12345yy")]
    assert [d["delta"] for d in scrub_deltas(scrubber, split)] == [f"xx{REDACTED}", "yy"]
    call = {**delta("tool_call_delta", 0, "{}"), "id": "SECRETVALUE12345", "name": "t"}
    assert scrub_deltas(scrubber, [call]) == [{**call, "id": REDACTED}]


def test_a_url_is_redacted_only_where_it_holds_credentials() -> None:
    assert redact_url("") == ""
    assert redact_url("http://[bad") == REDACTED  # not a URL: nothing of it is kept
    assert redact_url("https://h.example/p?a=&key=s") == "https://h.example/p?a=&key=[REDACTED]"


# -- UseCassette and fork ------------------------------------------------------------------


async def test_a_use_cassette_passes_its_match_and_timing_on(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recording = UseCassette(path, "once", timing=True)
    await recording.provider(MockProvider.text("ok")).stream(CONFIG, _ignore)
    recording.check()  # nothing replayed, nothing to raise
    assert Cassette.load(path).calls[0].times is not None
    assert UseCassette(tmp_path / "other.jsonl", "once").timing is False

    other_model = _config("hi", model=ModelConfig.mock("another-model"))
    loose = UseCassette(path, "none", match=Match(model=False))
    reply = await loose.provider().stream(other_model, _ignore)
    assert reply.text == "ok"
    assert repr(loose) == f"UseCassette({str(path)!r}, 'none')"


async def test_new_episodes_records_the_new_calls_and_tool_results_timed(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    UseCassette(path, "once").provider(MockProvider.text("ok"))
    episodes = UseCassette(path, "new_episodes", timing=True)
    live = MockProvider([tool_reply(add_call()), text_reply("5")])
    adder = CountingAdd()
    await run_agent(episodes.provider(live), tools=episodes.tools([adder]))
    assert adder.runs == 1
    cassette = Cassette.load(path)
    assert [tool.tool_call_id for tool in cassette.tools] == ["call_1"]
    assert all(call.times is not None for call in cassette.calls)


def test_what_a_use_cassette_says_when_it_cannot_go_on(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(CassetteError) as raised:
        UseCassette(missing, "none").provider()
    assert str(raised.value) == (
        f"no cassette at {missing}: record it with --yoagent-record=once "
        "(or RecordMode.ONCE), against a real model"
    )
    with pytest.raises(CassetteError) as raised:
        UseCassette(missing, "once").provider()
    assert str(raised.value) == (
        f"recording {missing} needs the real provider: pass provider(live) a "
        "provider, a function making one, or a ModelConfig"
    )


def test_turn_0_of_a_conversation_without_replies_is_all_of_it() -> None:
    assert fork_point([UserMessage.from_text("hi")], 0) == 1
    assert fork_point([], 0) == 0


def test_forking_before_a_first_reply_leaves_an_empty_head() -> None:
    session = Session()
    session.extend([text_reply("hello first")])
    assert fork(session, turn=0).path() == []


async def test_fork_provider_takes_a_loaded_cassette(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await RecordingProvider(MockProvider.text("ok"), path).stream(CONFIG, _ignore)
    provider = fork_provider(Cassette.load(path), turn=1, then=MockProvider.text("new"))
    assert (await provider.stream(CONFIG, _ignore)).text == "ok"
