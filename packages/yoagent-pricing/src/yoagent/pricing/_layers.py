"""The process-wide price layers, and the resolver they put in core's price slot.

What a lookup bills is the **resolved table**, lowest layer first:

1. genai-prices's table (pydantic's maintained price data, hundreds of models) and
2. the bundled snapshot over it (the audited entries this release ships), both only once
   :func:`enable_bundled` or an ``enable_live*`` call turned them on (``enable_bundled(
   genai_prices=False)``: the snapshot alone);
3. the **fetched layer** (models.dev, a price file at a URL), which you asked for by name;
4. the **user layer** (:func:`install_override`, or ``YOAGENT_PRICES``): your word, over all.

Each layer replaces whole entries per ``(provider, model)``; with no layer nothing is
priced, and each layer alone prices exactly what it lists.

Every change holds one lock and rebuilds the resolved table; lookups read it without the
lock (the reference is replaced whole, never mutated). ``YOAGENT_PRICES`` is read once, the
first time the layers are used.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from yoagent.core import CostConfig
from yoagent.core.provider import set_price_resolver
from yoagent.core.support import reset_warn_once, warn_once

from ._changes import PriceChange, diff
from ._env_var import PRICES_ENV_VAR
from ._errors import PriceError
from ._genai import genai_prices
from ._keys import PRICED_PROVIDERS, inert_entries, override_warnings, price_key
from ._logging import logger
from ._table import PriceTable

_LOGGED_DISAGREEMENTS = 5


class InstallPolicy(StrEnum):
    """Which entries of a table :func:`install_fetched` installs."""

    REPLACE_ALL = "replace_all"
    """Replace the fetched layer: every entry overrides the snapshot where both list it."""
    ADD_ONLY = "add_only"
    """Add only the models no lower layer lists: extend coverage, never change a price."""


@dataclass(frozen=True, slots=True, kw_only=True)
class OverrideReport:
    """What :func:`install_override` did.

    ``changes``: models the override now prices differently (inert entries excluded).
    ``reverted``: models a previous override listed and this one does not, back at their
    fetched or bundled price or unpriced. ``inert``: ``provider/model`` entries no lookup
    reads. ``warnings``: everything also logged at WARNING (inert entries, ignored fields,
    dropped tiers, cache rates left to the input rate, a replaced override).
    """

    changes: tuple[PriceChange, ...] = ()
    reverted: tuple[PriceChange, ...] = ()
    inert: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EnvOverride:
    """What became of ``YOAGENT_PRICES``: ``unset``, ``loaded`` as the user layer, or
    ``rejected`` (logged, and no user layer installed). ``source`` is the path, or
    ``"inline JSON"``."""

    state: Literal["unset", "loaded", "rejected"]
    source: str | None = None
    entries: int = 0
    warnings: tuple[str, ...] = ()
    error: PriceError | None = None


@dataclass(frozen=True, slots=True)
class _UserLayer:
    table: PriceTable
    from_env: str | None  # the YOAGENT_PRICES source it was read from


class _Layers:
    def __init__(self, user: _UserLayer | None, env: EnvOverride) -> None:
        self.bundled = False
        self.genai = False
        self.fetched: PriceTable | None = None
        self.user = user
        self.env = env
        self.resolved = PriceTable()
        self.rebuild()

    def lower(self) -> PriceTable:
        """Everything below the user layer."""
        base = PriceTable()
        if self.bundled:
            snapshot = PriceTable.bundled()
            base = genai_prices().table.layered(snapshot) if self.genai else snapshot
        return base if self.fetched is None else base.layered(self.fetched)

    def rebuild(self) -> None:
        lower = self.lower()
        self.resolved = lower if self.user is None else lower.layered(self.user.table)


_state: _Layers | None = None
_lock = threading.Lock()


def _layers() -> _Layers:
    """The layers, made (reading ``YOAGENT_PRICES``) on first use. Hold ``_lock``."""
    global _state
    if _state is None:
        user, env = _read_env()
        _state = _Layers(user, env)
        if user is not None:
            _activate()
    return _state


def _resolve(provider: str, model_id: str) -> CostConfig | None:
    """The resolver core asks: the resolved table's rates for a config, or ``None``."""
    key = price_key(provider)
    state = _state
    if key is None or state is None:
        return None
    resolved = state.resolved
    cost = resolved.cost(key, model_id)
    if cost is None and key in PRICED_PROVIDERS and not state.bundled and len(resolved):
        warn_once(
            logger,
            f"miss:{key}/{model_id}",
            "no price for %s/%s: pricing is on but only for the models a layer lists "
            "(the bundled snapshot is off); its usage is unpriced",
            key,
            model_id,
        )
    return cost


def _activate() -> None:
    """Put :func:`_resolve` in core's slot (saying so if it replaces someone else's)."""
    previous = set_price_resolver(_resolve)
    if previous is not None and previous is not _resolve:
        logger.warning("replaced the price resolver %r with yoagent.pricing's layers", previous)


def enable_bundled(*, genai_prices: bool = True) -> list[PriceChange]:
    """Price from the offline tables, process-wide: the snapshot this release ships, over
    genai-prices's broad table (see :func:`~yoagent.pricing.genai_prices`).

    ``genai_prices=False`` prices from the snapshot alone (only its audited entries).
    Nothing is priced until something opts in (this, ``enable_live*``, an override, or
    ``YOAGENT_PRICES``). Idempotent; returns every model whose price changed (none on a
    repeat call). Undo with :func:`clear_bundled`.
    """
    return enable_with(None, genai=genai_prices)


def enable_with(fetched: PriceTable | None, *, genai: bool = True) -> list[PriceChange]:
    """Turn the offline layers on and, when given, install ``fetched`` over them, under one
    lock.

    Returns the changes to the resolved table: what lookups now bill.
    """
    with _lock:
        state = _layers()
        before = state.resolved
        state.bundled = True
        state.genai = genai
        state.rebuild()
        logged = (
            None if fetched is None else _install_fetched(state, fetched, InstallPolicy.REPLACE_ALL)
        )
        changes = diff(before.costs(), state.resolved.costs())
        _activate()
    if logged is not None:
        _log_fetched(*logged)
    return changes


def install_override(table: PriceTable) -> OverrideReport:
    """Install ``table`` as the user layer, replacing any earlier one (``YOAGENT_PRICES``'s
    included, which is not read again). Its entries beat the fetched and bundled layers per
    model, whole; alone, it prices exactly what it lists. See :class:`OverrideReport`."""
    with _lock:
        state = _layers()
        warnings = override_warnings(table, state.lower())
        old = state.user
        if old is not None:
            where = (
                f"loaded from {PRICES_ENV_VAR} ({old.from_env})" if old.from_env else "installed"
            )
            warnings.append(f"replaces the override {where}, of {len(old.table)} entries")
        before = state.resolved
        state.user = _UserLayer(table, None)
        state.rebuild()
        changes: list[PriceChange] = []
        reverted: list[PriceChange] = []
        inert = inert_entries(table)
        for change in diff(before.costs(), state.resolved.costs()):
            name = f"{change.provider}/{change.model}"
            if (change.provider, change.model) not in table:
                reverted.append(change)
            elif name not in inert:
                changes.append(change)
        _activate()
    for warning in warnings:
        logger.warning("price override: %s", warning)
    return OverrideReport(
        changes=tuple(changes),
        reverted=tuple(reverted),
        inert=tuple(inert),
        warnings=tuple(warnings),
    )


def clear_override() -> None:
    """Remove the user layer (``YOAGENT_PRICES``'s included; it is not read again)."""
    with _lock:
        state = _layers()
        state.user = None
        state.rebuild()


def install_fetched(
    table: PriceTable, policy: InstallPolicy = InstallPolicy.REPLACE_ALL
) -> list[PriceChange]:
    """Install ``table`` as the fetched layer (see :class:`InstallPolicy`).

    Returns the changes to everything below the user layer; a change the user layer hides
    is marked ``shadowed``. While the snapshot is on, the models it prices differently
    are logged at WARNING, so trusting a fetched source is never silent. A rate above
    :data:`~yoagent.pricing.MAX_PLAUSIBLE_RATE` is refused (:class:`PriceDataError`, naming
    each), and nothing is installed.
    """
    table.check_plausible()
    with _lock:
        state = _layers()
        changes, warnings, disagreements = _install_fetched(state, table, policy)
        _activate()
    _log_fetched(changes, warnings, disagreements)
    return changes


def _install_fetched(
    state: _Layers, table: PriceTable, policy: InstallPolicy
) -> tuple[list[PriceChange], list[str], list[PriceChange]]:
    """``(changes, warnings, disagreements with the snapshot)``; the caller holds the lock."""
    warnings: list[str] = []
    before = state.lower()
    if policy is InstallPolicy.ADD_ONLY:
        added = {(p, m): e for p, m, e in table.items() if (p, m) not in before}
        fetched = (state.fetched or PriceTable()).layered(PriceTable(added))
    else:
        if state.fetched:
            warnings.append(
                f"replaces a fetched layer of {len(state.fetched)} entries; "
                "models only it listed revert"
            )
        fetched = table
    disagreements = (
        [c for c in fetched.changes_from(PriceTable.bundled()) if c.before is not None]
        if state.bundled
        else []
    )
    state.fetched = fetched
    state.rebuild()
    changes = diff(before.costs(), state.lower().costs())
    if state.user is not None:
        user = state.user.table
        changes = [
            PriceChange(
                provider=c.provider,
                model=c.model,
                before=c.before,
                after=c.after,
                shadowed=(c.provider, c.model) in user,
            )
            for c in changes
        ]
    return changes, warnings, disagreements


def _log_fetched(
    changes: list[PriceChange], warnings: list[str], disagreements: list[PriceChange]
) -> None:
    for warning in warnings:
        logger.warning("install_fetched: %s", warning)
    if disagreements:
        shown = "; ".join(str(c) for c in disagreements[:_LOGGED_DISAGREEMENTS])
        more = len(disagreements) - _LOGGED_DISAGREEMENTS
        logger.warning(
            "the fetched prices disagree with the bundled snapshot on %d model(s) and win: %s%s",
            len(disagreements),
            shown,
            f"; and {more} more" if more > 0 else "",
        )
    logger.info("installed fetched prices: %d model(s) changed", len(changes))


def clear_fetched() -> None:
    """Remove the fetched layer."""
    with _lock:
        state = _layers()
        state.fetched = None
        state.rebuild()


def clear_bundled() -> None:
    """Turn the offline tables off again (the default): models only they priced become
    unpriced."""
    with _lock:
        state = _layers()
        state.bundled = False
        state.genai = False
        state.rebuild()


def is_bundled_enabled() -> bool:
    """Whether the bundled snapshot (with or without genai-prices under it) is in effect."""
    with _lock:
        return _layers().bundled


def pricing_enabled() -> bool:
    """Whether any price is in effect: the snapshot, a fetched table or a user layer."""
    with _lock:
        return len(_layers().resolved) > 0


def resolved() -> PriceTable:
    """The resolved table: what a lookup made now would bill."""
    with _lock:
        return _layers().resolved


def env_override_status() -> EnvOverride:
    """What became of ``YOAGENT_PRICES`` (reading it now if the layers were never used)."""
    with _lock:
        return _layers().env


def load_env_override() -> PriceTable | None:
    """Read ``YOAGENT_PRICES`` now, strictly, without installing it: ``None`` when unset.

    For an application that would rather fail at startup than run on prices it did not
    expect (the layers log a bad value and go on without it).
    """
    raw = os.environ.get(PRICES_ENV_VAR, "")
    if not raw.strip():
        return None
    text = raw.strip()
    if text.startswith("{"):
        return PriceTable.from_json(text, origin=f"{PRICES_ENV_VAR} (inline JSON)")
    return PriceTable.from_path(text)


def apply_env_override() -> None:
    """Read ``YOAGENT_PRICES`` if nothing has yet (core's autoload entry point calls this
    the first time a price is needed, so the variable works without an import)."""
    with _lock:
        _layers()


def _read_env() -> tuple[_UserLayer | None, EnvOverride]:
    raw = os.environ.get(PRICES_ENV_VAR, "")
    if not raw.strip():
        return None, EnvOverride(state="unset")
    source = "inline JSON" if raw.strip().startswith("{") else raw.strip()
    try:
        table = load_env_override()
    except PriceError as error:
        logger.warning(
            "ignoring %s (%s): %s; no user layer installed", PRICES_ENV_VAR, source, error
        )
        return None, EnvOverride(state="rejected", source=source, error=error)
    assert table is not None
    warnings = override_warnings(table, PriceTable.bundled())
    logger.info("loaded %s (%s): %d entries", PRICES_ENV_VAR, source, len(table))
    for warning in warnings:
        logger.warning("%s: %s", PRICES_ENV_VAR, warning)
    status = EnvOverride(
        state="loaded", source=source, entries=len(table), warnings=tuple(warnings)
    )
    return _UserLayer(table, source), status


def reset_for_tests() -> None:
    """Forget every layer, the ``YOAGENT_PRICES`` reading and core's resolver (tests only)."""
    global _state
    with _lock:
        _state = None
        set_price_resolver(None)
    reset_warn_once(logger)
