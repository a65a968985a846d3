"""The floor for package authors: what more than one package needs to keep the project's
promises, implemented once.

No secret ever appears (scrubbing of values, URL pieces, headers, log records and text
that arrives in pieces; URL display), nothing is left running (the process-group runner),
no file is torn (``atomic_write``), text always encodes (the surrogate policy), long text
is cut one way (middle-cutting), a web page in an error shows as its title
(``html_summary``), HTTP clients are set up one way, an in-memory store forgets its
oldest entry one way (``BoundedMap``), and a repeated condition is logged once
(``warn_once``). Applications rarely need this module; it is not
re-exported by :mod:`yoagent.core`. A helper that a second package needs moves here in
the same change: no package keeps its own copy.
"""

import typing

from ._namespace import Namespace as _Namespace
from ._support.atomic import atomic_write
from ._support.bounded import BoundedMap
from ._support.cut import CUT_MARKER, cut_middle
from ._support.endpoints import endpoint_from_base
from ._support.headers import merge_headers
from ._support.html import html_summary
from ._support.log_scrub import LogScrubGuard, scrub_logs
from ._support.scrub import Scrubber, StreamScrubber
from ._support.secrets import (
    MIN_SECRET_LENGTH,
    REDACTED,
    SECRET_VARIABLE_PATTERNS,
    SecretField,
    header_secrets,
    is_credential_name,
    is_secret_variable,
    looks_like_key,
)
from ._support.surrogates import utf8_decode, utf8_safe, utf8_safe_json
from ._support.url_parts import UrlParts, split_url
from ._support.urls import display_url
from ._support.warn_once import reset_warn_once, warn_once
from ._types.adapters import LazyTypeAdapter

if typing.TYPE_CHECKING:
    from ._support.http import HTTP_POOL_LIMITS, HTTP_TIMEOUT, http_client, shared_ssl_context
    from ._support.pipes import PipeCapture, Wakeup
    from ._support.process import ChildProcess, Command, kill_children, spawn_process
    from ._support.reaper import RUN_ID_VARIABLE

__all__: list[str] = [
    "CUT_MARKER",
    "HTTP_POOL_LIMITS",
    "HTTP_TIMEOUT",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "RUN_ID_VARIABLE",
    "SECRET_VARIABLE_PATTERNS",
    "BoundedMap",
    "ChildProcess",
    "Command",
    "LazyTypeAdapter",
    "LogScrubGuard",
    "PipeCapture",
    "Scrubber",
    "SecretField",
    "StreamScrubber",
    "UrlParts",
    "Wakeup",
    "atomic_write",
    "cut_middle",
    "display_url",
    "endpoint_from_base",
    "header_secrets",
    "html_summary",
    "http_client",
    "is_credential_name",
    "is_secret_variable",
    "kill_children",
    "looks_like_key",
    "merge_headers",
    "reset_warn_once",
    "scrub_logs",
    "shared_ssl_context",
    "spawn_process",
    "split_url",
    "utf8_decode",
    "utf8_safe",
    "utf8_safe_json",
    "warn_once",
]

# Made on first use: the process runner costs ``subprocess`` (≈ 5 ms of import), and the
# HTTP names need httpx, which core does not require (``yoagent-core[http]``).
_names = _Namespace(
    __name__,
    globals(),
    lazy={
        **dict.fromkeys(("PipeCapture", "Wakeup"), "._support.pipes"),
        "RUN_ID_VARIABLE": "._support.reaper",
        **dict.fromkeys(
            ("ChildProcess", "Command", "kill_children", "spawn_process"), "._support.process"
        ),
        **dict.fromkeys(
            ("HTTP_POOL_LIMITS", "HTTP_TIMEOUT", "http_client", "shared_ssl_context"),
            "._support.http",
        ),
    },
    needs={"._support.http": ("httpx", "yoagent-core[http]")},
)
__getattr__ = _names.getattr
__dir__ = _names.dir
