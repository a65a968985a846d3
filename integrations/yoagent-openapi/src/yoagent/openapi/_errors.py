"""OpenApiError, and the one place httpx's errors become this package's errors."""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager

import httpx

from yoagent.core import YoagentError


class OpenApiError(YoagentError):
    """Raised when a document cannot be loaded or turned into tools.

    The message names what was wrong and where (a JSON pointer into the document, a file
    name, a URL's origin); it never holds a credential.
    """


@contextmanager
def httpx_errors(
    failed: Callable[[str], Exception],
    *,
    scrub: Callable[[str], str] | None = None,
    timed_out: Callable[[], Exception] | None = None,
) -> Generator[None]:
    """Inside the block, httpx's errors (and a ``TimeoutError``) become ``failed(why)``,
    never chained to them: a document that cannot be fetched is an :class:`OpenApiError`,
    a tool call that cannot be sent a :class:`~yoagent.core.ToolError` the model reads.

    ``why`` is the error's type name, then its text passed through ``scrub`` when one is
    given (without one the text is left out: it may quote a URL holding a key). A timeout
    is ``timed_out()`` when given.
    """
    try:
        yield
    except (TimeoutError, httpx.TimeoutException) as error:
        raise (failed(_why(error, scrub)) if timed_out is None else timed_out()) from None
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        raise failed(_why(error, scrub)) from None


def _why(error: Exception, scrub: Callable[[str], str] | None) -> str:
    name = type(error).__name__
    detail = scrub(str(error)).strip() if scrub is not None else ""
    return f"{name}: {detail}" if detail else name
