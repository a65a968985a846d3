"""Project instructions: ``AGENTS.md`` (and ``CLAUDE.md``) from the working folder and its
parents, for the system prompt; ``/init`` writes a starter ``AGENTS.md``.

The folders looked in are :func:`~.project.project_folders`: from the repository root (or
the home folder, outside a repository) down to the working folder, never a shared parent
above them; outer files come first, so the nearer, more specific ones are read last. In
one folder ``AGENTS.md`` comes before ``CLAUDE.md``; a file that is the other one under a
second name (a link, or the same text) is read once. Each file is cut to
:data:`MAX_FILE_CHARS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .project import project_folders

FILE_NAMES = ("AGENTS.md", "CLAUDE.md")
MAX_FILE_CHARS = 40_000


@dataclass(slots=True, frozen=True)
class InstructionFile:
    """One instructions file and its text (cut to :data:`MAX_FILE_CHARS`)."""

    path: Path
    text: str


def find_instructions(cwd: Path) -> list[InstructionFile]:
    """The instruction files for ``cwd``, outermost first (see the module docstring)."""
    folders = project_folders(cwd)
    found: list[InstructionFile] = []
    seen_paths: set[Path] = set()
    seen_texts: set[str] = set()
    for folder in reversed(folders):
        for name in FILE_NAMES:
            path = folder / name
            try:
                if not path.is_file():
                    continue
                real = path.resolve()
                text = path.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                continue
            if real in seen_paths or not text or text in seen_texts:
                continue
            seen_paths.add(real)
            seen_texts.add(text)
            if len(text) > MAX_FILE_CHARS:
                text = (
                    text[:MAX_FILE_CHARS]
                    + f"\n[… cut: the file is longer than {MAX_FILE_CHARS} characters]"
                )
            found.append(InstructionFile(path=path, text=text))
    return found


def instructions_section(files: Sequence[InstructionFile]) -> str:
    """The system prompt's section holding ``files`` (empty when there are none)."""
    if not files:
        return ""
    parts = [
        "## Project instructions\n\n"
        "The project's own instructions follow (later files are nearer the working folder "
        "and win where they disagree). Follow them."
    ]
    for file in files:
        parts.append(f"### {file.path}\n\n{file.text}")
    return "\n\n".join(parts)


_MARKERS: tuple[tuple[str, str], ...] = (
    ("pyproject.toml", "Python: `uv run pytest` (or `python -m pytest`) runs the tests"),
    ("package.json", "JavaScript/TypeScript: `npm test` runs the tests"),
    ("Cargo.toml", "Rust: `cargo test` runs the tests, `cargo clippy` lints"),
    ("go.mod", "Go: `go test ./...` runs the tests, `go vet ./...` checks"),
    ("Makefile", "`make` builds; see the Makefile for its targets"),
)


def starter_text(cwd: Path) -> str:
    """A starter ``AGENTS.md`` for ``cwd``: headings to fill in, and the build and test
    commands its marker files suggest."""
    hints = [f"- {hint}" for marker, hint in _MARKERS if (cwd / marker).exists()]
    commands = "\n".join(hints) if hints else "- (how to build, test and lint this project)"
    return (
        f"# {cwd.name}\n\n"
        "Instructions for coding agents working in this repository (read by yoagent and\n"
        "other agents at the start of every session).\n\n"
        "## Overview\n\n"
        "- (what this project is, and where its main parts live)\n\n"
        "## Commands\n\n"
        f"{commands}\n\n"
        "## Conventions\n\n"
        "- (code style, naming, how errors are handled)\n"
        "- Run the tests before saying a change is done.\n\n"
        "## Do not\n\n"
        "- (files or folders never to edit, commands never to run)\n"
    )


def write_starter(cwd: Path) -> Path:
    """Write ``AGENTS.md`` in ``cwd`` from :func:`starter_text`; ``FileExistsError`` when
    there is one already (it is never replaced)."""
    path = cwd / FILE_NAMES[0]
    with path.open("x", encoding="utf-8") as handle:
        handle.write(starter_text(cwd))
    return path
