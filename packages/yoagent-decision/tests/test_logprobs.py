"""The logprobs backend on the wire (respx): prompts, label distributions, concurrency, spend."""

from __future__ import annotations

import json
import math
from typing import Any

import anyio
import httpx
import pytest
import respx
from decision_helpers import NO_RETRY, SECRET, SpendLog

from yoagent.core import CostConfig, Usage
from yoagent.decision import (
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    LogprobBackend,
    Noul,
    Score,
    is_loopback_url,
    recording_decision_spend,
)
from yoagent.decision._logprobs import TopLogprob, label_distribution

URL = "http://127.0.0.1:8080/v1/chat/completions"


def completion(top: dict[str, float], *, usage: tuple[int, int] | None = (50, 1)) -> httpx.Response:
    """A one-token completion whose first token's top logprobs are ``top`` (probabilities)."""
    body: dict[str, Any] = {
        "model": "llama-3.1-8b-instruct-q4",
        "choices": [
            {
                "message": {"role": "assistant", "content": next(iter(top))},
                "logprobs": {
                    "content": [
                        {
                            "token": next(iter(top)),
                            "logprob": math.log(next(iter(top.values()))),
                            "top_logprobs": [
                                {"token": token, "logprob": math.log(p)} for token, p in top.items()
                            ],
                        }
                    ]
                },
            }
        ],
    }
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    return httpx.Response(200, json=body)


def model(**options: Any) -> DecisionModel:
    backend = LogprobBackend("http://127.0.0.1:8080", **options).with_retry(NO_RETRY)
    return DecisionModel.from_logprob_backend(backend, "llama")


def tops(entries: dict[str, float]) -> list[TopLogprob]:
    return [TopLogprob(token=token, logprob=math.log(p)) for token, p in entries.items()]


# --- the request ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "url"),
    [
        ("http://localhost:8080", "http://localhost:8080/v1/chat/completions"),
        ("http://localhost:8080/", "http://localhost:8080/v1/chat/completions"),
        ("https://api.groq.com/openai/v1", "https://api.groq.com/openai/v1/chat/completions"),
        ("http://h/v1/chat/completions/", "http://h/v1/chat/completions"),
        # A query stays the query: the path goes before it.
        ("http://localhost:8080?key=k", "http://localhost:8080/v1/chat/completions?key=k"),
        (
            " https://gw.example/openai/v1/?api-version=2&x=1 ",
            "https://gw.example/openai/v1/chat/completions?api-version=2&x=1",
        ),
        ("http://h/v1/chat/completions/?a=/b", "http://h/v1/chat/completions?a=/b"),
    ],
)
def test_the_endpoint_follows_the_base_url(base: str, url: str) -> None:
    assert LogprobBackend(base).endpoint_url() == url


@respx.mock
async def test_a_noul_is_one_completion_of_one_token_with_labels_a_and_b(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)  # never read
    route = respx.post(URL).mock(return_value=completion({"A": 0.8, "B": 0.2}))
    answer = await model().noul(
        {"cmd": "rm -rf /"}, "Is it destructive?", if_true="deletes", if_false="reads"
    )
    sent = route.calls[0].request
    assert "authorization" not in sent.headers
    body = json.loads(sent.content)
    assert body["model"] == "llama" and body["max_tokens"] == 1 and body["temperature"] == 0
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    assert [m["role"] for m in body["messages"]] == ["user"]
    prompt = body["messages"][0]["content"]
    assert '"cmd": "rm -rf /"' in prompt and "Question: Is it destructive?" in prompt
    assert "A: Yes — deletes\nB: No — reads" in prompt and "one of A, B" in prompt
    assert answer.p_true == pytest.approx(0.8)


@respx.mock
async def test_choice_and_score_labels() -> None:
    route = respx.post(URL).mock(
        side_effect=[completion({"B": 0.9, "A": 0.1}), completion({"2": 0.6, "1": 0.4})]
    )
    choice = await model().choice("s", "Which?", {"red": None, "green": "the go colour"})
    score = await model().score("s", "How much?", ["none", "some", "lots"])
    prompts = [json.loads(call.request.content)["messages"][0]["content"] for call in route.calls]
    assert "A: red\nB: green — the go colour" in prompts[0]
    assert "0: none\n1: some\n2: lots" in prompts[1] and "lowest first" in prompts[1]
    assert choice.choice == "green" and choice.probability("green") == pytest.approx(0.9, abs=1e-6)
    assert score.level == 2 and score.score == pytest.approx(0.4 + 2 * 0.6, abs=1e-6)


@respx.mock
async def test_extra_body_is_deep_merged_and_the_core_fields_win() -> None:
    route = respx.post(URL).mock(return_value=completion({"A": 0.9, "B": 0.1}))
    backend = LogprobBackend(
        "http://127.0.0.1:8080",
        extra_body={"max_tokens": 99, "chat_template_kwargs": {"foo": 1}, "seed": 7},
    ).with_thinking_disabled()
    await DecisionModel.from_logprob_backend(backend, "m").noul("s", "q?")
    body = json.loads(route.calls[0].request.content)
    assert body["max_tokens"] == 1 and body["seed"] == 7
    assert body["chat_template_kwargs"] == {"foo": 1, "enable_thinking": False}


@respx.mock
async def test_top_logprobs_is_at_least_the_number_of_labels() -> None:
    route = respx.post(URL).mock(return_value=completion({"A": 0.9, "B": 0.1}))
    backend = LogprobBackend("http://127.0.0.1:8080", top_logprobs=5, max_choice_options=26)
    options = [f"o{i}" for i in range(22)]
    answer = await DecisionModel.from_logprob_backend(backend, "m").choice("s", "Which?", options)
    assert json.loads(route.calls[0].request.content)["top_logprobs"] == 22
    assert answer.choice == "o0"  # the 20 labels absent from the top K share the rest
    assert 0 < answer.probability("o21") < 0.1


async def test_more_options_than_the_limit_are_invalid_before_sending() -> None:
    with respx.mock(assert_all_called=False) as router:
        with pytest.raises(DecisionError) as caught:
            await model().choice("s", "Which?", [f"o{i}" for i in range(21)])
        assert not router.calls
    assert caught.value.kind is DecisionErrorKind.INVALID
    with pytest.raises(ValueError, match="2 to 26"):
        LogprobBackend("http://h", max_choice_options=27)


@respx.mock
async def test_a_key_is_sent_only_when_given() -> None:
    route = respx.post(URL).mock(return_value=completion({"A": 0.9, "B": 0.1}))
    await model().with_api_key(SECRET).noul("s", "q?")
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"


# --- reading the distribution ---------------------------------------------------------------


def test_tokens_are_trimmed_upper_cased_and_summed() -> None:
    probs = label_distribution(tops({" A": 0.3, "a": 0.3, "B": 0.2, "\nb": 0.1}), ["A", "B"])
    assert probs[0] == pytest.approx(0.6 / 0.9) and probs[1] == pytest.approx(0.3 / 0.9)


def test_an_absent_label_gets_the_smallest_reported_probability() -> None:
    probs = label_distribution(tops({"A": 0.7, "B": 0.2, "x": 0.05}), ["A", "B", "C"])
    # C gets min(0.05 smallest reported, 1 - 0.95 unreported) = 0.05
    assert probs == pytest.approx([0.7 / 0.95, 0.2 / 0.95, 0.05 / 0.95])


def test_an_absent_label_is_never_zero_even_at_a_tiny_temperature() -> None:
    probs = label_distribution(tops({"A": 0.999999}), ["A", "B"], temperature=0.01)
    assert 0 < probs[1] < 1e-6 and probs[0] < 1.0


def test_a_reported_but_negligible_label_never_makes_an_answer_certain() -> None:
    probs = label_distribution(
        [TopLogprob(token="A", logprob=0.0), TopLogprob(token="B", logprob=-60.0)], ["A", "B"]
    )
    assert probs[0] < 1.0 and probs[1] == pytest.approx(1e-9)


def test_no_label_at_all_is_a_bad_response() -> None:
    with pytest.raises(DecisionError) as caught:
        label_distribution(tops({"<think>": 0.9, "Yes": 0.1}), ["A", "B"])
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert "none of the labels" in str(caught.value)


def test_labels_covering_too_little_mass_are_a_bad_response() -> None:
    entries = tops({"<think>": 0.6, "A": 0.3, "B": 0.1})
    with pytest.raises(DecisionError, match=r"cover only 0\.400"):
        label_distribution(entries, ["A", "B"])
    probs = label_distribution(entries, ["A", "B"], min_label_mass=0.3)
    assert probs == pytest.approx([0.75, 0.25])


@pytest.mark.parametrize("temperature", [0.5, 2.0])
def test_temperature_rescales_p_to_the_one_over_t(temperature: float) -> None:
    probs = label_distribution(tops({"A": 0.8, "B": 0.2}), ["A", "B"], temperature=temperature)
    a, b = 0.8 ** (1 / temperature), 0.2 ** (1 / temperature)
    assert probs == pytest.approx([a / (a + b), b / (a + b)])


@pytest.mark.parametrize("temperature", [0.0, -1.0, math.inf, math.nan])
def test_a_temperature_must_be_finite_and_positive(temperature: float) -> None:
    with pytest.raises(ValueError, match="finite and positive"):
        LogprobBackend("http://h", temperature=temperature)


@respx.mock
async def test_a_temperature_applies_to_answers() -> None:
    respx.post(URL).mock(return_value=completion({"A": 0.9, "B": 0.1}))
    answer = await model(temperature=2.0).noul("s", "q?")
    assert answer.p_true == pytest.approx(0.75)  # sqrt(.9) / (sqrt(.9) + sqrt(.1))


@respx.mock
async def test_a_thinking_first_token_fails_instead_of_answering() -> None:
    route = respx.post(URL).mock(return_value=completion({"<think>": 0.99, "A": 0.01}))
    with pytest.raises(DecisionError) as caught:
        await model().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert "answers.q" in str(caught.value) and route.call_count == 1


@pytest.mark.parametrize(
    "body",
    [
        {"choices": []},
        {"choices": [{"logprobs": None}]},
        {"choices": [{"logprobs": {"content": []}}]},
    ],
    ids=str,
)
@respx.mock
async def test_a_completion_without_logprobs_is_a_bad_response(body: dict[str, Any]) -> None:
    respx.post(URL).mock(return_value=httpx.Response(200, json=body))
    with pytest.raises(DecisionError) as caught:
        await model().noul("s", "q?")
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE


# --- several questions ----------------------------------------------------------------------


@respx.mock
async def test_questions_run_eight_at_a_time_and_merge_in_request_order() -> None:
    in_flight = 0
    most = 0
    eight = anyio.Event()  # the first answers wait for eight in flight, however slow the start

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        if in_flight == 8:
            eight.set()
        with anyio.move_on_after(10):
            await eight.wait()
        await anyio.sleep(0.05)  # time for a ninth to arrive, were the limit higher
        in_flight -= 1
        return completion({"A": 0.9, "B": 0.1}, usage=(10, 1))

    route = respx.post(URL).mock(side_effect=answer)
    questions = {f"q{i}": Noul(f"question {i}?") for i in range(12)}
    evaluation = await model().evaluate("s", questions)
    assert route.call_count == 12
    assert most == 8
    assert list(evaluation.answers) == list(questions)
    assert evaluation.usage == Usage(input=120, output=12)
    assert evaluation.model == "llama-3.1-8b-instruct-q4" and evaluation.cost_usd == 0.0


@respx.mock
async def test_a_failing_question_records_the_usage_already_billed() -> None:
    async def answer(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        if "question 1?" in prompt:
            await anyio.sleep(0.5)  # the others finish first
            return httpx.Response(500, text="boom")
        return completion({"A": 0.9, "B": 0.1}, usage=(10, 1))

    respx.post(URL).mock(side_effect=answer)
    spend = SpendLog()
    questions = {f"q{i}": Noul(f"question {i}?") for i in range(3)}
    with recording_decision_spend(spend), pytest.raises(DecisionError) as caught:
        await model().with_cost(CostConfig(input=1.0)).evaluate("s", questions)
    assert caught.value.kind is DecisionErrorKind.HTTP
    assert len(spend.records) == 1  # one attempt
    assert spend.usage == Usage(input=20, output=2)
    assert spend.records[0][1] == pytest.approx(20 / 1_000_000)


@respx.mock
async def test_a_timeout_part_way_records_the_usage_already_billed() -> None:
    async def answer(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        if "question 2?" in prompt:
            await anyio.sleep(30)
        return completion({"A": 0.9, "B": 0.1}, usage=(10, 1))

    respx.post(URL).mock(side_effect=answer)
    spend = SpendLog()
    questions = {f"q{i}": Noul(f"question {i}?") for i in range(3)}
    with recording_decision_spend(spend), pytest.raises(DecisionError) as caught:
        await model().with_timeout(0.5).evaluate("s", questions)
    assert caught.value.kind is DecisionErrorKind.TIMEOUT
    assert spend.usage == Usage(input=20, output=2)


@respx.mock
async def test_after_a_failure_no_new_question_starts() -> None:
    calls = 0

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        return httpx.Response(400, text="no")

    respx.post(URL).mock(side_effect=answer)
    backend = LogprobBackend("http://127.0.0.1:8080").with_retry(NO_RETRY)
    questions = {f"q{i}": Noul(f"q{i}?") for i in range(20)}
    with pytest.raises(DecisionError):
        await DecisionModel.from_logprob_backend(backend, "m").evaluate("s", questions)
    assert calls <= 8  # the first wave only


# --- locality and price ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://localhost:8080", True),
        ("http://LOCALHOST", True),
        ("http://models.localhost:1", True),
        ("http://127.0.0.1:1/v1", True),
        ("http://127.9.9.9", True),
        ("http://[::1]:9", True),
        ("http://0.0.0.0:8080", False),
        ("http://10.1.2.3:8000", False),
        ("https://api.openai.com/v1", False),
        ("http://localhost.evil.example", False),
    ],
)
def test_only_a_loopback_host_is_local(url: str, loopback: bool) -> None:
    assert is_loopback_url(url) is loopback
    assert DecisionModel.logprobs(url, "m").capabilities().local is loopback


@respx.mock
async def test_loopback_is_free_and_a_remote_host_unpriced() -> None:
    respx.post(URL).mock(return_value=completion({"A": 0.9, "B": 0.1}, usage=None))
    local = await DecisionModel.logprobs("http://127.0.0.1:8080", "m").evaluate(
        "s", {"q": Noul("q?")}
    )
    assert local.cost_usd == 0.0
    respx.post("http://10.0.0.5:8080/v1/chat/completions").mock(
        return_value=completion({"A": 0.9, "B": 0.1})
    )
    remote = DecisionModel.logprobs("http://10.0.0.5:8080", "m")
    assert (await remote.evaluate("s", {"q": Noul("q?")})).cost_usd is None
    priced = remote.with_cost(CostConfig(input=1.0))
    assert (await priced.evaluate("s", {"q": Noul("q?")})).cost_usd == pytest.approx(50 / 1e6)


def test_the_backend_reports_no_batching_and_eight_in_flight() -> None:
    capabilities = LogprobBackend("http://h").capabilities()
    assert capabilities.batching is False and capabilities.max_concurrent_requests == 8
    assert capabilities.max_choice_options == 20 and capabilities.max_score_levels == 10


@respx.mock
async def test_choice_and_score_kinds_in_one_split_request() -> None:
    async def answer(request: httpx.Request) -> httpx.Response:
        prompt = json.loads(request.content)["messages"][0]["content"]
        if "one of A, B, C" in prompt:
            return completion({"C": 0.7, "A": 0.2, "B": 0.1})
        if "one of 0, 1" in prompt:
            return completion({"1": 0.9, "0": 0.1})
        return completion({"B": 0.95, "A": 0.05})

    respx.post(URL).mock(side_effect=answer)
    evaluation = await model().evaluate(
        "s",
        {"n": Noul("n?"), "c": Choice("c?", ["x", "y", "z"]), "s": Score("s?", ["lo", "hi"])},
    )
    choice, score = evaluation.choice("c"), evaluation.score("s")
    assert evaluation.p_true("n") == pytest.approx(0.05)
    assert choice is not None and choice.choice == "z"
    assert score is not None and score.label == "hi"
