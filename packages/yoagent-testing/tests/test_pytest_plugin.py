"""The pytest plugin, run the way a project runs it: pytest in a subprocess, record then replay."""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from yoagent.testing.pytest_plugin import cassette_name

INNER_TESTS = textwrap.dedent(
    """
    import os

    import anyio
    import pytest

    from yoagent.core import Agent, MockProvider, ModelConfig, ToolCall, ToolResult, tool
    from yoagent.core import AssistantMessage, StopReason, TextContent

    RUNS = []


    @tool
    async def add(a: int, b: int) -> str:
        '''Add two integers.'''
        RUNS.append((a, b))
        return str(a + b)


    def live():
        if os.environ.get("NO_LIVE"):
            raise AssertionError("a replay built the live provider")
        return MockProvider([
            AssistantMessage(
                content=[ToolCall(id="c1", name="add", arguments={"a": 2, "b": 2})],
                stop_reason=StopReason.TOOL_USE,
            ),
            AssistantMessage(content=[TextContent(text=os.environ.get("REPLY", "4"))]),
        ])


    def run(agent, prompt):
        async def main():
            with anyio.fail_after(20):
                await agent.prompt(prompt)
        anyio.run(main)


    def test_adds(yoagent_cassette):
        agent = Agent.from_provider(
            yoagent_cassette.provider(live),
            ModelConfig.mock(),
            tools=yoagent_cassette.tools([add]),
        )
        run(agent, "what is 2 + 2?")
        assert agent.messages[-1].text == os.environ.get("EXPECT", "4")
        if os.environ.get("NO_LIVE"):
            assert RUNS == []  # the recorded result served the call


    def test_mismatch(yoagent_cassette):
        provider = yoagent_cassette.provider(live)
        agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[add])
        run(agent, os.environ.get("PROMPT", "what is 2 + 2?"))  # the run ends in an error


    @pytest.mark.yoagent_cassette("never-recorded.jsonl")
    def test_missing(yoagent_cassette):
        yoagent_cassette.provider(live)


    class TestInAClass:
        def test_adds(self, yoagent_cassette):
            assert yoagent_cassette.path.name == "TestInAClass.test_adds.jsonl"
    """
)


def _pytest(folder: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}
    environ.update(env)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-rA",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:asyncio",
            "--rootdir",
            str(folder),
            "-c",
            str(folder / "pytest.ini"),
            str(folder / "test_inner.py"),
            *args,
        ],
        cwd=folder,
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _outcome(result: subprocess.CompletedProcess[str], test: str) -> str:
    """How a test ended: PASSED, FAILED, or ERROR (an error in setup or teardown wins,
    as pytest reports it beside the call's own outcome)."""
    words = {
        word
        for line in result.stdout.splitlines()
        for word in ("PASSED", "FAILED", "ERROR")
        if line.startswith(f"{word} test_inner.py::{test}")
    }
    if not words:
        raise AssertionError(f"{test} did not run:\n{result.stdout}\n{result.stderr}")
    return "ERROR" if "ERROR" in words else words.pop()


def test_the_plugin_records_once_replays_then_records_more(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    cassettes = tmp_path / "cassettes" / "test_inner"

    recording = _pytest(tmp_path, "--yoagent-record=once", "-k", "adds or mismatch")
    assert recording.returncode == 0, recording.stdout + recording.stderr
    recorded = (cassettes / "test_adds.jsonl").read_text()
    assert '"kind":"tool"' in recorded  # the tool result was recorded with the calls

    replaying = _pytest(tmp_path, NO_LIVE="1", PROMPT="what is 2 + 5?")

    assert _outcome(replaying, "test_adds") == "PASSED"
    # A request the cassette cannot serve fails the test, though the run swallowed it.
    assert _outcome(replaying, "test_mismatch") == "ERROR"
    assert "messages[0].content[0].text (message 0, user) differs" in replaying.stdout
    assert "recorded: 'what is 2 + 2?'" in replaying.stdout
    assert _outcome(replaying, "test_missing") == "FAILED"
    assert _outcome(replaying, "TestInAClass::test_adds") == "PASSED"
    assert "no cassette at" in replaying.stdout and "--yoagent-record=once" in replaying.stdout
    assert (cassettes / "test_adds.jsonl").read_text() == recorded  # replay writes nothing

    # new_episodes keeps the recorded calls and appends the ones it could not serve;
    # all records the test again from scratch.
    more = _pytest(
        tmp_path, "--yoagent-record=new_episodes", "-k", "mismatch", PROMPT="what is 2 + 5?"
    )
    assert more.returncode == 0, more.stdout + more.stderr
    assert _calls(cassettes / "test_mismatch.jsonl") == 4
    again = _pytest(tmp_path, "--yoagent-record=all", "-k", "adds", REPLY="four", EXPECT="four")
    assert again.returncode == 0, again.stdout + again.stderr
    rerecorded = (cassettes / "test_adds.jsonl").read_text()
    assert _calls(cassettes / "test_adds.jsonl") == 2 and '"text":"four"' in rerecorded


def _calls(path: Path) -> int:
    return sum(1 for line in path.read_text().splitlines() if json.loads(line)["kind"] == "call")


def test_a_bad_ini_mode_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\nyoagent_record = sometimes\n")
    result = _pytest(tmp_path, "-k", "adds")
    assert result.returncode != 0
    assert "yoagent_record = 'sometimes': use one of none, once, new_episodes, all" in (
        result.stdout + result.stderr
    )
    assert "test_inner.py" not in result.stdout  # refused before any test ran


def test_the_plugin_is_registered_for_pytest() -> None:
    names = {ep.name: ep.value for ep in importlib.metadata.entry_points(group="pytest11")}
    assert names.get("yoagent") == "yoagent.testing.pytest_plugin"


def _digest(test_name: str) -> str:
    return hashlib.sha256(test_name.encode()).hexdigest()[:12]


@pytest.mark.parametrize(
    ("test_name", "file_name"),
    [
        ("test_adds", "test_adds.jsonl"),
        ("TestInAClass.test_adds", "TestInAClass.test_adds.jsonl"),
        ("test_x[anthropic_messages]", "test_x[anthropic_messages].jsonl"),
        ("test_x[a-b.c]", "test_x[a-b.c].jsonl"),
        ("test_x[a/b: c]", f"test_x[a_b_c]-{_digest('test_x[a/b: c]')}.jsonl"),
        ("...", f"test-{_digest('...')}.jsonl"),
    ],
)
def test_cassette_names_are_safe_file_names(test_name: str, file_name: str) -> None:
    assert cassette_name(test_name) == file_name


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("test_ask[what is 2+2?]", "test_ask[what is 2*2?]"),
        ("test_x[a b]", "test_x[a_b]"),
        ("test_x[src/x]", "test_x[src\\x]"),
        ("_test_x", "test_x"),
        ("test_" + "x" * 300 + "a", "test_" + "x" * 300 + "b"),
    ],
)
def test_different_tests_never_share_a_cassette_name(one: str, other: str) -> None:
    assert cassette_name(one) != cassette_name(other)
    for name in (cassette_name(one), cassette_name(other)):
        assert len(name) <= 120 + len(".jsonl")
        assert re.fullmatch(r"[\w.\-\[\]]+\.jsonl", name), name


COLLIDING_TESTS = textwrap.dedent(
    """
    import os

    import anyio
    import pytest

    from yoagent.core import Agent, AssistantMessage, MockProvider, ModelConfig, TextContent

    ANSWERS = {"what is 2+2?": "4", "what is 2*2?": "four", "a b": "spaced", "a_b": "joined"}


    @pytest.mark.parametrize("question", list(ANSWERS))
    def test_ask(yoagent_cassette, question):
        def live():
            if os.environ.get("NO_LIVE"):
                raise AssertionError("a replay built the live provider")
            return MockProvider([AssistantMessage(content=[TextContent(text=ANSWERS[question])])])

        agent = Agent.from_provider(yoagent_cassette.provider(live), ModelConfig.mock())
        anyio.run(agent.prompt, question)
        assert agent.messages[-1].text == ANSWERS[question]
    """
)


def test_parametrized_tests_whose_ids_sanitize_alike_record_and_replay_their_own_cassettes(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_inner.py").write_text(COLLIDING_TESTS)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    cassettes = tmp_path / "cassettes" / "test_inner"

    recording = _pytest(tmp_path, "--yoagent-record=once")
    assert recording.returncode == 0, recording.stdout + recording.stderr
    files = sorted(path.name for path in cassettes.iterdir())
    assert files == sorted(
        [
            f"test_ask[what_is_2_2_]-{_digest('test_ask[what is 2+2?]')}.jsonl",
            f"test_ask[what_is_2_2_]-{_digest('test_ask[what is 2*2?]')}.jsonl",
            f"test_ask[a_b]-{_digest('test_ask[a b]')}.jsonl",
            "test_ask[a_b].jsonl",  # already a safe name: kept readable
        ]
    )

    replaying = _pytest(tmp_path, NO_LIVE="1")
    assert replaying.returncode == 0, replaying.stdout + replaying.stderr
    for question in ("what is 2+2?", "what is 2*2?", "a b", "a_b"):
        assert _outcome(replaying, f"test_ask[{question}]") == "PASSED"
