"""Live price sources, read only when asked: models.dev, or a URL serving the price file.

Nothing here installs a table (see :func:`~yoagent.pricing.install_fetched` and
:func:`~yoagent.pricing.enable_live`). httpx is imported on the first fetch, so pricing
that never fetches never loads it.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import anyio

from yoagent.core.support import Scrubber, display_url

from ._errors import PriceDataError, PriceFetchError
from ._models_dev import MODELS_DEV_URL, SkippedModel, map_models_dev
from ._table import PriceTable

DEFAULT_FETCH_TIMEOUT = 10.0
"""Seconds a fetch may take, body included, unless told otherwise."""

MAX_BODY_BYTES = 32 * 1024 * 1024
"""A body past this is refused: models.dev's whole catalogue is a few MB."""


@dataclass(frozen=True, slots=True)
class PriceSource:
    """Where live prices come from: a URL and the format it serves.

    ``models.dev`` data (community-maintained, broad, *not* authoritative: it has been wrong
    before) is mapped, skipping what cannot be expressed; ``price_file`` is this package's
    own format, typically a file you maintain. Its repr hides any query string.
    """

    url: str
    format: Literal["models.dev", "price_file"]

    @classmethod
    def models_dev(cls, url: str = MODELS_DEV_URL) -> PriceSource:
        """models.dev's ``api.json`` (or a mirror of it at ``url``)."""
        return cls(url, "models.dev")

    @classmethod
    def price_file(cls, url: str) -> PriceSource:
        """A URL serving this package's price file format."""
        return cls(url, "price_file")

    def __repr__(self) -> str:
        return f"PriceSource({self.format}, {display_url(self.url)})"


MODELS_DEV = PriceSource.models_dev()


@dataclass(frozen=True, slots=True, kw_only=True)
class FetchReport:
    """A fetched table, with the models.dev models it skipped and the fields it ignored."""

    table: PriceTable
    skipped: tuple[SkippedModel, ...] = ()
    ignored_fields: tuple[str, ...] = ()


async def fetch_prices(
    source: PriceSource = MODELS_DEV,
    *,
    timeout: float = DEFAULT_FETCH_TIMEOUT,  # noqa: ASYNC109 (a deadline that falls back, not a cancel)
) -> FetchReport:
    """Fetch and parse ``source`` now: one GET, ``timeout`` seconds in all.

    Never called implicitly, and installs nothing. Raises :class:`PriceFetchError` for
    every failure (unreachable, too slow, an HTTP error status, a body that is not price
    data), naming the URL without its query string.
    """
    check_timeout(timeout)
    body = await _get(source.url, timeout)
    return parse_source(source, body)


def check_timeout(timeout: float) -> None:
    """Refuse a timeout that is not a positive number of seconds (a misuse, said at once)."""
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")


def parse_models_dev(text: str | bytes, *, source: str = MODELS_DEV_URL) -> FetchReport:
    """A models.dev document read from anywhere (a file, a fixture) as a table; no request.
    Raises :class:`PriceDataError` when no model in it maps."""
    table, skipped = map_models_dev(text, source=display_url(source))
    return FetchReport(table=table, skipped=tuple(skipped))


def parse_source(source: PriceSource, body: bytes) -> FetchReport:
    """A fetched body as a table, or a :class:`PriceFetchError` saying why it is not one."""
    shown = display_url(source.url)
    try:
        if source.format == "models.dev":
            table, skipped = map_models_dev(body, source=shown)
            return FetchReport(table=table, skipped=tuple(skipped))
        table = PriceTable.from_json(body, origin=shown).check_plausible(origin=shown)
    except PriceDataError as error:
        raise PriceFetchError(source.url, f"not usable price data: {error}") from error
    return FetchReport(table=table, ignored_fields=table.ignored_fields)


_ACCEPT_ENCODING = "gzip, deflate"
_INFLATE_STEP = 64 * 1024


class _Inflater:
    """A body's ``content-encoding`` undone at most 64 KiB at a time.

    httpx's own decoder inflates a whole network chunk at once, before any size check
    (64 KiB of gzip can be 64 MiB), so the raw body is read and inflated here in steps.
    """

    def __init__(self, url: str, encoding: str) -> None:
        self._url = url
        name = encoding.strip().lower()
        # deflate is zlib-wrapped, or raw as some servers send it (tried on a bad start).
        self._may_be_raw = name == "deflate"
        self._plain = name in ("", "identity")
        if not self._plain and name not in ("gzip", "x-gzip", "deflate"):
            raise PriceFetchError(url, f"the server sent content-encoding {encoding!r}")
        self._decoder = zlib.decompressobj(zlib.MAX_WBITS | (0 if self._may_be_raw else 16))

    def steps(self, data: bytes) -> Iterator[bytes]:
        """``data`` decoded, in pieces of at most 64 KiB."""
        if self._plain:
            yield data
            return
        pending = data
        while True:
            try:
                out = self._decoder.decompress(pending, _INFLATE_STEP)
            except zlib.error:
                if self._may_be_raw:
                    self._decoder, self._may_be_raw = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise PriceFetchError(self._url, "the compressed body is corrupt") from None
            self._may_be_raw = False
            if out:
                yield out
            pending = self._decoder.unconsumed_tail
            if not pending and len(out) < _INFLATE_STEP:
                return


def _url_problem(url: str) -> str | None:
    """Why no request can go to ``url``, or ``None``: checked first, because an
    out-of-range port fails deep in the socket layer (an ``OverflowError`` that escaped)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as error:
        return f"not a usable URL ({error})"
    if parts.scheme not in ("http", "https"):
        return "not an http or https URL"
    if not parts.hostname:
        return "the URL has no host"
    if port == 0:
        return "not a usable URL (port 0)"
    return None


async def _get(url: str, timeout: float) -> bytes:  # noqa: ASYNC109 (see fetch_prices)
    problem = _url_problem(url)
    if problem is not None:
        raise PriceFetchError(url, problem)
    import httpx  # only live pricing needs it

    from yoagent.core.support import http_client

    headers = {
        "accept": "application/json",
        "accept-encoding": _ACCEPT_ENCODING,
        "user-agent": "yoagent-pricing",
    }
    try:
        with anyio.fail_after(timeout):
            async with (
                http_client(timeout=timeout, follow_redirects=True) as client,
                client.stream("GET", url, headers=headers) as response,
            ):
                if not response.is_success:
                    raise PriceFetchError(
                        url, f"HTTP {response.status_code}", status=response.status_code
                    )
                encoding = response.headers.get("content-encoding", "")
                inflate = _Inflater(url, encoding)
                chunks: list[bytes] = []
                size = 0
                async for raw in response.aiter_raw():
                    for chunk in inflate.steps(raw):
                        size += len(chunk)
                        if size > MAX_BODY_BYTES:
                            raise PriceFetchError(url, f"the body is over {MAX_BODY_BYTES} bytes")
                        chunks.append(chunk)
                return b"".join(chunks)
    except (TimeoutError, httpx.TimeoutException):
        raise PriceFetchError(url, f"timed out after {timeout:g} s", timed_out=True) from None
    except (httpx.HTTPError, httpx.InvalidURL) as error:
        detail = Scrubber(urls=[url]).scrub(str(error)) or "no detail"
        raise PriceFetchError(url, f"{type(error).__name__}: {detail}") from None
