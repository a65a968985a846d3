"""The ``shared_state`` tool at its edges: each answer and refusal word for word, the
details it returns, an empty value, the last offset a get accepts, and the page notes."""

from __future__ import annotations

import pytest

from yoagent.core._shared_state.store import SharedState
from yoagent.core._shared_state.tool import (
    TOOL_NAME,
    SharedStateTool,
    with_shared_state_tool,
)
from yoagent.core._tools.contract import ToolContext, ToolError, ToolResult


def ctx() -> ToolContext:
    return ToolContext(tool_call_id="t1", tool_name=TOOL_NAME)


async def run(state: SharedState, **arguments: object) -> ToolResult:
    return await SharedStateTool(state).execute(dict(arguments), ctx())


async def refusal(state: SharedState, **arguments: object) -> str:
    with pytest.raises(ToolError) as caught:
        await run(state, **arguments)
    return str(caught.value)


async def test_an_empty_value_is_stored_as_empty() -> None:
    state = SharedState()
    result = await run(state, action="set", key="k", value="")
    assert result.text == "Stored 0 characters under 'k'."
    assert await state.get("k") == ""
    got = await run(state, action="get", key="k")
    assert got.text == ""
    assert got.details == {"key": "k", "offset": 0, "end": 0, "total": 0}


async def test_a_list_gives_one_key_a_line_and_the_keys_in_its_details() -> None:
    state = SharedState()
    for key in ("b", "a"):
        await state.set(key, "v")
    result = await run(state, action="list")
    assert result.text == "a\nb"
    assert result.details == {"keys": ["a", "b"]}


async def test_an_empty_list_says_so_with_or_without_a_prefix() -> None:
    state = SharedState()
    assert (await run(state, action="list")).text == "No keys."
    await state.set("a", "v")
    assert (await run(state, action="list", prefix="z")).text == "No keys start with 'z'."


async def test_a_missing_key_names_no_keys_in_an_empty_store() -> None:
    assert await refusal(SharedState(), action="get", key="k") == (
        "shared_state get: no value under 'k' (keys: none)"
    )


async def test_a_missing_key_names_the_first_20_keys() -> None:
    state = SharedState()
    keys = [f"k{index:02d}" for index in range(21)]
    for key in keys:
        await state.set(key, "v")
    assert await refusal(state, action="get", key="x") == (
        f"shared_state get: no value under 'x' (keys: {', '.join(keys[:20])})"
    )


async def test_an_offset_at_the_end_is_refused_and_one_before_it_is_read() -> None:
    state = SharedState()
    await state.set("k", "abc")
    assert await refusal(state, action="get", key="k", offset=3) == (
        "shared_state get: offset 3 is past the end (3 characters)"
    )
    last = await run(state, action="get", key="k", offset=2)
    assert last.text == "c\n[characters 2-3 of 3]"
    assert last.details == {"key": "k", "offset": 2, "end": 3, "total": 3}


async def test_a_whole_value_comes_with_its_details_and_no_note() -> None:
    state = SharedState()
    await state.set("k", "abc")
    result = await run(state, action="get", key="k")
    assert result.text == "abc"
    assert result.details == {"key": "k", "offset": 0, "end": 3, "total": 3}


async def test_a_first_page_says_where_to_go_on() -> None:
    state = SharedState()
    await state.set("k", "abcdefghij")
    result = await run(state, action="get", key="k", max_chars=3)
    assert result.text == "abc\n[characters 0-3 of 10; get again with offset=3 for more]"
    assert result.details == {"key": "k", "offset": 0, "end": 3, "total": 10}


async def test_remove_answers_in_these_words() -> None:
    state = SharedState()
    await state.set("k", "v")
    assert (await run(state, action="remove", key="k")).text == "Removed 'k'."
    assert await refusal(state, action="remove", key="k") == (
        "shared_state remove: no value under 'k'"
    )


async def test_a_store_refusal_names_the_action() -> None:
    assert await refusal(SharedState(), action="set", key="k", value="a\ud800") == (
        "shared_state set: the value for 'k' contains a lone surrogate '\\ud800' at character "
        "1, which is not valid text; remove or replace it"
    )


def test_a_tool_of_the_same_name_is_kept_and_no_second_one_added() -> None:
    state = SharedState()
    own = SharedStateTool(SharedState())
    assert with_shared_state_tool([own], state) == [own]
    [added] = with_shared_state_tool([], state)
    assert isinstance(added, SharedStateTool)
    assert added.state is state
