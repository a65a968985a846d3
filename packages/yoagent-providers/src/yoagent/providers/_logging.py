"""The ``yoagent.providers`` logger."""

from __future__ import annotations

import logging

logger = logging.getLogger("yoagent.providers")
