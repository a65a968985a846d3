"""Comparing a price table with another source's (models.dev), model by model.

Informational: a disagreement is a reason to check the vendor's page, not proof either
side is wrong (models.dev is community-maintained; the snapshot is a dated reading). Rates
are compared as billed, so a cache rate written out at the input rate agrees with one
left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from ._changes import PriceChange, as_billed
from ._models_dev import SkippedModel
from ._table import PriceTable


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditFinding:
    """One disagreement: the rates ``differ``, or upstream lacks the model (``missing``) or
    lists it in a form that could not be mapped (``unmapped``)."""

    provider: str
    model: str
    kind: Literal["differs", "missing", "unmapped"]
    detail: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}: {self.kind}: {self.detail}"


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditReport:
    """Every entry of the audited table, sorted into ``agreed``, ``findings`` and
    ``documented_absent`` (entries whose ``absent_upstream`` explains the gap)."""

    agreed: tuple[str, ...] = ()
    findings: tuple[AuditFinding, ...] = ()
    documented_absent: tuple[str, ...] = ()

    @property
    def checked(self) -> int:
        """How many entries were compared."""
        return len(self.agreed) + len(self.findings) + len(self.documented_absent)

    def __str__(self) -> str:
        lines = [
            f"{self.checked} entries: {len(self.agreed)} agree, {len(self.findings)} disagree, "
            f"{len(self.documented_absent)} absent upstream as documented"
        ]
        lines += [f"  {finding}" for finding in self.findings]
        return "\n".join(lines)


def audit(
    table: PriceTable, upstream: PriceTable, skipped: Iterable[SkippedModel] = ()
) -> AuditReport:
    """Compare every entry of ``table`` with ``upstream`` (with the models upstream
    ``skipped``, so an unmapped one is told apart from a missing one). Fetches nothing."""
    unmapped = {(s.provider, s.model): s.reason for s in skipped}
    agreed: list[str] = []
    findings: list[AuditFinding] = []
    absent: list[str] = []
    for provider, model, entry in table.items():
        name = f"{provider}/{model}"
        theirs = upstream.cost(provider, model)
        if theirs is None:
            reason = unmapped.get((provider, model))
            if reason is not None:
                findings.append(
                    AuditFinding(provider=provider, model=model, kind="unmapped", detail=reason)
                )
            elif entry.absent_upstream:
                absent.append(name)
            else:
                detail = "upstream does not list it (set absent_upstream if that is expected)"
                findings.append(
                    AuditFinding(provider=provider, model=model, kind="missing", detail=detail)
                )
        elif as_billed(entry.cost) == as_billed(theirs):
            agreed.append(name)
        else:
            change = PriceChange(provider=provider, model=model, before=entry.cost, after=theirs)
            detail = str(change).removeprefix(f"{name}: ") + " (ours -> upstream)"
            findings.append(
                AuditFinding(provider=provider, model=model, kind="differs", detail=detail)
            )
    return AuditReport(
        agreed=tuple(agreed), findings=tuple(findings), documented_absent=tuple(absent)
    )
