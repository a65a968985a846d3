"""Context management: token estimates, tracking, and compaction."""
