"""The one-call installers (own runs by default, the whole tree when asked) and
MockBackend's defaults (nothing scripted is an error, not an answer; neutral answers to
every kind; local). (Added from mutation testing: each pins a behaviour a surviving mutant
changed.)"""

from __future__ import annotations

import pytest

from yoagent.core import Extension, Usage
from yoagent.decision import (
    Advisor,
    Choice,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Evaluation,
    InputGuard,
    MockBackend,
    Noul,
    Request,
    Score,
    ScoreAnswer,
    ToolGate,
    with_decision_model,
    with_input_guard,
    with_tool_gate,
)


class Host:
    """Records which of core's two install methods was called, with what."""

    def __init__(self) -> None:
        self.installed: list[tuple[str, Extension]] = []

    def with_extension(self, extension: Extension) -> Host:
        self.installed.append(("own runs", extension))
        return self

    def with_tree_extension(self, extension: Extension) -> Host:
        self.installed.append(("tree", extension))
        return self


MODEL = DecisionModel.from_backend(MockBackend(), "judge")


@pytest.mark.parametrize("tree", [False, True])
def test_each_installer_covers_its_own_runs_unless_asked_for_the_tree(tree: bool) -> None:
    gate, guard = ToolGate(model=MODEL), InputGuard(model=MODEL)
    hosts = [
        with_tool_gate(Host(), gate, **({"tree": True} if tree else {})),
        with_input_guard(Host(), guard, **({"tree": True} if tree else {})),
        with_decision_model(Host(), MODEL, **({"tree": True} if tree else {})),
    ]
    where = "tree" if tree else "own runs"
    assert [host.installed[0][0] for host in hosts] == [where] * 3
    assert hosts[0].installed[0][1] is gate and hosts[1].installed[0][1] is guard
    assert isinstance(hosts[2].installed[0][1], Advisor)


async def test_a_mock_with_nothing_scripted_fails_rather_than_answering() -> None:
    backend = MockBackend()
    with pytest.raises(DecisionError) as caught:
        await backend.evaluate(Request("m", "s", {"q": Noul("q?")}))
    assert caught.value.kind is DecisionErrorKind.BAD_RESPONSE
    assert caught.value.detail == "MockBackend has no scripted answer for this request"
    assert backend.capabilities().local


async def test_a_neutral_mock_answers_every_kind_as_uncertainly_as_it_can() -> None:
    questions = {
        "n": Noul("q?"),
        "c": Choice("Which?", ["a", "b"]),
        "s": Score("How much?", ["none", {"some": 1}, "lots"]),
    }
    evaluation = await MockBackend(neutral=True).evaluate(Request("asked", "state", questions))
    assert (evaluation.model, evaluation.usage) == ("asked", Usage())
    assert evaluation.p_true("n") == 0.5
    assert evaluation.score("s") == ScoreAnswer.of([1 / 3] * 3, ["none", '{"some": 1}', "lots"])


async def test_a_scripted_mock_answers_in_order_then_in_the_asked_models_name() -> None:
    pushed = Evaluation(model="pushed")
    backend = MockBackend.nouls({"q": 0.2}).push(pushed)
    request = Request("asked", "s", {"q": Noul("q?")})
    assert await backend.evaluate(request) is pushed
    assert (await backend.evaluate(request)).model == "asked"
