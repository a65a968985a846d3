"""No secret reaches a cassette: keys, auth headers, signed URL parts, wherever they appear."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from replay_helpers import run_agent, text_reply, tool_reply

from yoagent.core import (
    AssistantMessage,
    ErrorKind,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    RetryConfig,
    TextContent,
    ToolCall,
    ToolContext,
    ToolResult,
)
from yoagent.testing import REDACTED, Cassette, RecordingProvider, ReplayProvider
from yoagent.testing._secrets import cassette_scrubber, redact_url

KEY = "sk-planted-0123456789abcdef"
HEADER_TOKEN = "tok-planted-header-0123456789"
URL_PASSWORD = "url-planted-password-0123"
SIGNATURE = "sig-planted-0123456789"
ENV_TOKEN = "env-planted-token-0123456789"


def _planted_config() -> ModelConfig:
    return replace(
        ModelConfig.mock(),
        api_key=KEY,
        base_url=f"https://user:{URL_PASSWORD}@proxy.example/v1?X-Amz-Signature={SIGNATURE}&a=1",
        headers={"Authorization": f"Bearer {HEADER_TOKEN}", "x-team": "blue"},
    )


class LeakyTool:
    """A tool whose output repeats the key (as a misconfigured tool might)."""

    name = "leak"
    description = "Echo the environment."
    parameters: dict[str, object] = {"type": "object", "properties": {}}  # noqa: RUF012

    async def execute(self, arguments: dict[str, object], ctx: ToolContext) -> ToolResult:
        ctx.progress(f"using {KEY}")
        return ToolResult.from_text(f"API_KEY={KEY} TOKEN={ENV_TOKEN}")


async def test_no_planted_secret_appears_anywhere_in_the_cassette(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", ENV_TOKEN)
    path = tmp_path / "run.jsonl"
    leaky_reply = AssistantMessage(content=[TextContent(text=f"your key is {KEY}")])
    script = MockProvider(
        [
            ProviderError(ErrorKind.AUTH, f"key {KEY} was refused", status=401),
            tool_reply(ToolCall(id="c1", name="leak", arguments={})),
            leaky_reply,
        ]
    )
    recorder = RecordingProvider(script, path)
    config = _planted_config()
    agent, _ = await run_agent(
        recorder,
        f"please use {HEADER_TOKEN}",
        config=config,
        tools=recorder.record_tools([LeakyTool()]),
        retry=RetryConfig.none(),
    )
    await run_agent(recorder, "again", config=config, tools=recorder.record_tools([LeakyTool()]))

    text = path.read_text(encoding="utf-8")
    for secret in (KEY, HEADER_TOKEN, URL_PASSWORD, SIGNATURE, ENV_TOKEN):
        assert secret not in text, secret
    assert REDACTED in text
    cassette = Cassette.load(path)
    endpoint = cassette.calls[0].request["endpoint"]
    assert endpoint["headers"] == {"Authorization": REDACTED, "x-team": "blue"}
    assert endpoint["base_url"].startswith(f"https://{REDACTED}@proxy.example/v1?")
    assert "a=1" in endpoint["base_url"]
    assert cassette.calls[0].error is not None
    assert cassette.calls[0].error["message"] == f"key {REDACTED} was refused"
    assert agent.messages  # the run itself saw the real values


async def test_a_short_key_is_never_written_yet_ordinary_text_survives(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    config = replace(ModelConfig.mock(), api_key="k", headers={"x-api-key": "k"})
    await run_agent(RecordingProvider(MockProvider.text("k is a letter"), path), config=config)
    cassette = Cassette.load(path)
    assert cassette.calls[0].request["endpoint"]["headers"] == {"x-api-key": REDACTED}
    assert cassette.calls[0].reply is not None
    assert cassette.calls[0].reply["content"][0]["text"] == "k is a letter"


async def test_a_cassette_with_redacted_endpoints_still_replays(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    recorded, _ = await run_agent(
        RecordingProvider(MockProvider([text_reply("hi")]), path), config=_planted_config()
    )
    no_key = replace(_planted_config(), api_key="", headers={}, base_url="")
    replayed, _ = await run_agent(ReplayProvider(path), config=no_key)
    assert replayed.messages[-1] == recorded.messages[-1]


async def test_a_key_streamed_across_two_deltas_is_never_written(tmp_path: Path) -> None:
    """Each streamed delta was scrubbed alone: a key the model streamed in two pieces was
    written as two halves, which read as the key once a replay joins them."""
    path = tmp_path / "run.jsonl"
    reply = MockReply(message=text_reply(f"key {KEY} end"), chunk_size=18)  # the key straddles
    await run_agent(RecordingProvider(MockProvider([reply]), path), config=_planted_config())

    call = Cassette.load(path).calls[0]
    pieces = [delta["delta"] for delta in call.deltas]
    assert pieces == [f"key {REDACTED}", " end"]  # as many deltas (each keeps its time)
    assert KEY[:10] not in path.read_text(encoding="utf-8")
    replayed, _ = await run_agent(ReplayProvider(path))
    assert replayed.messages[-1].text == f"key {REDACTED} end"  # type: ignore[union-attr]


async def test_extra_secrets_can_be_named(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    await run_agent(
        RecordingProvider(
            MockProvider.text("the password is hunter2-long"), path, secrets=["hunter2-long"]
        )
    )
    assert "hunter2-long" not in path.read_text()


def test_urls_lose_userinfo_and_secret_query_values_only() -> None:
    assert redact_url("https://api.example/v1") == "https://api.example/v1"
    assert redact_url("http://u:p@h:8080/x") == f"http://{REDACTED}@h:8080/x"
    assert redact_url("https://h/x?key=abc&alt=sse") == f"https://h/x?key={REDACTED}&alt=sse"
    assert redact_url("https://h/x?sig=1&code=2&access_token=3&page=4") == (
        f"https://h/x?sig={REDACTED}&code={REDACTED}&access_token={REDACTED}&page=4"
    )
    assert redact_url("") == ""


@pytest.mark.parametrize("char", ["/", "?", "#", "@"])
def test_a_password_holding_an_unencoded_delimiter_is_redacted_whole(char: str) -> None:
    """The floor's rule: the user information runs to the last ``@`` before the host."""
    url = f"https://admin:hunter2{char}secret@proxy.example/v1?a=1"
    assert redact_url(url) == f"https://{REDACTED}@proxy.example/v1?a=1"


def test_the_scrubber_replaces_inside_keys_and_values_and_prefers_the_longer_secret() -> None:
    scrubber = cassette_scrubber(["abcdefgh", "abcdefgh-longer"])
    assert scrubber.json({"abcdefgh": ["x abcdefgh-longer y", 1, None]}) == {
        REDACTED: [f"x {REDACTED} y", 1, None]
    }
    assert scrubber.scrub("12345678") == "12345678"


def test_a_number_equal_to_a_secret_stays_valid_json() -> None:
    scrubber = cassette_scrubber(["12345678"])
    assert scrubber.json({"n": 12345678, "s": "12345678"}) == {"n": 12345678, "s": REDACTED}
