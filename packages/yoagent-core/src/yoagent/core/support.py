"""The floor for package authors: what more than one package needs to keep the project's
promises, implemented once.

No secret ever appears (scrubbing of values, URL pieces, headers, log records and text
that arrives in pieces; URL display), nothing is left running (the process-group runner),
no file is torn (``atomic_write``), text always encodes (the surrogate policy), long text
is cut one way (middle-cutting), HTTP clients are set up one way, and a repeated
condition is logged once (``warn_once``). Applications rarely need this module; it is not
re-exported by :mod:`yoagent.core`. A helper that a second package needs moves here in
the same change: no package keeps its own copy.
"""

# --- text: scrubbing, URL display, the log scrub filter, surrogates, middle-cutting, warn_once
from ._support.cut import CUT_MARKER, cut_middle
from ._support.log_scrub import LogScrubGuard, scrub_logs
from ._support.scrub import Scrubber, StreamScrubber
from ._support.secrets import (
    MIN_SECRET_LENGTH,
    REDACTED,
    SecretField,
    header_secrets,
    is_credential_name,
    looks_like_key,
)
from ._support.surrogates import utf8_decode, utf8_safe, utf8_safe_json
from ._support.urls import display_url
from ._support.warn_once import reset_warn_once, warn_once

# --- io: atomic_write, the process-group runner, the HTTP client factory

__all__: list[str] = [
    # --- text
    "CUT_MARKER",
    "MIN_SECRET_LENGTH",
    "REDACTED",
    "LogScrubGuard",
    "Scrubber",
    "SecretField",
    "StreamScrubber",
    "cut_middle",
    "display_url",
    "header_secrets",
    "is_credential_name",
    "looks_like_key",
    "reset_warn_once",
    "scrub_logs",
    "utf8_decode",
    "utf8_safe",
    "utf8_safe_json",
    "warn_once",
    # --- io
]
