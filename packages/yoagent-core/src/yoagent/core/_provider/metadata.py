"""Package metadata, read on first use: ``importlib.metadata`` costs ≈ 10–25 ms to import.

It pulls in ``email``, ``zipfile`` and ``csv``; importing it only when an entry point or a
version is looked up keeps that out of ``import yoagent.core``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import EntryPoints


def entry_points(*, group: str) -> EntryPoints:
    """The installed entry points of ``group`` (``importlib.metadata.entry_points``)."""
    from importlib.metadata import entry_points as read

    return read(group=group)


def version(distribution_name: str) -> str:
    """The installed version of a distribution; raises ``PackageNotFoundError`` if absent."""
    from importlib.metadata import version as read

    return read(distribution_name)
