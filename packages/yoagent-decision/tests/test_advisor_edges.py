"""Advisor's exact edges: how it reads the model's answers at each threshold, which tool
lists it asks about, when its memo is reused, the questions it sends word for word, its
settings' bounds and what it logs. (Added from mutation testing: each pins a behaviour a
surviving mutant changed.)"""

from __future__ import annotations

import logging

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

TOOLS = [Item(f"tool{i}", f"does thing {i}") for i in range(45)]


def answering(
    *,
    needed: float = 0.9,
    skill: dict[str, float] | None = None,
    skill_confidence: float | None = None,
    tools: dict[str, float] | None = None,
    capabilities: Capabilities | None = None,
) -> MockBackend:
    """A backend answering the advisor's questions: ``skill`` and ``tools`` give some
    options' probabilities, the rest share what is left."""

    def spread(options: tuple[str, ...], given: dict[str, float]) -> dict[str, float]:
        rest = (1 - sum(given.values())) / (len(options) - len(given))
        return {o: given.get(o, rest) for o in options}

    def respond(request: Request) -> Evaluation:
        answers: dict[str, NoulAnswer | ChoiceAnswer] = {}
        if "skill" in request.questions:
            options = request.questions["skill"].names  # type: ignore[union-attr]
            answers["skill"] = ChoiceAnswer.of(
                spread(options, skill or {"deploy": 0.9}), confidence=skill_confidence
            )
            answers["skill_needed"] = NoulAnswer.of(needed)
        if "tools" in request.questions:
            options = request.questions["tools"].names  # type: ignore[union-attr]
            answers["tools"] = ChoiceAnswer.of(spread(options, tools or {}))
        return Evaluation(model="m", answers=answers)

    return MockBackend(respond, capabilities=capabilities)


def advisor(backend: MockBackend, **options: object) -> Advisor:
    return Advisor(model=DecisionModel.from_backend(backend, "m"), **options)  # type: ignore[arg-type]


SKILL_NOTE = (
    "Relevant to the current request: deploy. Ignore this if it does not fit what the user "
    "actually asked for."
)


# -- reading the answers at each threshold ---------------------------------------------------


async def test_a_skill_exactly_at_both_thresholds_is_named() -> None:
    backend = answering(needed=0.3, skill={"deploy": 0.8}, skill_confidence=0.5)
    assert await advisor(backend, skills=SKILLS).advise("ship it") == SKILL_NOTE
    unsure = answering(needed=0.3, skill={"deploy": 0.8}, skill_confidence=0.49)
    assert await advisor(unsure, skills=SKILLS).advise("ship it") is None
    unneeded = answering(needed=0.29, skill={"deploy": 0.8}, skill_confidence=0.5)
    assert await advisor(unneeded, skills=SKILLS).advise("ship it") is None


async def test_a_tool_exactly_at_the_least_probability_is_named() -> None:
    backend = answering(tools={"tool3": 0.1, "tool4": 0.099})
    assert await advisor(backend).advise("x", TOOLS) == (
        "Tools likely relevant to the current request: tool3. This is a hint only; every tool "
        "remains available."
    )


async def test_both_hints_are_one_line_each() -> None:
    backend = answering(tools={"tool3": 0.9})
    assert await advisor(backend, skills=SKILLS).advise("x", TOOLS) == (
        f"{SKILL_NOTE}\nTools likely relevant to the current request: tool3. This is a hint "
        "only; every tool remains available."
    )


# -- which tool lists are asked about ---------------------------------------------------------


async def test_two_tools_are_enough_when_the_minimum_allows() -> None:
    backend = answering(tools={"tool1": 0.9})
    assert await advisor(backend, tool_hint_min_tools=0).advise("x", TOOLS[:2]) is not None
    assert list(backend.requests[0].questions) == ["tools"]
    one = answering()
    assert await advisor(one, tool_hint_min_tools=0).advise("x", TOOLS[:1]) is None
    assert one.request_count == 0  # a Choice needs two options


async def test_as_many_tools_as_the_backend_takes_options_are_asked_about() -> None:
    backend = answering(tools={"tool1": 0.9}, capabilities=Capabilities(max_choice_options=45))
    assert await advisor(backend).advise("x", TOOLS) is not None
    assert backend.requests[0].questions["tools"].names == tuple(t.name for t in TOOLS)  # type: ignore[union-attr]
    over = answering(capabilities=Capabilities(max_choice_options=44))
    assert await advisor(over).advise("x", TOOLS) is None
    assert over.request_count == 0


async def test_the_memo_follows_the_tools_only_when_they_are_asked_about() -> None:
    backend = answering(tools={"tool1": 0.9})
    adv = advisor(backend)
    await adv.advise("x", TOOLS)
    await adv.advise("x", TOOLS[:44])  # other tools: asked again
    assert backend.request_count == 2
    skills_only = answering()
    adv = advisor(skills_only, skills=SKILLS)
    await adv.advise("x", TOOLS[:3])
    await adv.advise("x", TOOLS[:5])  # too few tools to ask about either way: memoized
    assert skills_only.request_count == 1


# -- what is sent -------------------------------------------------------------------------------


async def test_the_questions_word_for_word() -> None:
    backend = answering(tools={"tool1": 0.9})
    await advisor(backend, skills=SKILLS).advise("x", TOOLS)
    questions = backend.requests[0].questions
    skill, needed, tools = questions["skill"], questions["skill_needed"], questions["tools"]
    assert skill.instructions == (
        "Which of these skills, if any, is the right one to load to help with the user's latest "
        "request in `request`?"
    )
    assert skill.items[-1] == ("none", "No listed skill fits the request.")  # type: ignore[union-attr]
    assert needed.instructions == (
        "Would a careful expert handling `request` consult a specific documented procedure or "
        "set of commands, rather than answering from general understanding?"
    )
    assert tools.instructions == (
        "Which of these tools will the assistant most likely need next to carry out `request`?"
    )


async def test_a_long_request_is_cut_in_the_middle() -> None:
    backend = answering()
    await advisor(backend, skills=SKILLS).advise("a" * 5_000 + "b" * 4_000)
    sent = backend.requests[0].state["request"]  # type: ignore[index]
    assert sent == "a" * 4_000 + "\n[truncated 1000 chars]\n" + "b" * 4_000


async def test_long_descriptions_are_cut_at_300_characters() -> None:
    backend = answering(tools={"tool1": 0.9})
    skills = [Item("deploy", "d" * 300), Item("review", "r" * 301)]
    tools = [Item("tool0", "t" * 301), *TOOLS[1:]]
    await advisor(backend, skills=skills).advise("x", tools)
    questions = backend.requests[0].questions
    assert dict(questions["skill"].items)["deploy"] == "d" * 300  # type: ignore[union-attr]
    assert dict(questions["skill"].items)["review"] == "r" * 300 + "…"  # type: ignore[union-attr]
    assert dict(questions["tools"].items)["tool0"] == "t" * 300 + "…"  # type: ignore[union-attr]


async def test_a_skill_listed_twice_is_offered_once_with_its_first_description() -> None:
    backend = answering()
    twice = [Item("deploy", "first"), Item("deploy", "second"), Item("review", "r")]
    await advisor(backend, skills=twice).advise("x")
    items = backend.requests[0].questions["skill"].items  # type: ignore[union-attr]
    assert [name for name, _ in items] == ["deploy", "review", "none"]
    assert items[0] == ("deploy", "first")


# -- settings and logs ------------------------------------------------------------------------


def test_bad_settings_are_refused_by_name() -> None:
    backend = answering()
    for name in ("skill_need_threshold", "skill_confidence_threshold", "tool_hint_min_probability"):
        with pytest.raises(ValueError, match=rf"^{name} must be a probability in \[0, 1\]"):
            advisor(backend, **{name: 1.5})
    with pytest.raises(ValueError, match="timeout") as zero:
        advisor(backend, timeout=0)
    assert str(zero.value) == "the advisor's timeout must be positive, got 0"
    assert advisor(backend, timeout=0.01).timeout == 0.01


async def test_an_advisor_within_bounds_logs_nothing(caplog: pytest.LogCaptureFixture) -> None:
    backend = answering(tools={"tool1": 0.9})
    fifty = [Item(f"skill{i}", "s") for i in range(50)]
    small = answering(tools={"tool1": 0.9}, capabilities=Capabilities(max_choice_options=50))
    with caplog.at_level(logging.INFO, logger="yoagent.decision"):
        await advisor(backend, skills=SKILLS).advise("x", TOOLS)
        # too many skills, but the skill hint is off anyway: nothing to warn about
        await advisor(small, skills=fifty, skill_hint=False).advise("y", TOOLS)
    assert caplog.records == []
    assert small.request_count == 1


async def test_too_many_skills_and_a_missing_key_each_warn_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    skills = [Item(f"skill{i}", "s") for i in range(50)]
    backend = MockBackend(capabilities=Capabilities(max_choice_options=50))
    for _ in range(2):
        backend.push_error(DecisionError.missing_api_key("DECIDE_KEY"))
    adv = advisor(backend, skills=skills)
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        assert await adv.advise("one", TOOLS) is None
        assert await adv.advise("two", TOOLS) is None
    assert [r.getMessage() for r in caplog.records] == [
        "decision advisor: skill hint off, 50 skills exceed the backend's 49 options",
        "decision advisor off: the decision model's API key is missing (set DECIDE_KEY)",
    ]
    assert [list(r.questions) for r in backend.requests] == [["tools"], ["tools"]]


async def test_a_failed_request_is_logged_with_its_error(caplog: pytest.LogCaptureFixture) -> None:
    backend = MockBackend().push_error(DecisionError.http(500, "down"))
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        assert await advisor(backend, skills=SKILLS).advise("x") is None
    assert [r.getMessage() for r in caplog.records] == [
        "decision advisor skipped this request: decision model returned HTTP 500: down"
    ]
