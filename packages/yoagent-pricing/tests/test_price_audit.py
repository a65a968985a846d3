"""The price audit: every bundled entry, and every genai-prices entry models.dev-shaped
data lists, compared with that data.

Informational: disagreements are listed (as a warning in pytest's summary), never a
failure, and nothing is fetched. The reference data is read in place from
``../shared/reference`` beside the checkout; where it is absent the audit runs against
this package's own hand-written models.dev fixture.
"""

from __future__ import annotations

import warnings

import pytest
from pricing_helpers import FIXTURES, SHARED_REFERENCE

from yoagent.core import CostConfig
from yoagent.pricing import PriceEntry, PriceTable, audit, genai_prices, parse_models_dev

REFERENCE_SLICE = SHARED_REFERENCE / "models_dev_slice.json"
REFERENCE_SNAPSHOT = SHARED_REFERENCE / "yoagent-prices.json"


# A bundled price that models.dev-shaped data disagrees with (check the vendor page) is
# reported as a plain UserWarning: a warning class defined in a test module cannot cross
# from a pytest-xdist worker to the controller (it is not importable by name there).
PriceAuditFinding = UserWarning


def test_every_bundled_entry_is_compared_with_the_models_dev_slice() -> None:
    if not REFERENCE_SLICE.exists():
        pytest.skip(f"no models.dev reference slice at {REFERENCE_SLICE}")
    upstream = parse_models_dev(REFERENCE_SLICE.read_text())
    bundled = PriceTable.bundled()
    report = audit(bundled, upstream.table, upstream.skipped)

    # Every entry is sorted into exactly one outcome; what the outcomes are is not asserted.
    outcomes = [*report.agreed, *report.documented_absent]
    outcomes += [f"{f.provider}/{f.model}" for f in report.findings]
    assert sorted(outcomes) == sorted(f"{p}/{m}" for p, m in bundled)
    if report.findings:
        warnings.warn(
            PriceAuditFinding(f"price audit against {REFERENCE_SLICE.name}:\n{report}"),
            stacklevel=1,
        )


def test_genai_prices_is_compared_with_the_models_dev_slice_where_both_list_a_model() -> None:
    if not REFERENCE_SLICE.exists():
        pytest.skip(f"no models.dev reference slice at {REFERENCE_SLICE}")
    upstream = parse_models_dev(REFERENCE_SLICE.read_text())
    genai = genai_prices()
    # genai-prices lists hundreds of models the slice does not: compare the shared ones, and
    # count the slice's models genai-prices lacks (those the snapshot must price).
    shared = PriceTable({(p, m): e for p, m, e in genai.table.items() if (p, m) in upstream.table})
    report = audit(shared, upstream.table, upstream.skipped)
    assert report.checked == len(shared) > 0
    assert not [f for f in report.findings if f.kind != "differs"]
    lacking = sorted(
        f"{p}/{m}"
        for p, m in upstream.table
        if (p, m) not in genai.table and p in genai.table.providers()
    )
    if report.findings or lacking:
        lines = [f"genai-prices {genai.version} against {REFERENCE_SLICE.name}:", str(report)]
        lines += [f"  lacks {name}" for name in lacking]
        warnings.warn(PriceAuditFinding("\n".join(lines)), stacklevel=1)


def test_the_audit_runs_on_the_packages_own_fixture_and_sees_a_planted_disagreement() -> None:
    upstream = parse_models_dev((FIXTURES / "models_dev_small.json").read_text())
    ours = PriceTable(
        {
            ("acme", "flat"): PriceEntry(
                cost=CostConfig(input=4, output=20, cache_read=0.2, cache_write=5)
            ),
            ("acme", "tiered"): PriceEntry(cost=CostConfig(input=5, output=31, cache_read=0.5)),
            ("acme", "audio"): PriceEntry(
                cost=CostConfig(input=1, output=2, cache_read=1, cache_write=1)
            ),
            ("acme", "per-request"): PriceEntry(cost=CostConfig(input=1, output=2)),
            ("acme", "gone"): PriceEntry(cost=CostConfig(input=1, output=2)),
            ("acme", "private"): PriceEntry(cost=CostConfig(input=1), absent_upstream="not public"),
        }
    )
    report = audit(ours, upstream.table, upstream.skipped)
    assert report.agreed == ("acme/audio", "acme/flat")  # cache rates written at input agree
    assert report.documented_absent == ("acme/private",)
    assert [str(f) for f in report.findings] == [
        "acme/gone: missing: upstream does not list it (set absent_upstream if that is expected)",
        "acme/per-request: unmapped: unknown cost key `per_request`",
        "acme/tiered: differs: output 31 -> 30, tiers [] -> [>272000: 10/45/1/10]"
        " (ours -> upstream)",
    ]
    assert str(report).startswith("6 entries: 2 agree, 3 disagree, 1 absent upstream as documented")


def test_the_original_snapshot_format_reads_with_nothing_ignored() -> None:
    if not REFERENCE_SNAPSHOT.exists():
        pytest.skip(f"no reference snapshot at {REFERENCE_SNAPSHOT}")
    theirs = PriceTable.from_path(REFERENCE_SNAPSHOT)
    assert theirs.ignored_fields == ()
    assert sorted(theirs) == sorted(PriceTable.bundled())
