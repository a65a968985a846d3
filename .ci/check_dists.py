"""Check the built wheels and sdists: what PyPI and a user would get.

    uv build --all-packages --out-dir dist/
    uv run python .ci/check_dists.py dist/ --workspace  # --workspace: every package is there

For every wheel and sdist: ``twine check --strict`` (the long description renders on
PyPI), and its metadata carries what a release needs — the MIT licence expression and
LICENSE (the root's text) inside the archive, the Project-URLs (repository,
documentation, changelog, issues), author, keywords, classifiers PyPI knows (Python
3.11–3.13, ``Typing :: Typed``, an operating system), and a description with no relative
links (they are dead on PyPI). A wheel must not ship ``yoagent/__init__.py`` (``yoagent`` is
a PEP 420 namespace) and each ``yoagent.<name>`` it ships carries ``py.typed``. With
``--workspace`` every package must have a wheel and an sdist there, and its folder the
root's LICENSE.
Exit status 1 on any problem, one line each.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from email.message import Message
from email.parser import Parser
from pathlib import Path

from packaging.utils import canonicalize_name, parse_sdist_filename, parse_wheel_filename
from trove_classifiers import classifiers as known_classifiers
from workspace import ROOT, packages

LICENSE = (ROOT / "LICENSE").read_text("utf-8")
PYTHONS = ("3.11", "3.12", "3.13")
PROJECT_URLS = ("repository", "documentation", "changelog", "issues")
# A Markdown link, image or link definition whose target is not absolute:
# [text](target), ![alt](target), [label]: target.
_RELATIVE_LINK = re.compile(
    r"!?\[[^\]]*\]\((?!https?://|mailto:|#)([^)\s]+)[^)]*\)"
    r"|^ {0,3}\[[^\]]+\]:\s*(?!https?://|mailto:|#)(\S+)",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Artifact:
    """A built distribution's metadata and the files it holds."""

    path: Path
    metadata: Message
    files: dict[str, bytes]  # the files that matter here: LICENSE copies, py.typed, inits


def read_wheel(path: Path) -> Artifact:
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = Parser().parsestr(archive.read(info).decode("utf-8"))
        wanted = [n for n in names if _interesting(n)]
        return Artifact(path, metadata, {n: archive.read(n) for n in wanted})


def read_sdist(path: Path) -> Artifact:
    with tarfile.open(path) as archive:
        members = {m.name.split("/", 1)[1]: m for m in archive.getmembers() if "/" in m.name}
        pkg_info = archive.extractfile(members["PKG-INFO"])
        assert pkg_info is not None
        metadata = Parser().parsestr(pkg_info.read().decode("utf-8"))
        files: dict[str, bytes] = {}
        for name, member in members.items():
            extracted = archive.extractfile(member) if _interesting(name) else None
            if extracted is not None:
                files[name] = extracted.read()
        return Artifact(path, metadata, files)


def _interesting(name: str) -> bool:
    return name.rsplit("/", 1)[-1] in {"LICENSE", "py.typed", "__init__.py"}


def metadata_problems(metadata: Message) -> list[str]:
    """What a release needs in the core metadata and does not find there."""
    wrong: list[str] = []
    if metadata.get("License-Expression") != "MIT":
        wrong.append(f"License-Expression is {metadata.get('License-Expression')!r}, not 'MIT'")
    if "LICENSE" not in metadata.get_all("License-File", []):
        wrong.append("no License-File: LICENSE")
    labels = {
        canonicalize_name(url.split(",", 1)[0]) for url in metadata.get_all("Project-URL", [])
    }
    for label in PROJECT_URLS:
        if label not in labels:
            wrong.append(f"no Project-URL labelled {label!r}")
    if not (metadata.get("Author") or metadata.get("Author-email")):
        wrong.append("no author")
    if not metadata.get("Keywords"):
        wrong.append("no keywords")
    classifiers = metadata.get_all("Classifier", [])
    for unknown in sorted(set(classifiers) - known_classifiers):
        wrong.append(f"classifier {unknown!r} is not one PyPI accepts")
    for python in PYTHONS:
        if f"Programming Language :: Python :: {python}" not in classifiers:
            wrong.append(f"no classifier for Python {python}")
    if "Typing :: Typed" not in classifiers:
        wrong.append("no 'Typing :: Typed' classifier")
    if not any(c.startswith("Operating System ::") for c in classifiers):
        wrong.append("no 'Operating System ::' classifier")
    description = metadata.get_payload()
    assert isinstance(description, str)
    for inline, definition in _RELATIVE_LINK.findall(description):
        target = inline or definition
        wrong.append(f"the description links {target!r}, which is dead on PyPI: use a full URL")
    return wrong


def wheel_problems(wheel: Artifact) -> list[str]:
    wrong = metadata_problems(wheel.metadata)
    licenses = [n for n in wheel.files if n.endswith(".dist-info/licenses/LICENSE")]
    if not licenses:
        wrong.append("no .dist-info/licenses/LICENSE")
    elif wheel.files[licenses[0]].decode("utf-8") != LICENSE:
        wrong.append("its LICENSE differs from the repository's LICENSE")
    if "yoagent/__init__.py" in wheel.files:
        wrong.append("ships yoagent/__init__.py, which breaks the PEP 420 namespace")
    subpackages = {
        n.split("/")[1] for n in wheel.files if n.startswith("yoagent/") and n.count("/") == 2
    }
    for sub in sorted(subpackages):
        if f"yoagent/{sub}/py.typed" not in wheel.files:
            wrong.append(f"yoagent/{sub}/ has no py.typed")
    return wrong


def sdist_problems(sdist: Artifact) -> list[str]:
    wrong = metadata_problems(sdist.metadata)
    if "LICENSE" not in sdist.files:
        wrong.append("no LICENSE at the top of the sdist")
    elif sdist.files["LICENSE"].decode("utf-8") != LICENSE:
        wrong.append("its LICENSE differs from the repository's LICENSE")
    return wrong


def check(dist: Path, *, every_package: bool) -> list[str]:
    """Every problem with the distributions in ``dist``, prefixed with the file name."""
    wheels = sorted(dist.glob("*.whl"))
    sdists = sorted(dist.glob("*.tar.gz"))
    wrong: list[str] = []
    if not wheels and not sdists:
        return [f"{dist}: no wheel or sdist to check"]
    built: set[tuple[str, str]] = set()
    for wheel in wheels:
        name, version, *_ = parse_wheel_filename(wheel.name)
        built.add((name, f"{version} wheel"))
        wrong += [f"{wheel.name}: {p}" for p in wheel_problems(read_wheel(wheel))]
    for sdist in sdists:
        name, version = parse_sdist_filename(sdist.name)
        built.add((name, f"{version} sdist"))
        wrong += [f"{sdist.name}: {p}" for p in sdist_problems(read_sdist(sdist))]
    if every_package:
        for package in packages():
            for kind in ("wheel", "sdist"):
                if (package.name, f"{package.version} {kind}") not in built:
                    wrong.append(f"{package.relative}: no {kind} of {package.version} was built")
            copy = package.folder / "LICENSE"
            if not copy.is_file() or copy.read_text("utf-8") != LICENSE:
                wrong.append(f"{package.relative}/LICENSE is missing or differs from ./LICENSE")
    twine = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *map(str, wheels + sdists)],
        capture_output=True,
        text=True,
        check=False,
    )
    if twine.returncode != 0:
        wrong.append(f"twine check --strict failed:\n{twine.stdout}{twine.stderr}")
    return wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("dist", type=Path, help="the folder holding the wheels and sdists")
    parser.add_argument(
        "--workspace", action="store_true", help="every workspace package must be there"
    )
    args = parser.parse_args(argv)
    wrong = check(args.dist, every_package=args.workspace)
    for line in wrong:
        print(f"FAILED: {line}")
    count = len(list(args.dist.glob("*.whl")) + list(args.dist.glob("*.tar.gz")))
    print(f"distributions: {count} checked, {len(wrong)} problem(s)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
