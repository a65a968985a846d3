"""What the caller decides: where requests go, with which credentials, within what limits,
and which operations become tools."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

from ._auth import OpenApiAuth
from ._model import HTTP_METHODS

_PREFIX: Final = re.compile(r"[a-zA-Z0-9_-]{1,32}")
DEFAULT_TIMEOUT: Final = 30.0
DEFAULT_MAX_RESPONSE_BYTES: Final = 64 * 1024
DEFAULT_ERROR_EXCERPT_CHARS: Final = 2_000


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class OpenApiConfig:
    """How the tools call the API.

    ``base_url`` replaces the document's ``servers`` for every operation (needed when
    the document names none, or only a relative one and was not loaded from a URL).
    ``server_variables`` fill ``{variables}`` in a server URL instead of their defaults.
    ``headers`` go on every request; the values of credential-named ones
    (``Authorization``, ``Cookie``, any naming a key, token, secret, password, signature
    or session) are treated as secrets like ``auth`` (the ``repr`` names the headers only).
    ``timeout`` bounds each call (seconds, connect to last byte). A response body over
    ``max_response_bytes`` is cut there (the result says so); an error result quotes at
    most ``error_excerpt_chars`` of the body. ``prefix`` starts every tool name
    (``prefix_operationId``), to tell two APIs apart.
    """

    base_url: str | None = None
    server_variables: Mapping[str, str] = field(default_factory=dict[str, str])
    auth: OpenApiAuth | None = None
    headers: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    error_excerpt_chars: int = DEFAULT_ERROR_EXCERPT_CHARS
    prefix: str | None = None

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {self.timeout!r}")
        if self.max_response_bytes < 1:
            raise ValueError("max_response_bytes must be at least 1")
        if self.error_excerpt_chars < 0:
            raise ValueError("error_excerpt_chars cannot be negative")
        if self.prefix is not None and not _PREFIX.fullmatch(self.prefix):
            raise ValueError(
                f"prefix {self.prefix!r} must be 1 to 32 of a-z, A-Z, 0-9, '_' and '-' "
                "(it starts every tool name)"
            )
        for name, value in self.headers.items():
            if not name or not name.isascii() or any(ch in name for ch in " :\r\n"):
                raise ValueError(f"invalid header name {name!r}")
            if not value.isascii() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
                raise ValueError(f"the value of header {name!r} must be printable ASCII")
        # Copies nobody can change later: the values were checked, and some are scrubbed.
        object.__setattr__(self, "headers", MappingProxyType(dict(self.headers)))
        object.__setattr__(self, "server_variables", MappingProxyType(dict(self.server_variables)))

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{name}={getattr(self, name)!r}"
            for name in ("base_url", "auth", "timeout", "max_response_bytes", "prefix")
        )
        return f"OpenApiConfig({shown}, headers={sorted(self.headers)!r})"


@dataclass(frozen=True, slots=True, init=False)
class OperationFilter:
    """Which operations become tools.

    Each include list that is not empty must match (a tag in ``tags``, the id in
    ``operation_ids``, the method in ``methods``, the path template matching one of the
    ``paths`` glob patterns such as ``/pets/*``); within a list any entry matches. Then
    anything in ``exclude_tags`` or ``exclude_operation_ids`` is left out, and deprecated
    operations unless ``include_deprecated``. An id named in ``operation_ids`` that the
    document does not have is an error, not an empty result.
    """

    tags: frozenset[str] = frozenset()
    operation_ids: frozenset[str] = frozenset()
    methods: frozenset[str] = frozenset()
    paths: tuple[str, ...] = ()
    exclude_tags: frozenset[str] = frozenset()
    exclude_operation_ids: frozenset[str] = frozenset()
    include_deprecated: bool = True

    def __init__(
        self,
        *,
        tags: Iterable[str] = (),
        operation_ids: Iterable[str] = (),
        methods: Iterable[str] = (),
        paths: Iterable[str] = (),
        exclude_tags: Iterable[str] = (),
        exclude_operation_ids: Iterable[str] = (),
        include_deprecated: bool = True,
    ) -> None:
        for each in (tags, operation_ids, methods, paths, exclude_tags, exclude_operation_ids):
            if isinstance(each, str):
                raise TypeError(
                    "give a list of names, not one string (it would be read letter by letter)"
                )
        lowered = frozenset(method.lower() for method in methods)
        unknown = sorted(lowered - set(HTTP_METHODS))
        if unknown:
            raise ValueError(
                f"unknown HTTP method(s) {unknown}; expected some of {list(HTTP_METHODS)}"
            )
        object.__setattr__(self, "tags", frozenset(tags))
        object.__setattr__(self, "operation_ids", frozenset(operation_ids))
        object.__setattr__(self, "methods", lowered)
        object.__setattr__(self, "paths", tuple(paths))
        object.__setattr__(self, "exclude_tags", frozenset(exclude_tags))
        object.__setattr__(self, "exclude_operation_ids", frozenset(exclude_operation_ids))
        object.__setattr__(self, "include_deprecated", include_deprecated)

    def accepts(
        self,
        *,
        method: str,
        path: str,
        operation_id: str | None,
        tags: Iterable[str],
        deprecated: bool,
    ) -> bool:
        """True when the operation becomes a tool."""
        tag_set = set(tags)
        if self.tags and not self.tags & tag_set:
            return False
        if self.operation_ids and operation_id not in self.operation_ids:
            return False
        if self.methods and method not in self.methods:
            return False
        if self.paths and not any(fnmatch.fnmatchcase(path, p) for p in self.paths):
            return False
        if self.exclude_tags & tag_set or operation_id in self.exclude_operation_ids:
            return False
        return self.include_deprecated or not deprecated
