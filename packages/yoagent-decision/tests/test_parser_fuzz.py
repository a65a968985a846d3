"""Any JSON at all, read by any backend's parser and then checked, ends in an evaluation or
a DecisionError — never another exception (hypothesis)."""

from __future__ import annotations

import contextlib
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yoagent.decision import Choice, DecisionError, Noul, Request, Score, parse_systemone_response
from yoagent.decision._check import check_complete
from yoagent.decision._logprobs import ChatCompletion, label_distribution
from yoagent.decision._openai import parse_decisions_response

REQUEST = Request(
    "m", "s", {"n": Noul("n?"), "c": Choice("c?", ["a", "b"]), "s": Score("s?", ["lo", "hi"])}
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(["noul", "choice", "score", "predicate", "refusal", "a", "b", "0", "1", "n"]),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "answers",
                    "n",
                    "c",
                    "s",
                    "type",
                    "noul",
                    "choice",
                    "probabilities",
                    "score",
                    "legend",
                    "confidence",
                    "usage",
                    "input_tokens",
                    "model",
                    "result",
                    "success",
                    "errors",
                    "name",
                    "probability",
                    "value",
                    "a",
                    "b",
                    "0",
                    "1",
                ]
            ),
            children,
            max_size=6,
        ),
    ),
    max_leaves=25,
)


def settles(read: Any, body: Any) -> None:
    with contextlib.suppress(DecisionError):
        check_complete(REQUEST, read(body, REQUEST))


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_systemone_bodies_settle(body: Any) -> None:
    """SystemOne (with Cloudflare's envelope): an evaluation or a DecisionError."""
    settles(parse_systemone_response, body)


@settings(max_examples=300, deadline=None)
@given(json_values)
def test_openai_decisions_bodies_settle(body: Any) -> None:
    """OpenAI Decisions: an evaluation or a DecisionError."""
    settles(parse_decisions_response, body)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["A", " b", "C", "<think>", "x"]), st.floats(-50, 0))))
def test_label_distributions_are_distributions_or_errors(top: list[tuple[str, float]]) -> None:
    """Read from any top logprobs, a distribution sums to 1 with no zero, or it is refused."""
    body = {
        "choices": [
            {
                "logprobs": {
                    "content": [{"top_logprobs": [{"token": t, "logprob": p} for t, p in top]}]
                }
            }
        ]
    }
    try:
        probs = label_distribution(
            ChatCompletion.model_validate(body).first_token(), ["A", "B", "C"]
        )
    except DecisionError:
        return
    assert abs(sum(probs) - 1) < 1e-9 and all(0 < p < 1 for p in probs)
