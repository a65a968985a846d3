"""The few Ray calls this package makes, typed: Ray's own annotations are partial (its
handles and refs are generic over unknowns), so they are confined to this module."""

from __future__ import annotations

from typing import Any, cast

import ray
from ray import cloudpickle  # pyright: ignore[reportMissingTypeStubs]

_ray: Any = ray


def remote_class(cls: type, **options: Any) -> Any:
    """``cls`` as a Ray actor class."""
    return _ray.remote(**options)(cls)


def is_initialized() -> bool:
    """True when this process is connected to a Ray cluster."""
    return bool(_ray.is_initialized())


def cluster_cpus() -> int:
    """The CPUs the cluster has (at least 1)."""
    return max(1, int(cast("dict[str, float]", _ray.cluster_resources()).get("CPU", 1)))


def put(value: object) -> Any:
    """``value`` in the object store (shipped to each worker once)."""
    return _ray.put(value)


def get(ref: Any, timeout: float | None = None) -> Any:
    """The value of ``ref``; raises what the task raised."""
    return _ray.get(ref, timeout=timeout)


def wait(
    refs: list[Any], *, num_returns: int, timeout: float | None
) -> tuple[list[Any], list[Any]]:
    """The ready and the not-yet-ready refs."""
    ready, rest = _ray.wait(refs, num_returns=num_returns, timeout=timeout)
    return list(cast("list[Any]", ready)), list(cast("list[Any]", rest))


def cancel(ref: Any) -> None:
    """Cancel the task behind ``ref`` (an async actor's task gets asyncio cancellation)."""
    _ray.cancel(ref)


def kill(actor: Any, *, restart: bool = False) -> None:
    """Stop an actor's process at once."""
    _ray.kill(actor, no_restart=not restart)


def dumps(value: object) -> bytes:
    """``value`` pickled the way Ray ships it."""
    return cast(bytes, cast(Any, cloudpickle).dumps(value))
