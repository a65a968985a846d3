"""The SystemOne wire's exact edges: what a server's legend, confidence and level texts
become, usage read from the answers when the top-level one is unusable, what a response
that cannot be read was billed, and every refusal word for word (a body or Cloudflare
``result`` that is not an object, an answer of the wrong shape). (Added from mutation
testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

from typing import Any

import pytest

from yoagent.core import Usage
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    Evaluation,
    Noul,
    Request,
    Score,
    parse_systemone_response,
)

REQUEST = Request(
    "jev-latest",
    "s",
    {
        "urgent": Noul("Urgent?"),
        "team": Choice("Team?", ["billing", "sales"]),
        "mood": Score("Mood?", ["calm", {"level": "très fâché"}]),
    },
)
URGENT: dict[str, Any] = {"type": "noul", "noul": 0.9}
TEAM: dict[str, Any] = {"type": "choice", "probabilities": {"billing": 0.25, "sales": 0.75}}
MOOD: dict[str, Any] = {"type": "score", "probabilities": [0.1, 0.9]}


def read(body: Any) -> Evaluation:
    return parse_systemone_response(body, REQUEST)


def answers(**changed: Any) -> dict[str, Any]:
    return {"answers": {"urgent": URGENT, "team": TEAM, "mood": MOOD} | changed}


def refusal(body: Any) -> DecisionError:
    with pytest.raises(DecisionError) as caught:
        read(body)
    return caught.value


# -- what the server's answer becomes ---------------------------------------------------------


def test_a_level_that_is_not_text_is_shown_as_json_as_itself() -> None:
    mood = read(answers()).score("mood")
    assert mood is not None and mood.legend == ("calm", '{"level": "très fâché"}')


@pytest.mark.parametrize(
    ("legend", "expected"),
    [
        ({"0": "low", "1": {"n": 2}}, ("low", '{"n": 2}')),
        ({"1": "high", "2": "past the end", "x": "not a level"}, ("calm", "high")),
        (["low", "high"], ("low", "high")),
        (["only one"], ("calm", '{"level": "très fâché"}')),
    ],
)
def test_the_servers_legend_names_the_levels_it_covers(
    legend: dict[str, Any] | list[Any], expected: tuple[str, str]
) -> None:
    mood = read(answers(mood={**MOOD, "legend": legend})).score("mood")
    assert mood is not None and mood.legend == expected


def test_a_scores_confidence_from_the_server_is_kept() -> None:
    mood = read(answers(mood={**MOOD, "confidence": 0.3})).score("mood")
    assert mood is not None and mood.confidence == 0.3


def test_a_response_with_answers_is_read_whatever_else_it_holds() -> None:
    body = answers() | {"result": "a field of its own", "success": False}
    assert read(body).p_true("urgent") == 0.9


# -- usage ------------------------------------------------------------------------------------


def test_usage_without_output_tokens_is_zero_output() -> None:
    body = answers() | {"usage": {"input_tokens": 12}}
    assert read(body).usage == Usage(input=12, output=0)


def test_an_unusable_top_level_usage_falls_back_to_the_answers_tokens() -> None:
    body = answers(urgent={**URGENT, "input_tokens": 7}, team={**TEAM, "input_tokens": 5})
    body["usage"] = {"input_tokens": "many"}
    assert read(body).usage == Usage(input=12)


def test_answers_reporting_zero_tokens_report_usage() -> None:
    body = answers(urgent={**URGENT, "input_tokens": 0})
    assert read(body).usage == Usage(input=0)
    assert read(answers()).usage is None


def test_an_unreadable_answer_carries_what_the_response_was_billed() -> None:
    body = answers(team={**TEAM, "probabilities": None}) | {
        "model": "jev-1.13.0",
        "usage": {"input_tokens": 30, "output_tokens": 2},
    }
    error = refusal(body)
    assert error.billed == Evaluation(model="jev-1.13.0", usage=Usage(input=30, output=2))


# -- refusals, word for word ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (None, "the response is null, not an object"),
        ([1], "the response is an array, not an object"),
        ("x", "the response is text, not an object"),
        (True, "the response is a boolean, not an object"),
        (5, "the response is a number, not an object"),
        ({"result": 5}, "Cloudflare's `result` is a number, not a SystemOne response"),
        ({"result": None}, "Cloudflare's `result` is null, not a SystemOne response"),
        ({"success": False}, "Cloudflare reported failure: (none given)"),
        ({"model": "jev"}, "the response has no `answers` object"),
    ],
)
def test_a_body_that_is_not_a_response(body: Any, detail: str) -> None:
    assert refusal(body).detail == detail


def test_a_result_that_is_text_is_shown_cut() -> None:
    error = refusal({"result": "é" + "x" * 300})
    assert error.detail == (
        "Cloudflare's `result` is text, not a SystemOne response: " + "é" + "x" * 198 + "…"
    )


@pytest.mark.parametrize(
    ("changed", "detail"),
    [
        (
            {"urgent": "yes"},
            "answers.urgent: Input should be a valid dictionary or instance of SystemOneAnswer",
        ),
        ({"urgent": {"noul": "high"}}, "answers.urgent.noul: Input should be a valid number"),
        (
            {"team": {"probabilities": [0.5, 0.5]}},
            "answers.team.probabilities: missing or not an object",
        ),
        (
            {"team": {"probabilities": {"bill": 1.0}}},
            "answers.team.probabilities: 'bill' is not one of the options",
        ),
        (
            {"mood": {"probabilities": {"0": 0.5, "7": 0.5}}},
            "answers.mood.probabilities: '7' is not a level index below 2",
        ),
        (
            {"mood": {"probabilities": [1.0]}},
            "answers.mood.probabilities: missing, or not one entry per level",
        ),
    ],
)
def test_an_answer_of_the_wrong_shape_names_its_place(changed: dict[str, Any], detail: str) -> None:
    error = refusal(answers(**changed))
    assert (error.kind, error.detail) == (DecisionErrorKind.BAD_RESPONSE, detail)


def test_a_probability_of_the_wrong_shape_names_the_whole_path() -> None:
    error = refusal(answers(mood={"probabilities": {"0": "high", "1": 0.5}}))
    assert error.detail.startswith("answers.mood.probabilities.")
    assert error.detail.endswith(".0: Input should be a valid number")
