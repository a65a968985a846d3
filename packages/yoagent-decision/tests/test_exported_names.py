"""The public surface of yoagent.decision is a reviewed list: a name that appears or
disappears fails here until the list is updated on purpose."""

from __future__ import annotations

import yoagent.decision

EXPECTED = {
    "Advisor",
    "Answer",
    "BUILT_IN_CHECKS",
    "CalibrationError",
    "CalibrationExample",
    "CalibrationReport",
    "Capabilities",
    "Choice",
    "ChoiceAnswer",
    "DEFAULT_FULL_VIEWS",
    "DecisionBackend",
    "DecisionError",
    "DecisionErrorKind",
    "DecisionModel",
    "Described",
    "Evaluation",
    "FallbackAttempt",
    "GateCheck",
    "GuardCheck",
    "InputGuard",
    "LogprobBackend",
    "MockBackend",
    "Noul",
    "NoulAnswer",
    "OpenAiDecisionBackend",
    "Question",
    "QuestionKind",
    "ReliabilityBin",
    "Request",
    "Score",
    "ScoreAnswer",
    "SpendRecorder",
    "SystemOneBackend",
    "ThresholdPoint",
    "ToolGate",
    "calibrate",
    "distribution_confidence",
    "is_loopback_url",
    "parse_systemone_response",
    "record_decision",
    "recording_decision_spend",
    "with_decision_model",
    "with_input_guard",
    "with_tool_gate",
}


def test_the_public_names_are_the_reviewed_list() -> None:
    assert set(yoagent.decision.__all__) == EXPECTED
    for name in EXPECTED:
        assert hasattr(yoagent.decision, name), name
