"""ToolGate's exact edges: its own fail-closed reading of a missing or non-finite answer
(behind the model's validation), the bounds of its settings, what each denial says and
what it logs. (Added from mutation testing: each pins a behaviour a surviving mutant
changed.)"""

from __future__ import annotations

import logging
import math
from types import MappingProxyType
from typing import Any

import pytest

from yoagent.core import Allow, Deny, Usage
from yoagent.decision import (
    DecisionError,
    DecisionModel,
    Evaluation,
    GateCheck,
    MockBackend,
    NoulAnswer,
    ToolGate,
    _gate,
)
from yoagent.decision._fit import TooLarge
from yoagent.decision._gate import _too_large  # pyright: ignore[reportPrivateUsage]

ASKED = "Please delete the build directory and rebuild."


def gate_on(probabilities: dict[str, float], **options: Any) -> ToolGate:
    backend = MockBackend.nouls(probabilities, usage=Usage(input=100))
    return ToolGate(model=DecisionModel.from_backend(backend, "judge"), **options)


# -- fails closed even when the model's validation lets an answer through -------------------


@pytest.mark.parametrize(
    "answers",
    [
        {"destructive": 0.1},  # no "requested"
        {"requested": 0.9},  # no "destructive"
        {"destructive": math.nan, "requested": 0.9},
        {"destructive": 0.1, "requested": math.nan},
        {"destructive": 0.1, "requested": math.inf},
        {"destructive": -math.inf, "requested": 0.9},
    ],
)
async def test_a_missing_or_non_finite_answer_denies_even_unvalidated(
    monkeypatch: pytest.MonkeyPatch, answers: dict[str, float]
) -> None:
    """The gate reads the answers itself: whatever reaches it, only two finite
    probabilities can allow a call."""

    async def unvalidated(self: DecisionModel, state: object, questions: object) -> Evaluation:
        noul = {qid: NoulAnswer(p_true=p, confidence=1.0) for qid, p in answers.items()}
        return Evaluation(model="m", answers=noul)

    monkeypatch.setattr(DecisionModel, "evaluate", unvalidated)
    decision = await gate_on({}).decide("bash", {"command": "ls"}, ASKED)
    assert isinstance(decision, Deny)
    assert "Ask the user to confirm before retrying." in decision.reason


async def test_a_check_below_its_threshold_allows() -> None:
    check = GateCheck("exfiltration", "Does `tool_call` send data away?", 0.6)
    gate = gate_on({"destructive": 0.0, "requested": 1.0, "exfiltration": 0.59}, checks=[check])
    assert isinstance(await gate.decide("bash", {"command": "ls"}, ASKED), Allow)


# -- what each denial says, and logs ---------------------------------------------------------


async def test_a_gate_that_breaks_denies_naming_the_error(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError("bug")

    monkeypatch.setattr(_gate, "fit_arguments", broken)  # a bug in the gate itself
    gate = gate_on({"destructive": 0.0, "requested": 1.0})
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        decision = await gate.decide("bash", {"command": "ls"}, ASKED)
    assert decision == Deny(
        "Tool gate: the gate could not judge this call (KeyError), so it was not run. "
        "The gate fails closed; ask the user how to proceed."
    )
    assert [r.getMessage() for r in caplog.records] == ["tool gate failed on a bash call"]
    assert caplog.records[0].exc_info is not None


async def test_no_user_request_is_said_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        decision = await gate_on({}).decide("bash", {"command": "ls"}, None)
    assert decision == Deny(
        "Tool gate: the conversation no longer shows what the user asked for, so this call "
        "was not run. The gate fails closed; ask the user to restate the request."
    )
    assert [r.getMessage() for r in caplog.records] == [
        "tool gate denied a bash call: no user request to judge against"
    ]


async def test_a_model_that_cannot_be_consulted_is_said_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    backend = MockBackend().push_error(DecisionError.http(503, "unavailable"))
    gate = ToolGate(model=DecisionModel.from_backend(backend, "m"))
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        decision = await gate.decide("bash", {"command": "ls"}, ASKED)
    assert isinstance(decision, Deny)
    assert decision.reason.endswith(
        "so this call was not run. The gate fails closed; ask the user how to proceed."
    )
    [record] = caplog.records
    assert record.getMessage().startswith("tool gate denied a bash call: decision model returned")


async def test_a_destructive_denial_ends_asking_for_confirmation() -> None:
    decision = await gate_on({"destructive": 0.9, "requested": 0.1}).decide(
        "bash", {"command": "rm -rf ~"}, ASKED
    )
    assert decision == Deny(
        "Tool gate: this call looks destructive or irreversible (p=0.90) and not clearly "
        "what the user asked for (p=0.10). Ask the user to confirm before retrying."
    )


async def test_a_call_too_large_is_said_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    gate = gate_on({"destructive": 0.0, "requested": 1.0}, max_argument_chars=2_000)
    with caplog.at_level(logging.WARNING, logger="yoagent.decision"):
        decision = await gate.decide("write_file", {f"f{i}": "v" * 1_000 for i in range(10)}, ASKED)
    assert decision == Deny(
        "Tool gate: this call is too large to judge: even with every other long string cut to "
        "400 characters its arguments are 4331 characters (limits: 2000 characters of "
        "arguments; the decision model's no token limit). It was not run. The gate fails "
        "closed; split the work into smaller calls or ask the user."
    )
    assert [r.getMessage() for r in caplog.records] == [
        "tool gate denied a write_file call: arguments too large"
    ]


def test_a_too_large_denial_names_the_state_problem_and_whole_views() -> None:
    limits = gate_on({}, max_argument_chars=10).fit_limits()
    plain = _too_large(TooLarge(12, None, ()), limits)
    assert "its arguments are 12 characters (limits: " in plain
    assert "; " not in plain.partition("(limits: ")[0]
    both = _too_large(TooLarge(12, "is 9000 tokens", ("/command", "/script")), limits)
    assert "its arguments are 12 characters, the state is 9000 tokens (limits: " in both
    assert "); /command, /script must be judged whole and is never shortened. It was" in both


# -- the settings' bounds --------------------------------------------------------------------


def test_settings_are_kept_in_their_canonical_forms() -> None:
    check = GateCheck("x", "q?", 0.5)
    gate = gate_on({}, tools=["bash", "bash"], checks=[check], full_views={"bash": ["/a"]})
    assert gate.tools == frozenset({"bash"})
    assert gate.checks == (check,)
    assert isinstance(gate.full_views, MappingProxyType)
    assert dict(gate.full_views) == {"bash": ("/a",)}


def test_bad_settings_are_refused_by_name() -> None:
    with pytest.raises(TypeError) as text:
        gate_on({}, tools="bash")
    assert str(text.value) == "ToolGate(tools=...) takes a collection of tool names, not a str"
    with pytest.raises(ValueError, match="empty") as empty:
        GateCheck(" ", "q?", 0.5)
    assert str(empty.value) == "a tool gate check id must not be empty"
    with pytest.raises(ValueError, match=r"^the threshold of check 'x' must be a probability"):
        GateCheck("x", "q?", 2.0)
    for name in ("destructive_threshold", "requested_threshold"):
        with pytest.raises(ValueError, match=rf"^{name} must be a probability"):
            gate_on({}, **{name: 2.0})
    with pytest.raises(ValueError, match="timeout") as zero:
        gate_on({}, timeout=0)
    assert str(zero.value) == "the gate's timeout must be positive, got 0"
    with pytest.raises(ValueError, match="max_argument_chars") as chars:
        gate_on({}, max_argument_chars=0)
    assert str(chars.value) == "max_argument_chars must be at least 1"
    assert gate_on({}, max_argument_chars=1).max_argument_chars == 1


async def test_a_check_with_no_usable_answer_is_said_to_have_answered_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def unvalidated(self: DecisionModel, state: object, questions: object) -> Evaluation:
        noul = {"destructive": NoulAnswer(p_true=0.0, confidence=1.0)}
        noul["requested"] = NoulAnswer(p_true=1.0, confidence=1.0)
        return Evaluation(model="m", answers=noul)

    monkeypatch.setattr(DecisionModel, "evaluate", unvalidated)
    check = GateCheck("exfiltration", "Does `tool_call` send data away?", 0.6)
    decision = await gate_on({}, checks=[check]).decide("bash", {"command": "ls"}, ASKED)
    assert isinstance(decision, Deny)
    assert 'check `exfiltration` ("Does `tool_call` send data away?") answered unknown, at or ' in (
        decision.reason
    )
