"""DecisionError: the one exception a decision-model call raises, with its kind."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from yoagent.core import YoagentError

from ._answers import Evaluation


class DecisionErrorKind(StrEnum):
    """Why a decision-model call failed. ``retryable`` says whether trying again may help."""

    HTTP = "http"
    """A non-success status that is neither a rate limit nor a validation failure."""
    RATE_LIMITED = "rate_limited"
    """429 Too Many Requests or 529 Overloaded (after the retries were spent)."""
    TIMEOUT = "timeout"
    """The call did not finish within its time limit."""
    INVALID = "invalid"
    """The request is invalid: refused before sending, or by the server with 422."""
    UNSUPPORTED = "unsupported"
    """The backend cannot answer this kind of question (never emulated)."""
    TRANSPORT = "transport"
    """Connection, TLS or protocol failure before a response arrived."""
    MISSING_API_KEY = "missing_api_key"
    """A preset's key variable is unset or blank; ``variable`` names it, never a value."""
    BACKEND = "backend"
    """A backend's own failure, in its words."""
    BAD_RESPONSE = "bad_response"
    """A response arrived but cannot be used (not JSON, an answer missing or invalid)."""
    ALL_FAILED = "all_failed"
    """Every model of a fallback chain failed or was skipped (``attempts`` lists them)."""
    REFUSED = "refused"
    """The model declined to answer a question (``question`` names it). Ends a chain."""

    @property
    def retryable(self) -> bool:
        """Rate limits and transport failures (``ALL_FAILED`` is judged per error)."""
        return self in (DecisionErrorKind.RATE_LIMITED, DecisionErrorKind.TRANSPORT)


@dataclass(slots=True, frozen=True)
class FallbackAttempt:
    """One member's outcome in an ``ALL_FAILED`` error, in the order they were tried."""

    model: str
    """The model id this member asked for."""
    error: DecisionError
    """Why it failed, or, when it was not sent, why it was skipped."""
    was_sent: bool
    """False when the member was skipped because the request exceeds its capabilities."""

    def describe(self) -> str:
        """``[model] error`` or ``[model (skipped)] error``."""
        skipped = "" if self.was_sent else " (skipped)"
        return f"[{self.model}{skipped}] {self.error}"


_PREFIX = {
    DecisionErrorKind.HTTP: "decision model returned HTTP",
    DecisionErrorKind.RATE_LIMITED: "decision model rate limited or overloaded",
    DecisionErrorKind.TIMEOUT: "decision model call timed out",
    DecisionErrorKind.INVALID: "invalid decision request",
    DecisionErrorKind.UNSUPPORTED: "unsupported by this decision backend",
    DecisionErrorKind.TRANSPORT: "decision model transport error",
    DecisionErrorKind.MISSING_API_KEY: "decision model API key missing: set",
    DecisionErrorKind.BACKEND: "decision backend error",
    DecisionErrorKind.BAD_RESPONSE: "decision model returned an unusable response",
    DecisionErrorKind.ALL_FAILED: "every decision model in the fallback chain failed",
    DecisionErrorKind.REFUSED: "decision model refused",
}


class DecisionError(YoagentError):
    """Everything a decision-model call can fail with; ``kind`` says which.

    Build one with the class methods (``DecisionError.http(...)``, ``.bad_response(...)``,
    ...). ``retryable`` is true for rate limits and transport failures, and for
    ``ALL_FAILED`` when any member's error was. ``billed`` is what a request that failed
    after the server answered was billed for (recorded in the run's decision spend).
    No key or token ever appears in the text.
    """

    kind: DecisionErrorKind
    detail: str
    status: int | None
    body: str | None
    retry_after: float | None
    timeout: float | None
    variable: str | None
    question: str | None
    attempts: tuple[FallbackAttempt, ...]
    billed: Evaluation | None

    def __init__(
        self,
        kind: DecisionErrorKind,
        detail: str = "",
        *,
        status: int | None = None,
        body: str | None = None,
        retry_after: float | None = None,
        timeout: float | None = None,
        variable: str | None = None,
        question: str | None = None,
        attempts: Sequence[FallbackAttempt] = (),
        billed: Evaluation | None = None,
    ) -> None:
        self.kind = kind
        self.detail = detail
        self.status = status
        self.body = body
        self.retry_after = retry_after
        self.timeout = timeout
        self.variable = variable
        self.question = question
        self.attempts = tuple(attempts)
        self.billed = billed
        super().__init__(self._text())

    # --- constructors -----------------------------------------------------------------------

    @classmethod
    def http(cls, status: int, body: str) -> DecisionError:
        """A non-success status (``body`` already truncated and scrubbed)."""
        return cls(DecisionErrorKind.HTTP, status=status, body=body)

    @classmethod
    def rate_limited(
        cls, status: int, retry_after: float | None = None, body: str = ""
    ) -> DecisionError:
        """A 429 or 529, with the server's retry-after in seconds when it sent one."""
        return cls(
            DecisionErrorKind.RATE_LIMITED, status=status, retry_after=retry_after, body=body
        )

    @classmethod
    def timed_out(cls, seconds: float) -> DecisionError:
        """The call did not finish within ``seconds``."""
        return cls(DecisionErrorKind.TIMEOUT, timeout=seconds)

    @classmethod
    def invalid(cls, detail: str) -> DecisionError:
        """The request is invalid; ``detail`` names the field."""
        return cls(DecisionErrorKind.INVALID, detail)

    @classmethod
    def unsupported(cls, detail: str) -> DecisionError:
        """The backend cannot answer this kind of question."""
        return cls(DecisionErrorKind.UNSUPPORTED, detail)

    @classmethod
    def transport(cls, detail: str) -> DecisionError:
        """A connection-level failure (retried)."""
        return cls(DecisionErrorKind.TRANSPORT, detail)

    @classmethod
    def missing_api_key(cls, variable: str) -> DecisionError:
        """No key: ``variable`` names where one is read from (never a value)."""
        return cls(DecisionErrorKind.MISSING_API_KEY, variable=variable)

    @classmethod
    def backend(cls, detail: str) -> DecisionError:
        """A custom backend's own failure."""
        return cls(DecisionErrorKind.BACKEND, detail)

    @classmethod
    def bad_response(cls, detail: str) -> DecisionError:
        """An answer that cannot be used (never retried: it was already billed)."""
        return cls(DecisionErrorKind.BAD_RESPONSE, detail)

    @classmethod
    def refused(cls, question: str, detail: str = "") -> DecisionError:
        """The model declined to answer ``question``."""
        return cls(DecisionErrorKind.REFUSED, detail, question=question)

    @classmethod
    def all_failed(cls, attempts: Sequence[FallbackAttempt]) -> DecisionError:
        """Every member of a fallback chain failed or was skipped."""
        return cls(DecisionErrorKind.ALL_FAILED, attempts=attempts)

    # --- queries ----------------------------------------------------------------------------

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed later."""
        if self.kind is DecisionErrorKind.ALL_FAILED:
            return any(attempt.error.retryable for attempt in self.attempts)
        return self.kind.retryable

    def with_billed(self, billed: Evaluation | None) -> DecisionError:
        """This error carrying what its request was billed for."""
        self.billed = billed
        return self

    def _text(self) -> str:
        prefix = _PREFIX[self.kind]
        match self.kind:
            case DecisionErrorKind.HTTP:
                return (
                    f"{prefix} {self.status}: {self.body}"
                    if self.body
                    else f"{prefix} {self.status}"
                )
            case DecisionErrorKind.RATE_LIMITED:
                after = (
                    f", retry after {self.retry_after:.1f}s" if self.retry_after is not None else ""
                )
                return f"{prefix} (HTTP {self.status}){after}"
            case DecisionErrorKind.TIMEOUT:
                return f"{prefix} after {self.timeout or 0.0:.1f}s"
            case DecisionErrorKind.MISSING_API_KEY:
                return f"{prefix} {self.variable}"
            case DecisionErrorKind.ALL_FAILED:
                return f"{prefix}: " + "; ".join(a.describe() for a in self.attempts)
            case DecisionErrorKind.REFUSED:
                said = f": {self.detail}" if self.detail else ""
                return f"{prefix} to answer question `{self.question}`{said}"
            case _:
                return f"{prefix}: {self.detail}"

    def __repr__(self) -> str:
        return f"DecisionError({self.kind.value!r}, {self._text()!r})"
