"""Shared state: key rules, both backends, the shared_state tool, and the tool-output sink."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import Agent, MockProvider, ModelConfig, ModelTool, ToolResultMessage
from yoagent.core._shared_state.store import (
    MAX_KEY_LENGTH,
    FileBackend,
    InvalidKeyError,
    MemoryBackend,
    SharedState,
    SharedStateBackend,
    SharedStateError,
    SharedStateFullError,
    SharedStateSink,
    ToolOutputSink,
    tool_output_key,
    validate_key,
)
from yoagent.core._shared_state.tool import SharedStateArguments, SharedStateTool
from yoagent.core._tools.contract import AgentTool, ToolContext, ToolError
from yoagent.core._tools.model_tool import arguments_schema


@pytest.fixture(params=["memory", "file"])
def state(request: pytest.FixtureRequest, tmp_path: Path) -> SharedState:
    if request.param == "memory":
        return SharedState(MemoryBackend())
    return SharedState(FileBackend(tmp_path / "state"))


def ctx() -> ToolContext:
    return ToolContext(tool_call_id="t1", tool_name="shared_state")


@pytest.mark.parametrize(
    ("key", "problem"),
    [
        ("", "empty"),
        ("a/b", "path separator"),
        ("a\\b", "path separator"),
        ("..", "'..'"),
        ("x..y", "'..'"),
        (".hidden", "starts with a dot"),
        ("a\x00b", "NUL"),
        ("line\nbreak", "control"),
        ("k" * (MAX_KEY_LENGTH + 1), "limit is 200"),
        ("k\udc80", "lone surrogate"),
    ],
)
def test_unsafe_keys_are_refused_with_the_reason(key: str, problem: str) -> None:
    with pytest.raises(InvalidKeyError, match=problem):
        validate_key(key)


def test_reasonable_keys_pass() -> None:
    for key in ("notes", "plan.v2", "tool-output-call_1", "résumé", "k" * MAX_KEY_LENGTH):
        assert validate_key(key) == key


async def test_get_set_list_remove(state: SharedState) -> None:
    assert await state.get("a") is None
    await state.set("b", "two")
    await state.set("a", "one")
    await state.set("a", "uno")
    assert await state.get("a") == "uno"
    assert await state.list() == ["a", "b"]
    assert await state.list("b") == ["b"]
    assert await state.remove("a") is True
    assert await state.remove("a") is False
    assert await state.list() == ["b"]
    with pytest.raises(InvalidKeyError):
        await state.set("../escape", "x")


async def test_backends_satisfy_the_protocol(tmp_path: Path) -> None:
    assert isinstance(MemoryBackend(), SharedStateBackend)
    assert isinstance(FileBackend(tmp_path), SharedStateBackend)


async def test_memory_backend_refuses_a_set_over_its_cap() -> None:
    backend = MemoryBackend(max_bytes=100)
    state = SharedState(backend)
    await state.set("a", "x" * 50)
    with pytest.raises(SharedStateFullError, match="shared state is full") as caught:
        await state.set("b", "x" * 60)
    assert "max_bytes" in str(caught.value)
    assert await state.list() == ["a"]
    await state.set("a", "y" * 90)  # replacing frees the old value first
    assert backend.used_bytes == 91
    await state.remove("a")
    assert backend.used_bytes == 0


def test_memory_backend_default_cap_is_ten_megabytes() -> None:
    assert MemoryBackend().max_bytes == 10 * 1024 * 1024


async def test_file_backend_persists_one_file_per_key(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    await SharedState(FileBackend(folder)).set("report", "héllo\nworld")
    assert (folder / "report").read_text(encoding="utf-8") == "héllo\nworld"
    again = SharedState(FileBackend(folder))
    assert await again.get("report") == "héllo\nworld"
    (folder / ".tmp-leftover").write_text("x")
    assert await again.list() == ["report"]
    assert [p.name for p in folder.iterdir() if p.name.startswith(".tmp")] == [".tmp-leftover"]


async def test_file_backend_checks_keys_itself(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path / "state")
    with pytest.raises(InvalidKeyError):
        await backend.set("../outside", "x")
    with pytest.raises(InvalidKeyError):
        await backend.get("/etc/passwd")
    assert not (tmp_path / "outside").exists()


async def test_file_backend_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    import os

    folder = tmp_path / "state"
    folder.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("SECRET")
    os.symlink(secret, folder / "link")
    state = SharedState(FileBackend(folder))
    with pytest.raises(SharedStateError, match="'link' is a symbolic link"):
        await state.get("link")
    assert await state.list() == []


@pytest.mark.parametrize("kind", ["directory", "not-utf8"])
async def test_file_backend_turns_odd_files_into_clear_errors(tmp_path: Path, kind: str) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    if kind == "directory":
        (folder / "odd").mkdir()
        problem = "'odd' is not a regular file"
    else:
        (folder / "odd").write_bytes(b"ok \xff\xfe")
        problem = "'odd' holds bytes that are not UTF-8 text"
    state = SharedState(FileBackend(folder))
    with pytest.raises(SharedStateError, match=problem):
        await state.get("odd")
    if kind == "directory":
        assert await state.list() == []
        (folder / "odd" / "inside").write_text("x")
        with pytest.raises(SharedStateError, match="a directory of that name is in the way"):
            await state.set("odd", "v")
        with pytest.raises(SharedStateError, match="cannot remove shared state 'odd'"):
            await state.remove("odd")


async def test_file_backend_lists_only_names_get_accepts(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    folder.mkdir()
    for name in ("a..b", "k\udc80", "good"):
        (folder / name).write_text("x")
    state = SharedState(FileBackend(folder))
    assert await state.list() == ["good"]
    for key in await state.list():
        assert await state.get(key) == "x"


async def test_a_lone_surrogate_value_is_refused_by_every_backend(state: SharedState) -> None:
    with pytest.raises(SharedStateError, match="lone surrogate"):
        await state.set("k", "bad \ud800 text")
    with pytest.raises(SharedStateError, match="lone surrogate"):
        await state.backend.set("k", "bad \udcff text")
    assert await state.list() == []
    await state.set("k", "fine é 😀")
    assert await state.get("k") == "fine é 😀"


@pytest.mark.parametrize("backend", [MemoryBackend(), None])
async def test_backends_check_keys_the_same_way(tmp_path: Path, backend: Any) -> None:
    chosen: SharedStateBackend = backend if backend is not None else FileBackend(tmp_path / "s")
    for key in ("a..b", "k\ud800", "", ".hidden", "a/b"):
        with pytest.raises(InvalidKeyError):
            await chosen.set(key, "v")
        with pytest.raises(InvalidKeyError):
            await chosen.get(key)
        with pytest.raises(InvalidKeyError):
            await chosen.remove(key)
    assert await chosen.list() == []


async def test_file_backend_lists_nothing_before_the_folder_exists(tmp_path: Path) -> None:
    assert await FileBackend(tmp_path / "missing").list() == []


async def test_summary_names_the_keys() -> None:
    state = SharedState()
    assert "empty" in await state.summary()
    await state.set("plan", "p")
    assert "1 keys: plan" in await state.summary()


# -- sink -----------------------------------------------------------------------


async def test_sink_stashes_full_output_under_a_key_named_after_the_call() -> None:
    state = SharedState()
    sink: ToolOutputSink = state.sink()
    assert isinstance(sink, SharedStateSink)
    assert await sink("toolu_01A", "bash", "full output") == "tool-output-toolu_01A"
    key = await sink("toolu_01/A b", "bash", "full output")
    assert key.startswith("tool-output-toolu_01_A_b-")  # changed: a hash of the raw id follows
    assert await state.get(key) == "full output"


def test_tool_output_keys_are_always_valid() -> None:
    assert tool_output_key("").startswith("tool-output-call-")
    assert tool_output_key("..").startswith("tool-output-__-")
    assert len(tool_output_key("x" * 1000)) == MAX_KEY_LENGTH
    for raw in ("", "..", "x" * 1000, "a/b", "é", "\ud800"):
        assert validate_key(tool_output_key(raw)) == tool_output_key(raw)


def test_different_call_ids_never_share_a_tool_output_key() -> None:
    ids = ["call/1", "call_1", "call 1", "a..b", "a__b", "", "call", "x" * 300, "x" * 300 + "y"]
    ids += ["x" * 188, "x" * 189]  # right at the length limit with the prefix
    keys = [tool_output_key(raw) for raw in ids]
    assert len(set(keys)) == len(ids)
    assert all(len(key) <= MAX_KEY_LENGTH for key in keys)
    assert tool_output_key("call_1") == "tool-output-call_1"  # a safe id is kept as it is


async def test_sink_raises_when_the_store_is_full() -> None:
    sink = SharedState(MemoryBackend(max_bytes=10)).sink()
    with pytest.raises(SharedStateFullError):
        await sink("c1", "bash", "x" * 100)


# -- tool -------------------------------------------------------------------------


async def run(tool: SharedStateTool, **arguments: Any) -> str:
    return (await tool.execute(arguments, ctx())).text


async def test_tool_round_trip(state: SharedState) -> None:
    tool = SharedStateTool(state)
    assert isinstance(tool, AgentTool)
    assert tool.name == "shared_state"
    assert tool.parameters["required"] == ["action"]
    assert "Stored 5 characters" in await run(tool, action="set", key="k", value="hello")
    assert await run(tool, action="get", key="k") == "hello"
    assert await run(tool, action="list") == "k"
    assert await run(tool, action="list", prefix="z") == "No keys start with 'z'."
    assert await run(tool, action="remove", key="k") == "Removed 'k'."
    assert await run(tool, action="list") == "No keys."


async def test_tool_pages_through_long_values() -> None:
    state = SharedState()
    await state.set("big", "abcdefghij")
    tool = SharedStateTool(state)
    first = await run(tool, action="get", key="big", max_chars=4)
    assert first.startswith("abcd\n[characters 0-4 of 10; get again with offset=4")
    last = await run(tool, action="get", key="big", offset=8, max_chars=4)
    assert last == "ij\n[characters 8-10 of 10]"


INVALID = "invalid arguments for shared_state: "


@pytest.mark.parametrize(
    ("arguments", "problem"),
    [
        ({"action": "get"}, INVALID + "key: needed for get"),
        ({"action": "remove", "key": ""}, INVALID + "key: needed for remove"),
        ({"action": "get", "key": "nope"}, "shared_state get: no value under 'nope' (keys: k)"),
        ({"action": "set", "key": "k"}, INVALID + "value: needed for set"),
        ({"action": "set", "key": "k", "value": None}, INVALID + "value: needed for set"),
        ({"action": "set", "key": "a/b", "value": "v"}, "path separator"),
        ({"action": "remove", "key": "nope"}, "shared_state remove: no value under 'nope'"),
        (
            {"action": "get", "key": "k", "offset": -1},
            INVALID + "offset: Input should be greater than or equal to 0",
        ),
        (
            {"action": "explode"},
            INVALID + "action: Input should be 'get', 'set', 'list' or 'remove'",
        ),
        ({}, INVALID + "action: Field required"),
    ],
)
async def test_tool_errors_are_clear(arguments: dict[str, Any], problem: str) -> None:
    state = SharedState()
    await state.set("k", "v")
    with pytest.raises(ToolError, match=re.escape(problem)):
        await SharedStateTool(state).execute(arguments, ctx())


async def test_tool_reports_a_full_store() -> None:
    tool = SharedStateTool(SharedState(MemoryBackend(max_bytes=5)))
    with pytest.raises(ToolError, match="shared_state set: shared state is full"):
        await tool.execute({"action": "set", "key": "k", "value": "x" * 10}, ctx())


# -- the tool's arguments are a model -----------------------------------------------------


async def test_an_unknown_argument_is_an_error_result_the_model_reads() -> None:
    state = SharedState()
    agent = Agent.from_provider(
        MockProvider(
            [
                tool_reply(call("shared_state", action="set", key="k", value="v", ttl=5)),
                text_reply("done"),
            ]
        ),
        ModelConfig.mock(),
        shared_state=state,
    )
    await agent.prompt("store it")
    (result,) = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert result.is_error
    assert result.text == INVALID + "ttl: Extra inputs are not permitted"
    assert await state.list() == []  # nothing ran


async def test_arguments_are_coerced_laxly_and_a_null_option_means_its_default() -> None:
    state = SharedState()
    await state.set("big", "abcdefghij")
    tool = SharedStateTool(state)
    assert await run(tool, action="get", key="big", offset="8", max_chars="2") == (
        "ij\n[characters 8-10 of 10]"
    )
    assert await run(tool, action="get", key="big", offset=None, max_chars=None) == "abcdefghij"
    assert await run(tool, action="list", prefix=None) == "big"


def test_the_schema_is_the_argument_models() -> None:
    tool = SharedStateTool(SharedState())
    assert isinstance(tool, ModelTool)
    assert tool.parameters == arguments_schema(SharedStateArguments)
    assert tool.parameters["additionalProperties"] is False
    assert tool.parameters["properties"]["max_chars"]["minimum"] == 1
