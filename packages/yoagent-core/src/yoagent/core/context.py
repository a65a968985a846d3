"""Context management: token estimates, the compaction budget and its levels, and the
markers compaction writes.

An agent compacts by itself (``RunSettings(context="auto")``, the default, or a
:class:`ContextConfig`); this namespace is for code that manages a history by hand.
``ContextConfig`` and ``LlmCompaction`` are also exported by :mod:`yoagent.core`.
"""

from ._context.budget import ContextConfig
from ._context.compaction import CompactionResult, compact_after_overflow, compact_messages
from ._context.estimate import estimate_messages, estimate_text, estimate_tokens
from ._context.llm_compaction import LlmCompaction
from ._context.tracker import ContextTracker
from ._loop.settings import ContextSetting
from ._types.markers import COMPACTION_MARKER, SUMMARY_PREFIX, is_compaction_message
from ._types.messages import context_messages

__all__ = [  # noqa: RUF022
    # --- settings
    "ContextConfig",
    "ContextSetting",
    "LlmCompaction",
    # --- estimates and the tracker
    "estimate_tokens",
    "estimate_text",
    "estimate_messages",
    "ContextTracker",
    # --- compaction
    "compact_messages",
    "compact_after_overflow",
    "CompactionResult",
    "context_messages",
    # --- what compaction writes
    "COMPACTION_MARKER",
    "SUMMARY_PREFIX",
    "is_compaction_message",
]
