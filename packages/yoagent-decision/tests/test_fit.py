"""Argument fitting (hypothesis): what the gate sends always fits, cuts only long strings,
lists every cut by a pointer that resolves, and never cuts a full view."""

from __future__ import annotations

import json
import logging
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yoagent.decision import Capabilities
from yoagent.decision._fit import MIN_CAP, FitLimits, Fitted, TooLarge, fit_arguments
from yoagent.decision._questions import estimate_tokens

long_text = st.tuples(
    st.sampled_from(["a", "é", "\n", '"', "😀", "ab "]), st.integers(300, 3_000)
).map(lambda pair: pair[0] * pair[1])
text = st.one_of(long_text, st.text(max_size=12))
keys = st.text(alphabet="ab/~é", min_size=1, max_size=4)
values = st.recursive(
    st.one_of(text, st.integers(), st.booleans(), st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(keys, children, max_size=4)
    ),
    max_leaves=12,
)
arguments = st.dictionaries(keys, values, min_size=1, max_size=5)
limits = st.builds(
    FitLimits,
    max_argument_chars=st.integers(1_000, 12_000),
    capabilities=st.builds(
        Capabilities,
        max_request_tokens=st.none() | st.integers(500, 5_000),
        max_state_question_tokens=st.none() | st.integers(500, 5_000),
    ),
    question_tokens=st.just((60, 20)),
)


def resolve(document: Any, pointer: str) -> Any:
    """RFC 6901, written independently of the code under test."""
    for token in pointer.split("/")[1:]:
        token = token.replace("~1", "/").replace("~0", "~")
        document = document[int(token)] if isinstance(document, list) else document[token]
    return document


def strings(value: Any, pointer: str = "") -> dict[str, str]:
    if isinstance(value, str):
        return {pointer: value}
    if isinstance(value, dict):
        found: dict[str, str] = {}
        for key, item in value.items():
            escaped = key.replace("~", "~0").replace("/", "~1")
            found.update(strings(item, f"{pointer}/{escaped}"))
        return found
    if isinstance(value, list):
        found = {}
        for index, item in enumerate(value):
            found.update(strings(item, f"{pointer}/{index}"))
        return found
    return {}


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(arguments, limits, st.booleans())
def test_what_is_sent_always_fits_and_lists_every_cut(
    caplog: pytest.LogCaptureFixture,
    args: dict[str, Any],
    fit: FitLimits,
    protect_first: bool,
) -> None:
    """A fitted call is within both limits; each omitted pointer names a string longer than
    the smallest cap, now shortened; every other string is unchanged; full views are whole;
    the sizes the search predicted are the sizes built."""
    caplog.clear()
    full_views = (
        [f"/{next(iter(args)).replace('~', '~0').replace('/', '~1')}"] if protect_first else []
    )
    result = fit_arguments("do the thing", "tool", args, fit, full_views)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    if isinstance(result, TooLarge):
        return
    assert isinstance(result, Fitted)
    sent = result.state["tool_call"]["arguments"]
    assert (
        len(json.dumps(sent, ensure_ascii=False, separators=(",", ":"))) <= fit.max_argument_chars
    )
    tokens = estimate_tokens(result.state)
    caps = fit.capabilities
    if caps.max_request_tokens is not None:
        assert tokens + sum(fit.question_tokens) <= caps.max_request_tokens
    if caps.max_state_question_tokens is not None:
        assert tokens + max(fit.question_tokens) <= caps.max_state_question_tokens
    before, after = strings(args), strings(sent)
    assert before.keys() == after.keys()
    for pointer, original in before.items():
        if pointer in result.omitted:
            assert len(original) > MIN_CAP and "[truncated" in resolve(sent, pointer)
            assert not any(pointer == v or pointer.startswith(v + "/") for v in full_views)
        else:
            assert after[pointer] == original
    assert list(result.omitted) == [p for p in before if p in result.omitted]  # document order


def test_arguments_that_fit_are_sent_whole() -> None:
    fit = FitLimits(100, Capabilities(), (10,))
    result = fit_arguments("r", "t", {"a": "b"}, fit)
    assert isinstance(result, Fitted) and result.omitted == ()
    assert result.state == {
        "user_request": "r",
        "tool_call": {"tool": "t", "arguments": {"a": "b"}},
    }


def test_a_long_user_request_keeps_its_head_and_tail() -> None:
    fit = FitLimits(100, Capabilities(), (10,))
    result = fit_arguments("start " + "m" * 20_000 + " end", "t", {}, fit)
    assert isinstance(result, Fitted)
    request = result.state["user_request"]
    assert request.startswith("start ") and request.endswith(" end") and len(request) < 8_100


def test_a_cut_is_kept_only_when_it_shrinks_the_state_under_the_token_limit() -> None:
    # Only the token limit binds: cutting must make the whole state smaller, entry included.
    fit = FitLimits(10**6, Capabilities(max_state_question_tokens=600), (10,))
    args = {"a": "x" * 2_000, "b": "y" * 410}
    result = fit_arguments("r", "t", args, fit)
    assert isinstance(result, Fitted) and result.omitted == ("/a",)
    assert result.state["tool_call"]["arguments"]["b"] == "y" * 410


def test_the_denial_reports_the_shortest_view() -> None:
    fit = FitLimits(1_000, Capabilities(max_request_tokens=300), (10,))
    result = fit_arguments("r", "t", {f"k{i}": "v" * 900 for i in range(6)}, fit)
    assert isinstance(result, TooLarge)
    assert result.argument_chars < 6 * 900
    assert result.state_problem is not None and "over 300 per request" in result.state_problem
    assert math.isfinite(result.argument_chars)
