"""The checks in .ci/ fail when they should: a bumped core that a range excludes, pyright
analysing nothing, a distribution missing what a release needs, and the per-package CI
matrix following the dependency graph."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / ".ci"))

import affected  # noqa: E402
import check_dists  # noqa: E402
import check_versions  # noqa: E402
import package_tests  # noqa: E402
import pyright_check  # noqa: E402
import workspace  # noqa: E402


def copy_manifests(destination: Path) -> Path:
    """The workspace's pyproject.toml files (and nothing else) under ``destination``."""
    for pattern in ("pyproject.toml", *workspace.MEMBER_GLOBS):
        for source in REPO.glob(pattern):
            target = destination / source.relative_to(REPO)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    return destination


def bump(root: Path, folder: str, version: str) -> None:
    manifest = root / folder / "pyproject.toml"
    text = manifest.read_text("utf-8")
    lines = [
        f'version = "{version}"' if line.startswith("version = ") else line
        for line in text.splitlines()
    ]
    manifest.write_text("\n".join(lines) + "\n", "utf-8")


# -- internal version ranges ---------------------------------------------------------------


def test_the_workspace_as_it_is_has_no_range_problem() -> None:
    assert check_versions.problems() == []


def test_a_bumped_core_is_reported_for_every_package_that_excludes_it(tmp_path: Path) -> None:
    root = copy_manifests(tmp_path)
    bump(root, "packages/yoagent-core", "0.2.0")

    found = check_versions.problems(root)

    members = workspace.packages(root)
    dependents = {
        member.name
        for member in members
        if "yoagent-core" in [r.name for r in workspace.internal_requirements(member, members)]
    }
    assert {"yoagent-providers", "yoagent-tools", "yoagent-cli"} <= dependents
    assert len(found) == len(dependents)
    for name in dependents:
        assert any(
            f"{name} requires 'yoagent-core" in line and "yoagent-core is 0.2.0" in line
            for line in found
        ), found


def test_a_prerelease_inside_the_range_is_admitted(tmp_path: Path) -> None:
    root = copy_manifests(tmp_path)
    bump(root, "packages/yoagent-core", "0.1.5rc1")
    assert check_versions.problems(root) == []


# -- pyright must look at every src/ file ----------------------------------------------------


def test_pyright_analysing_fewer_files_than_src_holds_fails() -> None:
    clean = {"summary": {"filesAnalyzed": 0, "errorCount": 0}}
    assert "analysed 0 file(s) but the packages' src/ trees hold 75" in " ".join(
        pyright_check.verdict(clean, 75)
    )
    assert pyright_check.verdict({"summary": {"filesAnalyzed": 75, "errorCount": 0}}, 75) == []
    errors = pyright_check.verdict({"summary": {"filesAnalyzed": 75, "errorCount": 2}}, 75)
    assert errors == ["pyright found 2 error(s)"]


def test_the_workspace_counts_every_src_file() -> None:
    expected = sum(
        1
        for pattern in ("packages/*/src/**/*.py", "integrations/*/src/**/*.py")
        for path in REPO.glob(pattern)
        if "__pycache__" not in path.parts
    )
    assert pyright_check.expected_files() == expected > 0


@pytest.mark.parametrize(
    ("include", "analysed"),
    [('["packages/*/src"]', 0), ('["packages/**/src"]', 2)],
    ids=["star-is-not-expanded", "double-star-is"],
)
def test_pyright_itself_on_a_tiny_workspace(tmp_path: Path, include: str, analysed: int) -> None:
    """What made the old config check nothing, and what fixes it, on real pyright."""
    pyright = shutil.which("pyright")
    if pyright is None:
        pytest.skip("pyright is not on PATH")
    (tmp_path / "pyproject.toml").write_text(
        f'[project]\nname = "w"\nversion = "0"\n[tool.pyright]\ninclude = {include}\n'
    )
    member = tmp_path / "packages" / "yoagent-x"
    (member / "src" / "yoagent" / "x").mkdir(parents=True)
    (member / "pyproject.toml").write_text('[project]\nname = "yoagent-x"\nversion = "0.1.0"\n')
    (member / "src" / "yoagent" / "x" / "__init__.py").write_text("VALUE: int = 1\n")
    (member / "src" / "yoagent" / "x" / "more.py").write_text("OTHER: str = 'a'\n")

    ran = subprocess.run(
        [sys.executable, str(REPO / ".ci" / "pyright_check.py"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert f"{analysed} of 2 src/ files analysed" in ran.stdout, ran.stdout + ran.stderr
    assert ran.returncode == (0 if analysed == 2 else 1)


# -- the built distributions -----------------------------------------------------------------

GOOD_METADATA = """\
Metadata-Version: 2.4
Name: yoagent-x
Version: 0.1.0
Summary: x
Project-URL: Repository, https://github.com/yologdev/yoagent-python
Project-URL: Documentation, https://github.com/yologdev/yoagent-python/tree/main/docs
Project-URL: Changelog, https://github.com/yologdev/yoagent-python/blob/main/CHANGELOG.md
Project-URL: Issues, https://github.com/yologdev/yoagent-python/issues
Author: Yolog
License-Expression: MIT
License-File: LICENSE
Keywords: ai,agent
Classifier: Operating System :: OS Independent
Classifier: Programming Language :: Python :: 3.11
Classifier: Programming Language :: Python :: 3.12
Classifier: Programming Language :: Python :: 3.13
Classifier: Typing :: Typed
Requires-Python: >=3.11
Description-Content-Type: text/markdown

# yoagent-x

Part of [yoagent](https://github.com/yologdev/yoagent-python#readme).
"""


def make_wheel(folder: Path, metadata: str, files: dict[str, str]) -> Path:
    path = folder / "yoagent_x-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("yoagent_x-0.1.0.dist-info/METADATA", metadata)
        archive.writestr(
            "yoagent_x-0.1.0.dist-info/WHEEL",
            "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        archive.writestr("yoagent_x-0.1.0.dist-info/RECORD", "")
    return path


def make_sdist(folder: Path, metadata: str, files: dict[str, str]) -> Path:
    path = folder / "yoagent_x-0.1.0.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        for name, text in {**files, "PKG-INFO": metadata}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"yoagent_x-0.1.0/{name}")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return path


GOOD_WHEEL_FILES = {
    "yoagent/x/__init__.py": "",
    "yoagent/x/py.typed": "",
    "yoagent_x-0.1.0.dist-info/licenses/LICENSE": check_dists.LICENSE,
}


def test_a_complete_wheel_and_sdist_pass(tmp_path: Path) -> None:
    make_wheel(tmp_path, GOOD_METADATA, GOOD_WHEEL_FILES)
    make_sdist(tmp_path, GOOD_METADATA, {"LICENSE": check_dists.LICENSE, "README.md": "x"})
    assert check_dists.check(tmp_path, every_package=False) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (("License-Expression: MIT", "License-Expression: Apache-2.0"), "not 'MIT'"),
        (("License-File: LICENSE\n", ""), "no License-File"),
        (
            ("Project-URL: Issues, https://github.com/yologdev/yoagent-python/issues\n", ""),
            "'issues'",
        ),
        (("Author: Yolog\n", ""), "no author"),
        (("Keywords: ai,agent\n", ""), "no keywords"),
        (("Classifier: Programming Language :: Python :: 3.12\n", ""), "Python 3.12"),
        (("Classifier: Typing :: Typed\n", ""), "Typing :: Typed"),
        (("Classifier: Operating System :: OS Independent\n", ""), "Operating System"),
        (("Typing :: Typed", "Typing :: Very Typed"), "not one PyPI accepts"),
        (
            ("(https://github.com/yologdev/yoagent-python#readme)", "(../../README.md)"),
            "dead on PyPI",
        ),
        (("Part of", "[docs]: docs/index.md\n\nPart of"), "'docs/index.md', which is dead"),
    ],
)
def test_each_missing_piece_of_metadata_is_reported(change: tuple[str, str], problem: str) -> None:
    old, new = change
    metadata = GOOD_METADATA.replace(old, new)
    assert metadata != GOOD_METADATA
    found = check_dists.metadata_problems(Parser().parsestr(metadata))
    assert any(problem in line for line in found), found


def test_project_url_labels_are_matched_as_pypi_does() -> None:
    metadata = GOOD_METADATA.replace("Project-URL: Issues,", "Project-URL: ISSUES,")
    assert check_dists.metadata_problems(Parser().parsestr(metadata)) == []


LICENSE_FILE = "yoagent_x-0.1.0.dist-info/licenses/LICENSE"
WITHOUT_LICENSE = {k: v for k, v in GOOD_WHEEL_FILES.items() if k != LICENSE_FILE}


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({**GOOD_WHEEL_FILES, "yoagent/__init__.py": ""}, "breaks the PEP 420 namespace"),
        ({**GOOD_WHEEL_FILES, "yoagent/x/py.typed": None}, "yoagent/x/ has no py.typed"),
        (WITHOUT_LICENSE, "no .dist-info/licenses/LICENSE"),
        ({**GOOD_WHEEL_FILES, LICENSE_FILE: "Apache License 2.0"}, "differs"),
    ],
)
def test_what_a_wheel_must_and_must_not_hold(
    tmp_path: Path, files: dict[str, str | None], problem: str
) -> None:
    present = {name: text for name, text in files.items() if text is not None}
    wheel = check_dists.read_wheel(make_wheel(tmp_path, GOOD_METADATA, present))
    assert any(problem in line for line in check_dists.wheel_problems(wheel))


def test_an_sdist_without_license_is_reported(tmp_path: Path) -> None:
    sdist = check_dists.read_sdist(make_sdist(tmp_path, GOOD_METADATA, {"README.md": "x"}))
    assert "no LICENSE at the top of the sdist" in check_dists.sdist_problems(sdist)


def test_twine_check_strict_runs_on_every_file(tmp_path: Path) -> None:
    """A description with no content type renders as nothing on PyPI: twine --strict fails."""
    metadata = GOOD_METADATA.replace("Description-Content-Type: text/markdown\n", "")
    make_wheel(tmp_path, metadata, GOOD_WHEEL_FILES)
    found = check_dists.check(tmp_path, every_package=False)
    assert any(line.startswith("twine check --strict failed") for line in found), found


def test_every_workspace_package_must_have_been_built(tmp_path: Path) -> None:
    make_wheel(tmp_path, GOOD_METADATA, GOOD_WHEEL_FILES)
    found = check_dists.check(tmp_path, every_package=True)
    for package in workspace.packages():
        assert f"{package.relative}: no wheel of {package.version} was built" in found


# -- each package alone, and the per-package CI matrix --------------------------------------


def test_the_isolated_run_keeps_the_workspace_pytest_settings_but_only_its_own_helpers() -> None:
    ini = package_tests.pytest_ini()
    assert ini.startswith("[pytest]\n")
    assert "asyncio_mode = auto" in ini
    assert "pythonpath =\n    tests\n" in ini
    assert "testpaths" not in ini
    assert "packages/yoagent-core/tests" not in ini


def test_node_test_peers_are_found_where_a_lock_file_pins_them(tmp_path: Path) -> None:
    mcp = workspace.ROOT / "packages" / "yoagent-mcp" / "tests"
    assert package_tests.npm_peers(mcp) == mcp / "npm"
    (tmp_path / "npm").mkdir()
    (tmp_path / "npm" / "package.json").write_text("{}")
    assert package_tests.npm_peers(tmp_path) is None  # no lock file: nothing `npm ci` can do
    assert package_tests.npm_peers(workspace.ROOT / "packages" / "yoagent-core" / "tests") is None


def by_name(names: list[workspace.Package]) -> list[str]:
    return sorted(package.name for package in names)


def test_a_change_selects_its_package_and_every_package_needing_it() -> None:
    members = workspace.packages()
    needs_tools = by_name(
        [m for m in members if "yoagent-tools" in by_name(workspace.closure(m, members))]
    )
    assert {"yoagent-tools", "yoagent-cli", "yoagent"} <= set(needs_tools)
    changed = ["packages/yoagent-tools/src/yoagent/tools/bash.py"]
    assert by_name(affected.affected(members, changed)) == needs_tools
    core = ["packages/yoagent-core/src/yoagent/core/loop.py"]
    assert by_name(affected.affected(members, core)) == by_name(
        [m for m in members if "yoagent-core" in by_name(workspace.closure(m, members))]
    )


@pytest.mark.parametrize(
    ("changed", "everything"),
    [
        (["uv.lock"], True),
        ([".ci/run"], True),
        ([".github/workflows/ci.yml"], True),
        (["docs/tools.md", "README.md", "tests/test_docs_examples.py"], False),
        (["packages/yoagent-core-extras/README.md"], False),  # a prefix is not a folder
    ],
)
def test_workspace_files_select_every_package_and_others_none(
    changed: list[str], everything: bool
) -> None:
    members = workspace.packages()
    chosen = affected.affected(members, changed)
    assert by_name(chosen) == (by_name(members) if everything else [])


def test_the_matrix_covers_three_pythons_and_macos_where_promised() -> None:
    members = workspace.packages()
    rows = affected.matrix(members)["include"]
    tools = [(r["python"], r["os"]) for r in rows if r["package"] == "yoagent-tools"]
    assert sorted(tools) == sorted(
        (python, system)
        for python in ("3.11", "3.12", "3.13")
        for system in ("ubuntu-latest", "macos-latest")
    )
    core = [(r["python"], r["os"]) for r in rows if r["package"] == "yoagent-core"]
    assert [system for _, system in core] == ["ubuntu-latest"] * 3
    json.dumps({"include": rows})  # what GitHub reads


# -- .ci/parts.sh: the real parts some packages' tests run against ----------------------------
def run_parts(script: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` in bash with .ci/parts.sh sourced, apt-get, npm and sudo replaced by
    functions that print what they were asked (nothing is installed)."""
    stubs = (
        '_apt_install() { echo "apt-get install $*"; }\n'
        'npm() { echo "npm $*"; }\n'
        'bwrap() { echo "bwrap $*"; }\n'
    )
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\nsource .ci/parts.sh\n{stubs}{script}"],
        cwd=REPO,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **env},
        capture_output=True,
        text=True,
        check=False,
    )


def test_every_package_with_node_test_peers_has_a_part_that_installs_them() -> None:
    parts = (REPO / ".ci/parts.sh").read_text("utf-8")
    for package in workspace.packages():
        peers = package_tests.npm_peers(package.folder / "tests")
        if peers is not None:
            assert f"part_{package.name.replace('-', '_')}()" in parts
            assert f"_npm_ci {peers.relative_to(REPO).as_posix()}" in parts
    named = set(re.findall(r"^part_(\w+)\(\)", parts, re.MULTILINE))
    assert named <= {package.name.replace("-", "_") for package in workspace.packages()}


def test_a_package_needing_no_part_installs_nothing(tmp_path: Path) -> None:
    done = run_parts("install_parts yoagent-pricing yoagent-core", tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_part_installs_what_is_missing_and_says_so_to_later_github_steps(
    tmp_path: Path,
) -> None:
    github_env = tmp_path / "github_env"
    chromium = tmp_path / "chrome"
    chromium.write_text('#!/bin/sh\necho "chrome $*"\n', "utf-8")
    chromium.chmod(0o755)
    done = run_parts(
        'install_parts yoagent-dbos yoagent-ui\necho "REQUIRE=${YOAGENT_DBOS_REQUIRE_POSTGRES:-}"',
        tmp_path,
        GITHUB_ENV=str(github_env),
        CHROMIUM=str(chromium),
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "npm ci --prefix integrations/yoagent-ui/tests/npm --no-audit --no-fund --loglevel=error"
        in lines
    )
    assert "chrome --version" in lines  # $CHROMIUM's build is used: no apt-get
    assert not any(line.startswith("apt-get install chromium") for line in lines)
    assert "REQUIRE=1" in lines
    assert github_env.read_text("utf-8") == "YOAGENT_DBOS_REQUIRE_POSTGRES=1\n"


def test_ci_run_installs_every_part() -> None:
    parts = re.findall(r"^part_(\w+)\(\)", (REPO / ".ci/parts.sh").read_text("utf-8"), re.M)
    run = (REPO / ".ci/run").read_text("utf-8")
    installed = {
        name.replace("-", "_")
        for line in re.findall(r"^install_parts (.+)$", run, re.MULTILINE)
        for name in line.split()
    }
    assert installed == set(parts)


def test_with_no_package_named_every_part_is_installed(tmp_path: Path) -> None:
    done = run_parts("install_parts", tmp_path, CHROMIUM="/bin/true")
    assert done.returncode == 0, done.stderr
    sections = [line for line in done.stdout.splitlines() if line.startswith("==> ")]
    assert len(sections) == 5  # bubblewrap, MCP peers, PostgreSQL, UI clients, chromium
    assert "bwrap --version" in done.stdout.splitlines()


def test_run_as_a_script_it_installs_the_named_packages_parts(tmp_path: Path) -> None:
    github_env = tmp_path / "github_env"
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    for name, body in {"npm": 'echo "npm $*"', "bwrap": 'echo "bwrap $*"'}.items():
        (bin_folder / name).write_text(f"#!/bin/sh\n{body}\n", "utf-8")
        (bin_folder / name).chmod(0o755)
    done = subprocess.run(
        ["bash", str(REPO / ".ci/parts.sh"), "yoagent-tools", "yoagent-mcp"],
        cwd=tmp_path,  # the script finds the repository itself
        env={"PATH": f"{bin_folder}:/usr/bin:/bin", "GITHUB_ENV": str(github_env)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        "npm ci --prefix packages/yoagent-mcp/tests/npm --no-audit --no-fund --loglevel=error"
        in lines
    )
    assert "bwrap --version" in lines
    assert github_env.read_text("utf-8") == "YOAGENT_REQUIRE_SANDBOX=1\n"
