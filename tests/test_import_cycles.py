"""No import circle in any package: a module never (even under TYPE_CHECKING) imports one
that imports it back, directly or through others.

The graph is read from the source (``ast``), so it sees every import statement, those in
functions and ``if TYPE_CHECKING:`` blocks included. An edge goes to the module an import
names (``from yoagent.core import X`` names the facade ``yoagent.core`` itself, which is
the circle a private module must never close); the ``__init__`` of the packages above it,
already importing when a facade pulls its submodules in, are not edges.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE_ROOTS = sorted(
    path
    for pattern in ("packages/*/src", "integrations/*/src")
    for path in ROOT.glob(pattern)
    if path.is_dir()
)


def _modules(src: Path) -> dict[str, Path]:
    """Every module under ``src`` by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for path in src.rglob("*.py"):
        parts = list(path.relative_to(src).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imported(name: str, path: Path, known: set[str]) -> Iterator[str]:
    """The modules of ours that ``name`` (at ``path``) imports."""
    is_package = path.name == "__init__.py"
    package = name if is_package else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            targets = [module] + [f"{module}.{alias.name}" for alias in node.names]
        for target in targets:
            if target in known and target != name:
                yield target


def _graph() -> dict[str, set[str]]:
    modules: dict[str, Path] = {}
    for src in SOURCE_ROOTS:
        modules.update(_modules(src))
    known = set(modules)
    return {name: set(_imported(name, path, known)) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


LAYER_TWO = [
    "yoagent.decision",
    "yoagent.gasp",
    "yoagent.mcp",
    "yoagent.pricing",
    "yoagent.providers",
    "yoagent.testing",
    "yoagent.tools",
]
"""Every package under ``packages/`` but core: each may import core and nothing else of ours."""


def test_the_source_roots_were_found() -> None:
    """Every package of the workspace is walked (a new one is added here and above)."""
    names = {path.parent.name for path in SOURCE_ROOTS}
    expected = {"yoagent-core", "yoagent-cli", "yoagent-openapi", "yoagent-ray", "yoagent-dbos"}
    expected |= {"yoagent-ui", "yoagent-a2a"}
    expected |= {name.replace(".", "-") for name in LAYER_TWO}
    assert names == expected


def test_no_package_has_an_import_cycle() -> None:
    assert _cycles(_graph()) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    """The check above can fail: a made-up circle through three modules is reported."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize("layer_two", LAYER_TWO)
def test_core_imports_nothing_of_ours_and_layer_two_only_core(layer_two: str) -> None:
    graph = _graph()
    core_deps = {
        dep for name, deps in graph.items() if name.startswith("yoagent.core") for dep in deps
    }
    assert {dep for dep in core_deps if not dep.startswith("yoagent.core")} == set()
    deps = {dep for name, deps in graph.items() if name.startswith(layer_two) for dep in deps}
    assert {dep.split(".")[1] for dep in deps} <= {"core", layer_two.split(".")[1]}


def test_core_keeps_about_half_its_old_top_level_modules() -> None:
    """36 flat modules before the restructure; private subpackages behind public
    namespaces now, one per audience (issue 26), each a reviewed name."""
    core = ROOT / "packages/yoagent-core/src/yoagent/core"
    top = [p for p in core.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()]
    private = [p for p in top if p.name.startswith("_") and p.name != "__init__.py"]
    public = sorted(p.stem for p in top if not p.name.startswith("_"))
    assert len(private) <= 18
    assert public == ["context", "extension", "loop", "provider", "session", "state", "support"]
