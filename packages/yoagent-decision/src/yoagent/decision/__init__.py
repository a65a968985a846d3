"""yoagent.decision: typed questions answered with probabilities, and the tool gate, input
guard and advisor built on them.

Nothing is sent until a :class:`DecisionModel` is built and used: an API key in the
environment enables nothing on its own.
"""

from ._advisor import Advisor, Described
from ._answers import (
    Answer,
    ChoiceAnswer,
    Evaluation,
    NoulAnswer,
    ScoreAnswer,
    distribution_confidence,
)
from ._backend import DecisionBackend
from ._calibrate import (
    CalibrationError,
    CalibrationExample,
    CalibrationReport,
    ReliabilityBin,
    ThresholdPoint,
    calibrate,
)
from ._errors import DecisionError, DecisionErrorKind, FallbackAttempt
from ._gate import DEFAULT_FULL_VIEWS, GateCheck, ToolGate
from ._guard import BUILT_IN_CHECKS, GuardCheck, InputGuard
from ._install import with_decision_model, with_input_guard, with_tool_gate
from ._logprobs import LogprobBackend, is_loopback_url
from ._mock import MockBackend
from ._model import DecisionModel
from ._openai import OpenAiDecisionBackend
from ._questions import Capabilities, Choice, Noul, Question, QuestionKind, Request, Score
from ._spend import SpendRecorder, record_decision, recording_decision_spend
from ._systemone import SystemOneBackend
from ._systemone_wire import parse_systemone_response

__all__ = [
    "BUILT_IN_CHECKS",
    "DEFAULT_FULL_VIEWS",
    "Advisor",
    "Answer",
    "CalibrationError",
    "CalibrationExample",
    "CalibrationReport",
    "Capabilities",
    "Choice",
    "ChoiceAnswer",
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
]
