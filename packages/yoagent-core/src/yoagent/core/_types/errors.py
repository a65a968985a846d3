"""YoagentError, ProviderError and the one place that classifies what went wrong with a
model call."""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, TypeVar

E = TypeVar("E", bound=BaseException)


def restore_exception(cls: type[E], args: tuple[Any, ...], state: dict[str, Any]) -> E:
    """Rebuild a pickled exception whose ``__init__`` takes other arguments than ``args``
    (exceptions cross process boundaries: worker pools, Ray)."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class YoagentError(Exception):
    """The base of every error yoagent raises on purpose: ``except YoagentError`` catches
    what any yoagent package raises (each package's own base derives from it).

    Misuse of a call (an argument of the wrong type or value, a call made in the wrong
    state) raises the built-in ``TypeError`` / ``ValueError`` / ``RuntimeError`` as the
    standard library does; a named exception class of a yoagent package is always a
    ``YoagentError``, keeping its built-in base (``ValueError``, ``LookupError``, ...)
    where it has one.

    Every one pickles and comes back the same (a worker pool, Ray or DBOS sends errors
    across processes): it is rebuilt from its ``args`` and its fields, without calling
    its ``__init__``, whatever arguments that takes.
    """

    def __reduce__(self) -> tuple[Any, ...]:
        return restore_exception, (type(self), self.args, dict(self.__dict__))


class ErrorKind(StrEnum):
    """What kind of failure a provider reports. Only RATE_LIMITED and NETWORK are retried."""

    RATE_LIMITED = "rate_limited"
    NETWORK = "network"
    CONTEXT_OVERFLOW = "context_overflow"
    AUTH = "auth"
    API = "api"
    OTHER = "other"

    @property
    def retryable(self) -> bool:
        """True for the kinds the loop retries."""
        return self in (ErrorKind.RATE_LIMITED, ErrorKind.NETWORK)


class ProviderError(YoagentError):
    """A model call failed. ``kind`` says how; ``retry_after`` is the server's advice, in seconds.

    The message never contains a secret: providers name the variable a key came from,
    never the key.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after

    def __str__(self) -> str:
        return f"{self.kind.name}: {self.message}"

    def __repr__(self) -> str:
        return f"ProviderError({self.kind.name}, {self.message!r}, status={self.status})"


class MissingApiKeyError(ProviderError):
    """No API key was found for a model that needs one; ``variable`` is where to set it.

    Raised when an agent is built (``Agent.from_config``), before any request goes out.
    """

    def __init__(self, message: str, *, variable: str) -> None:
        super().__init__(ErrorKind.AUTH, message)
        self.variable = variable


OVERFLOW_PHRASES: tuple[str, ...] = (
    "prompt is too long",  # Anthropic
    "input is too long",  # Anthropic (older), Bedrock
    "exceeds the context window",  # OpenAI
    "maximum context length",  # OpenAI, vLLM, DeepSeek
    "context_length_exceeded",  # OpenAI error code
    "context length exceeded",
    "reduce the length of the messages",  # OpenAI, Groq
    "too many tokens",
    "input token count",  # Gemini: "The input token count (N) exceeds the maximum ..."
    "exceeds the maximum number of tokens",  # Gemini, Vertex
    "request too large",  # Anthropic 413
    "model_context_window_exceeded",  # Anthropic stop reason / xAI
    "too large for model",  # Mistral
    "string too long",  # Azure
    "input_too_long",
    "token limit",  # Cohere-style / Fireworks
    "prompt too long",  # Ollama / llama.cpp
    "exceeds the available context size",  # llama.cpp
    "longer than the model's context length",  # LM Studio
)
"""Lower-case fragments by which providers say "the request does not fit the context"."""

RATE_LIMIT_CODES: frozenset[str] = frozenset(
    {
        "rate_limit_exceeded",
        "rate_limit_error",
        "too_many_requests",
        "overloaded_error",  # Anthropic
        "overloaded",
        "no_capacity",
        "capacity_exceeded",
        "server_overloaded",
        "unavailable",  # Google
        "service_unavailable",
        "throttlingexception",  # Bedrock
        "servicequotaexceededexception",
        "serviceunavailableexception",
    }
)
"""Structured error ``type``/``code``/``status`` values that mean "slow down and retry"."""

RATE_LIMIT_STATUSES: frozenset[int] = frozenset({429, 503, 529})
"""HTTP statuses that mean "retry later"."""


def is_overflow_text(text: str) -> bool:
    """True when ``text`` says the request does not fit the model's context."""
    lowered = text.lower()
    return any(phrase in lowered for phrase in OVERFLOW_PHRASES)


def is_rate_limit_code(code: object) -> bool:
    """True when a structured error code (string or number) means a rate limit."""
    if isinstance(code, bool):
        return False
    if isinstance(code, int):
        return code in (503, 529)
    if isinstance(code, str):
        return code.strip().lower() in RATE_LIMIT_CODES
    return False


def _is_quota_code(code: object) -> bool:
    if isinstance(code, bool):
        return False
    if isinstance(code, int):
        return code == 429
    return isinstance(code, str) and code.strip().lower() in ("429", "resource_exhausted")


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds), if given."""
    lowered = {key.lower(): value for key, value in headers.items()}
    raw_ms = lowered.get("retry-after-ms")
    if raw_ms is not None:
        try:
            value = float(raw_ms) / 1000.0
        except ValueError:
            value = -1.0
        if math.isfinite(value) and value >= 0:
            return value
    raw = lowered.get("retry-after")
    if raw is not None:
        try:
            value = float(raw)
        except ValueError:
            return None
        if math.isfinite(value) and value >= 0:
            return value
    return None


def classify(
    *,
    status: int | None = None,
    codes: tuple[object, ...] = (),
    message: str = "",
    retry_after: float | None = None,
) -> ProviderError:
    """Turn what a server said into a :class:`ProviderError` of the right kind.

    Rate limits are checked first, so a capacity error whose text resembles an overflow
    phrase is retried rather than compacted. ``codes`` are the structured ``type``/``code``/
    ``status`` values of an error body or in-stream error event.
    """
    text = message.strip() or (f"HTTP {status}" if status is not None else "unknown error")
    if (status is not None and status in RATE_LIMIT_STATUSES) or any(
        is_rate_limit_code(code) for code in codes
    ):
        return ProviderError(ErrorKind.RATE_LIMITED, text, status=status, retry_after=retry_after)
    if any(_is_quota_code(code) for code in codes):
        # An in-stream 429 / RESOURCE_EXHAUSTED is a quota ("tokens per minute"), not a
        # context overflow, however its text reads; it stays API with its message.
        return ProviderError(ErrorKind.API, text, status=status)
    if is_overflow_text(text) or any(isinstance(c, str) and is_overflow_text(c) for c in codes):
        return ProviderError(ErrorKind.CONTEXT_OVERFLOW, text, status=status)
    if status in (401, 403):
        return ProviderError(ErrorKind.AUTH, text, status=status)
    if status == 413:
        return ProviderError(ErrorKind.CONTEXT_OVERFLOW, text, status=status)
    if status is not None:
        return ProviderError(ErrorKind.API, text, status=status)
    return ProviderError(ErrorKind.API, text)
