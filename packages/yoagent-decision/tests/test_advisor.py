"""Advisor: one batched request per user request, a skill hint and a tool hint, never a block."""

from __future__ import annotations

import logging
import time

import anyio
import pytest
from decision_helpers import SKILLS, Item

from yoagent.decision import (
    Advisor,
    Capabilities,
    ChoiceAnswer,
    DecisionError,
    DecisionModel,
    Evaluation,
    MockBackend,
    NoulAnswer,
    Request,
)

TOOLS = [Item(f"tool{i}", f"does thing {i}" if i else "") for i in range(45)]


def scripted(
    skill: str = "deploy",
    needed: float = 0.9,
    skill_p: float = 0.9,
    tool_ps: dict[str, float] | None = None,
    capabilities: Capabilities | None = None,
) -> MockBackend:
    def respond(request: Request) -> Evaluation:
        answers = {}
        if "skill" in request.questions:
            options = request.questions["skill"].names  # type: ignore[union-attr]
            rest = (1 - skill_p) / (len(options) - 1)
            answers["skill"] = ChoiceAnswer.of(
                {o: skill_p if o == skill else rest for o in options}
            )
            answers["skill_needed"] = NoulAnswer.of(needed)
        if "tools" in request.questions:
            options = request.questions["tools"].names  # type: ignore[union-attr]
            ps = tool_ps or {}
            rest = (1 - sum(ps.values())) / (len(options) - len(ps))
            answers["tools"] = ChoiceAnswer.of({o: ps.get(o, rest) for o in options})
        return Evaluation(model="m", answers=answers)

    return MockBackend(respond, capabilities=capabilities)


def advisor(backend: MockBackend, **options: object) -> Advisor:
    return Advisor(model=DecisionModel.from_backend(backend, "m"), **options)  # type: ignore[arg-type]


async def test_without_skills_and_with_few_tools_nothing_is_asked() -> None:
    backend = scripted()
    assert await advisor(backend).advise("deploy it", TOOLS[:39]) is None
    assert backend.request_count == 0


async def test_a_fitting_skill_is_named_once_per_request() -> None:
    backend = scripted()
    adv = advisor(backend, skills=SKILLS)
    note = await adv.advise("ship v2 to prod")
    assert note == (
        "Relevant to the current request: deploy. Ignore this if it does not fit what the user "
        "actually asked for."
    )
    assert await adv.advise("ship v2 to prod") == note
    assert backend.request_count == 1  # memoized
    request = backend.requests[0]
    assert request.state == {"request": "ship v2 to prod"}
    assert request.questions["skill"].names == ("deploy", "review", "none")  # type: ignore[union-attr]
    await adv.advise("now review PR 7")
    assert backend.request_count == 2


@pytest.mark.parametrize(
    ("skill", "needed", "skill_p"),
    [("none", 0.9, 0.9), ("deploy", 0.29, 0.9), ("deploy", 0.9, 0.5)],
)
async def test_no_skill_is_named_when_unneeded_unsure_or_none(
    skill: str, needed: float, skill_p: float
) -> None:
    # skill_p 0.5 over 3 options is confidence (3·0.5 − 1)/2 = 0.25, under 0.5
    assert await advisor(scripted(skill, needed, skill_p), skills=SKILLS).advise("x") is None


async def test_a_skill_called_none_moves_the_none_option_aside() -> None:
    backend = scripted(skill="no_skill")
    await advisor(backend, skills=[Item("none", "a skill named none"), *SKILLS]).advise("x")
    assert backend.requests[0].questions["skill"].names[-1] == "no_skill"  # type: ignore[union-attr]


async def test_with_many_tools_the_likeliest_are_hinted() -> None:
    backend = scripted(tool_ps={"tool3": 0.5, "tool7": 0.3, "tool9": 0.12, "tool11": 0.0})
    note = await advisor(backend).advise("x", TOOLS)
    assert note == (
        "Tools likely relevant to the current request: tool3, tool7, tool9. This is a hint "
        "only; every tool remains available."
    )
    described = dict(backend.requests[0].questions["tools"].items)  # type: ignore[union-attr]
    assert described["tool0"] == "tool0" and described["tool1"] == "does thing 1"


async def test_both_hints_come_from_one_request() -> None:
    backend = scripted(tool_ps={"tool3": 0.9})
    note = await advisor(backend, skills=SKILLS).advise("x", TOOLS)
    assert note is not None and note.count("\n") == 1
    assert backend.request_count == 1


async def test_failures_add_nothing_and_warn(caplog: pytest.LogCaptureFixture) -> None:
    backend = MockBackend().push_error(DecisionError.http(500, "down"))
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        assert await advisor(backend, skills=SKILLS).advise("x") is None
    assert "decision advisor skipped this request" in caplog.text


async def test_a_missing_key_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    adv = Advisor(model=DecisionModel.jev(), skills=SKILLS)
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        assert await adv.advise("one") is None
        assert await adv.advise("two") is None
    assert caplog.text.count("set TYPESAFE_API_KEY") == 1


async def test_the_advisor_gives_up_after_its_timeout() -> None:
    async def slow(request: Request) -> Evaluation:
        await anyio.sleep(30)
        raise AssertionError("unreachable")

    started = time.monotonic()
    adv = advisor(MockBackend(slow), skills=SKILLS, timeout=0.2)
    assert await adv.advise("x") is None
    assert time.monotonic() - started < 5


async def test_more_skills_than_options_turns_the_skill_hint_off() -> None:
    small = scripted(capabilities=Capabilities(max_choice_options=2))
    assert await advisor(small, skills=SKILLS).advise("x") is None
    assert small.request_count == 0


async def test_no_user_request_asks_nothing() -> None:
    backend = scripted()
    assert await advisor(backend, skills=SKILLS).advise(None) is None
    assert backend.request_count == 0
