"""The documentation site covers every package: each ``yoagent.<name>`` a package ships has
an API page (docs/api/<name>.md) that renders it from its docstrings. ``mkdocs build
--strict`` (in .ci/run) then fails on anything the pages cannot render."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shipped_subpackages() -> list[str]:
    """Every ``yoagent.<name>`` under a package's src/ (packages/*, integrations/*)."""
    found = {
        init.parent.name
        for pattern in (
            "packages/*/src/yoagent/*/__init__.py",
            "integrations/*/src/yoagent/*/__init__.py",
        )
        for init in REPO.glob(pattern)
    }
    return sorted(found)


def test_every_package_has_an_api_page() -> None:
    names = shipped_subpackages()
    assert "core" in names
    missing = [
        f"docs/api/{name}.md"
        for name in names
        if f"::: yoagent.{name}" not in _read(REPO / "docs" / "api" / f"{name}.md")
    ]
    assert missing == [], "add a page holding `::: yoagent.<name>` for each"


def test_no_api_page_names_a_package_that_does_not_exist() -> None:
    pages = sorted(path.stem for path in (REPO / "docs" / "api").glob("*.md"))
    assert pages == shipped_subpackages()


def test_a_public_submodule_a_package_exposes_has_its_own_directive() -> None:
    """A module in a package's ``__all__`` (``yoagent.providers.models``, imported on first
    use) is not rendered by the package's ``:::``: its page names it too."""
    missing: list[str] = []
    for name in shipped_subpackages():
        package = importlib.import_module(f"yoagent.{name}")
        page = _read(REPO / "docs" / "api" / f"{name}.md")
        for member in getattr(package, "__all__", ()):
            if isinstance(getattr(package, member), types.ModuleType):
                directive = f"::: yoagent.{name}.{member}"
                if directive not in page:
                    missing.append(f"docs/api/{name}.md: {directive}")
    assert missing == []


def _read(path: Path) -> str:
    return path.read_text("utf-8") if path.is_file() else ""
