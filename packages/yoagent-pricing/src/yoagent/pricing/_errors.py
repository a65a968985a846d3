"""Why price data was refused, or could not be fetched."""

from __future__ import annotations

from collections.abc import Sequence

from yoagent.core import YoagentError
from yoagent.core.support import display_url

_LISTED_PROBLEMS = 10


class PriceError(YoagentError):
    """Base of every error this package raises (a :class:`~yoagent.core.YoagentError`)."""


class PriceDataError(PriceError, ValueError):
    """Price data that does not validate: every problem names its entry and field.

    ``origin`` is where the data came from (a path, a display URL, ``YOAGENT_PRICES``), or
    ``None`` for a string; ``problems`` lists each defect, e.g.
    ``"anthropic/claude-opus-5: cache_read is -1.0; rates must be finite and non-negative"``.
    """

    def __init__(self, problems: Sequence[str], *, origin: str | None = None) -> None:
        self.problems = tuple(problems)
        self.origin = origin
        shown = list(self.problems[:_LISTED_PROBLEMS])
        if len(self.problems) > _LISTED_PROBLEMS:
            shown.append(f"and {len(self.problems) - _LISTED_PROBLEMS} more")
        where = f" from {origin}" if origin else ""
        super().__init__(f"invalid price data{where}: " + "; ".join(shown))


class UnsupportedSchemaError(PriceDataError):
    """``schema`` is missing or a version this release cannot read."""

    def __init__(self, found: object, *, origin: str | None = None) -> None:
        self.found = found
        shown = "missing" if found is None else repr(found)
        super().__init__(
            [f"schema is {shown}; this release reads schema 1 (upgrade yoagent-pricing?)"],
            origin=origin,
        )


class PriceFileError(PriceError):
    """A price file (or cache file) could not be read or written."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"price file {path}: {reason}")


class PriceFetchError(PriceError):
    """A live price source could not be read: unreachable, too slow, an HTTP error status,
    or a body that is not price data (then ``__cause__`` is the :class:`PriceDataError`).

    ``url`` is shown without credentials or a query string, which may hold a token.
    """

    def __init__(
        self, url: str, reason: str, *, status: int | None = None, timed_out: bool = False
    ) -> None:
        self.url = display_url(url)
        self.reason = reason
        self.status = status
        self.timed_out = timed_out
        super().__init__(f"GET {self.url}: {reason}")
