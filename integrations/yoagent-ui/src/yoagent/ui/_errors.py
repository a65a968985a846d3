"""The errors yoagent-ui raises: one base, :class:`UiError`, under ``YoagentError``."""

from __future__ import annotations

from yoagent.core import YoagentError


class UiError(YoagentError):
    """Something yoagent-ui refused or could not do; the text says what and why."""


class BadRunInputError(UiError, ValueError):
    """A request a protocol endpoint cannot run: malformed JSON, a body that is not the
    protocol's run input, a message kind or content part yoagent cannot hold, or a resume
    that answers nothing. The endpoint answers it with HTTP 400 (413 for a body over the
    size limit) and the text, never with a half-started stream."""

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status
