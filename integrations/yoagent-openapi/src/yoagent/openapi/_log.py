"""The package's logger."""

from __future__ import annotations

import logging

logger = logging.getLogger("yoagent.openapi")
