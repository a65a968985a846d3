"""The documentation site covers every package: each ``yoagent.<name>`` a package ships has
an API page (docs/api/<name>.md) that renders it from its docstrings. ``mkdocs build
--strict`` (in .ci/run) then fails on anything the pages cannot render."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

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


def required_sections(name: str) -> list[str]:
    """The modules the API page of ``yoagent.<name>`` renders besides the package: each
    module its ``__all__`` exports (``yoagent.providers.models``) and its test helpers
    (``yoagent.<name>.testing``). Read from the source, nothing imported."""
    (init,) = [
        path
        for pattern in ("packages", "integrations")
        for path in REPO.glob(f"{pattern}/*/src/yoagent/{name}/__init__.py")
    ]
    exported: list[str] = []
    imported: set[str] = set()  # `from .restore import restore`: a function, not the module
    for node in ast.walk(ast.parse(init.read_text("utf-8"))):
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            exported = list(ast.literal_eval(node.value))
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            imported.update(alias.asname or alias.name for alias in node.names)
    folder = init.parent
    modules = [
        entry
        for entry in exported
        if entry not in imported
        and ((folder / f"{entry}.py").is_file() or (folder / entry / "__init__.py").is_file())
    ]
    if (folder / "testing.py").is_file() and "testing" not in modules:
        modules.append("testing")
    return [f"yoagent.{name}.{module}" for module in modules]


def test_the_providers_page_renders_the_presets() -> None:
    assert "yoagent.providers.models" in required_sections("providers")


@pytest.mark.parametrize("name", shipped_subpackages())
def test_an_api_page_renders_the_modules_its_package_exports(name: str) -> None:
    page = _read(REPO / "docs" / "api" / f"{name}.md")
    missing = [module for module in required_sections(name) if f"::: {module}\n" not in page]
    assert missing == [], f"docs/api/{name}.md: add a `::: <module>` section for each"


def _read(path: Path) -> str:
    return path.read_text("utf-8") if path.is_file() else ""
