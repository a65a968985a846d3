"""Every package's CHANGELOG.md follows one format, so a reader (and a release script)
finds the same sections everywhere:

    # Changelog — <distribution name>

    ## Unreleased

    ### Added
    - ...
    ### Changed
    ### Fixed
    ### Removed

    ## 0.2.0 — 2026-05-04        (a released version: its number and date)

Sections appear in that order, each at most once per version and never empty; entries
are list items (nested items and indented continuation lines allowed); there is no other
heading. A package never released has nothing a change could break: its entries carry no
"Breaking" label.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MEMBERS = sorted(
    path.parent
    for pattern in ("packages/*/pyproject.toml", "integrations/*/pyproject.toml")
    for path in REPO.glob(pattern)
)
SECTIONS = ("Added", "Changed", "Fixed", "Removed")
_RELEASED = re.compile(r"\d+\.\d+\.\d+(?:[a-z]+\d+)? — \d{4}-\d{2}-\d{2}")
_BREAKING = re.compile(r"\*\*breaking\b|\bbreaking:", re.IGNORECASE)


@dataclass
class Version:
    """One ``##`` section of a changelog."""

    title: str
    line: int
    sections: list[tuple[str, int, int]] = field(default_factory=list)  # name, line, entries


def problems(text: str, distribution: str) -> list[str]:
    """What breaks the format in ``text``, the changelog of ``distribution``, by line."""
    lines = text.splitlines()
    found: list[str] = []
    if not lines or lines[0] != f"# Changelog — {distribution}":
        found.append(f"line 1: the title must be '# Changelog — {distribution}'")
    versions: list[Version] = []
    for number, line in enumerate(lines[1:], start=2):
        heading = re.match(r"(#+) (.*)", line)
        if heading is not None:
            level, title = len(heading[1]), heading[2].strip()
            if level == 2:
                versions.append(Version(title, number))
            elif level == 3 and versions:
                versions[-1].sections.append((title, number, 0))
            else:
                found.append(f"line {number}: heading {line!r} (only ## versions and ### sections)")
            continue
        if not line.strip():
            continue
        if not versions or not versions[-1].sections:
            found.append(f"line {number}: text outside a ### section: {line[:60]!r}")
        elif not line.startswith(("- ", "  ")):
            found.append(f"line {number}: not a list item or its continuation: {line[:60]!r}")
        elif line.startswith("- "):
            name, start, entries = versions[-1].sections[-1]
            versions[-1].sections[-1] = (name, start, entries + 1)
    if not versions or versions[0].title != "Unreleased":
        found.append("the first ## section must be '## Unreleased'")
    for version in versions:
        if version is not versions[0] and not _RELEASED.fullmatch(version.title):
            found.append(
                f"line {version.line}: '## {version.title}': a released version is "
                "'## X.Y.Z — YYYY-MM-DD' (and only the first section is Unreleased)"
            )
        names = [name for name, _, _ in version.sections]
        for name, start, entries in version.sections:
            if name not in SECTIONS:
                found.append(f"line {start}: '### {name}' is not one of {', '.join(SECTIONS)}")
            elif entries == 0:
                found.append(f"line {start}: '### {name}' has no entry")
        known = [name for name in names if name in SECTIONS]
        if known != sorted(set(known), key=SECTIONS.index):
            found.append(
                f"line {version.line}: '## {version.title}' has its sections as "
                f"{', '.join(known)}; each at most once, in the order {', '.join(SECTIONS)}"
            )
    if all(version.title == "Unreleased" for version in versions):
        for number, line in enumerate(lines, start=1):
            if _BREAKING.search(line):
                found.append(f"line {number}: a 'Breaking' label, though nothing was released")
    return found


def test_every_member_is_checked() -> None:
    assert len(MEMBERS) >= 12


@pytest.mark.parametrize("member", MEMBERS, ids=lambda path: path.name)
def test_the_changelog_follows_the_one_format(member: Path) -> None:
    project = tomllib.loads((member / "pyproject.toml").read_text("utf-8"))["project"]
    text = (member / "CHANGELOG.md").read_text("utf-8")
    assert problems(text, project["name"]) == []


GOOD = """\
# Changelog — yoagent-x

## Unreleased

### Added

- A thing,
  over two lines.
  - A nested detail.

### Fixed

- A bug.

## 0.1.0 — 2026-01-31

### Changed

- **Breaking.** Something released changed.
"""


def test_a_changelog_in_the_format_passes() -> None:
    assert problems(GOOD, "yoagent-x") == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("# Changelog — yoagent-x", "# Changelog"), "line 1: the title"),
        (("## Unreleased", "## Unreleased — 0.1.0"), "the first ## section must be"),
        (("## 0.1.0 — 2026-01-31", "## 0.1.0 — unreleased"), "a released version is"),
        (("### Fixed", "### Breaking"), "'### Breaking' is not one of"),
        (("### Fixed", "### Packaging"), "'### Packaging' is not one of"),
        (("### Fixed", "### Added"), "each at most once, in the order"),
        (("### Added", "### Removed"), "each at most once, in the order"),
        (("- A bug.", ""), "'### Fixed' has no entry"),
        (("- A bug.", "#### Details\n\n- A bug."), "heading '#### Details'"),
        (("### Added\n", "First release.\n\n### Added\n"), "text outside a ### section"),
        (("- A bug.", "A paragraph."), "not a list item"),
    ],
)
def test_each_departure_from_the_format_is_named(change: tuple[str, str], problem: str) -> None:
    text = GOOD.replace(*change, 1)
    assert text != GOOD
    found = problems(text, "yoagent-x")
    assert any(problem in line for line in found), found


def test_a_breaking_label_is_refused_only_before_a_first_release() -> None:
    unreleased = GOOD.split("## 0.1.0")[0] + "### Removed\n\n- **Breaking.** Gone.\n"
    assert any("'Breaking' label" in line for line in problems(unreleased, "yoagent-x"))
    assert problems(GOOD, "yoagent-x") == []
