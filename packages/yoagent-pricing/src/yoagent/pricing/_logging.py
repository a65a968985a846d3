"""The ``yoagent.pricing`` logger."""

from __future__ import annotations

import logging

logger = logging.getLogger("yoagent.pricing")
