"""What went wrong, in the user's words: what failed, where (the server's origin, never a
secret), and what to do.

A failed model call reaches the CLI as the reply's ``error_message``, which core writes as
``KIND: detail`` (:class:`~yoagent.core.ProviderError`'s text). :func:`explain_failure`
turns that into a sentence; raw kind names (``NETWORK:``, ``AUTH:``) are never shown.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from yoagent.core import ApiProtocol, ErrorKind, ModelConfig
from yoagent.core.support import display_url

_KIND_PREFIX = re.compile(r"^(" + "|".join(kind.name for kind in ErrorKind) + r"): ?(.*)$", re.S)
_NO_SUCH_PATH = re.compile(r"^HTTP 40[45]\b")
"""How the providers start the text of a 404 or 405: the server has no such endpoint."""

_OTHER_PROTOCOL = {
    ApiProtocol.OPENAI_RESPONSES: (
        "OpenAI Responses",
        "if it speaks only Chat Completions (most local servers do), use --provider "
        "openai-compatible, or leave --provider out",
    ),
    ApiProtocol.OPENAI_COMPLETIONS: (
        "Chat Completions",
        "if it speaks only the OpenAI Responses API, use --provider openai",
    ),
}
"""For each OpenAI protocol: its name, and the flag that speaks the other one."""


def origin(url: str) -> str:
    """``scheme://host[:port]`` of ``url``: no user, password, path or query (which may
    hold a key or a signature); "the server" for text that is not a URL."""
    return display_url(url, path=False, invalid="the server")


def base_url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a ``--base-url`` (``None`` when it can)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as error:
        return f"{url!r} is not a URL ({error})"
    if parts.scheme not in ("http", "https"):
        if not parts.scheme or not parts.netloc:
            return (
                f"{url!r} has no scheme; write it with http:// or https://, "
                f"e.g. http://{url.lstrip('/')}"
            )
        return f"{url!r}: only http:// and https:// servers are supported"
    if not parts.hostname:
        return f"{url!r} names no host"
    if any(character.isspace() for character in url):
        # urlsplit takes `http://exa mple/v1`; the HTTP client refuses it at the first call.
        return f"{url!r} is not a URL (it holds a space; write one as %20)"
    return None


def split_kind(error_message: str) -> tuple[ErrorKind | None, str]:
    """The kind core put before ``error_message`` (if any) and the rest of it."""
    match = _KIND_PREFIX.match(error_message.strip())
    if match is None:
        return None, error_message.strip()
    return ErrorKind[match.group(1)], match.group(2).strip()


def explain_failure(error_message: str | None, model: ModelConfig) -> str:
    """A failed model call as a sentence: what failed, at which server, and what to do."""
    kind, detail = split_kind(error_message or "")
    where = origin(model.base_url) if model.base_url else model.provider
    detail = detail or "no details given"
    if kind is ErrorKind.NETWORK:
        return (
            f"could not reach the model server at {where} ({detail}). "
            "Check that it is running and that the URL is right (--base-url), then /retry."
        )
    if kind is ErrorKind.AUTH:
        return (
            f"{where} refused the credentials ({detail}). "
            "Check the API key (the provider's variable, or YOAGENT_API_KEY)."
        )
    if kind is ErrorKind.RATE_LIMITED:
        return f"{where} is limiting requests ({detail}). Wait a little, then /retry."
    if kind is ErrorKind.CONTEXT_OVERFLOW:
        return (
            f"the conversation is too long for {model.id} ({detail}). "
            "/compact shortens it, /clear starts over; then /retry."
        )
    if kind is ErrorKind.API:
        mismatch = _protocol_mismatch(detail, model, where)
        if mismatch is not None:
            return mismatch
        return f"{where} rejected the request for {model.id}: {detail}"
    return f"the call to {model.id} at {where} failed: {detail}"


def _protocol_mismatch(detail: str, model: ModelConfig, where: str) -> str | None:
    """A 404 or 405 where an OpenAI protocol's endpoint should be: the hint naming the
    flag for the other protocol (``None`` when it is not that, e.g. an unknown model)."""
    other = _OTHER_PROTOCOL.get(model.api)
    if other is None or not _NO_SUCH_PATH.match(detail) or "model" in detail.lower():
        return None
    name, hint = other
    return f"{where} has no {name} endpoint ({detail}): {hint}."
