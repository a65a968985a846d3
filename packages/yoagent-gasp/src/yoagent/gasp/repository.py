"""An agent repository on disk: its layout, the durable append, and its commits.

Git goes through gitpython. A run's closing commit is one ``git commit -- <log>`` run
through gitpython's command wrapper (the log is already tracked, so no ``git add``; "did
it change" is answered in-process from HEAD's blob, read through gitpython's persistent
``cat-file``): one git process per run instead of three (each start costs ≈ 5–10 ms on
the benchmark machine; see ``benchmarks/RESULTS.md``). ``git commit -- <paths>`` commits only
those paths (a user's other staged work stays staged) and runs the repository's commit
hooks, as the reference runtime does; gitpython's in-process ``index.commit`` would
commit the whole index, sweeping staged changes into a run's commit, so it is not used.

Every git process runs in a session of its own (:class:`~._git.DetachedRepo`): a Ctrl+C
at the terminal is the application's, and must not kill the helpers a later commit
needs. A commit's sha is read from the refs on disk, never through the object helper, so
a commit that was made is never reported as failed.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path
from typing import Final

import git

from yoagent.core.support import atomic_write

from ._errors import GaspError
from ._git import DetachedRepo, git_errors, object_lookup
from .fold import LOG_PATH
from .identity import IDENTITY_DIR, MANIFEST, Manifest, identity_hash, read_manifest
from .lease import LEASE_PATH

logger = logging.getLogger("yoagent.gasp")

GITIGNORED: Final = (LEASE_PATH, ".agent/HEAD")
SCAFFOLDING_MESSAGE: Final = "gasp: agent scaffolding"
SCAFFOLDING_PATHS: Final = (MANIFEST, IDENTITY_DIR, ".gitignore", LOG_PATH)
WRITTEN_THROUGH: Final = (".agent", LEASE_PATH, ".gitignore", "state", LOG_PATH)
"""What the recorder writes through (creates, appends to, replaces, locks or removes):
none of it may be a symbolic link, which a cloned repository could point anywhere."""
_FALLBACK_EMAIL_DOMAIN = "gasp.invalid"

_NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)
"""A symlink swapped in for the log after opening was checked is refused, not followed."""


class RepositoryError(GaspError, RuntimeError):
    """The directory is not a usable agent repository, or git refused an operation."""


def _trailer_safe(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(f"{name} must not contain a newline (it would forge commit trailers)")
    if not value.strip():
        raise ValueError(f"{name} must not be empty")
    return value


def run_commit_message(run_id: str, goal_id: str, outcome: str) -> str:
    """``run <id>: <outcome>``, a blank line, then the Run-Id / Goal / Outcome trailers."""
    _trailer_safe("run_id", run_id)
    _trailer_safe("goal", goal_id)
    _trailer_safe("outcome", outcome)
    return f"run {run_id}: {outcome}\n\nRun-Id: {run_id}\nGoal: {goal_id}\nOutcome: {outcome}"


def _refuse_links(base: Path, paths: tuple[str, ...]) -> None:
    """:class:`RepositoryError` when one of ``paths`` (relative to ``base``) is a symbolic
    link: every append, lease or rewrite through it would write outside the repository."""
    for relative in paths:
        if (base / relative).is_symlink():
            raise RepositoryError(
                f"{relative} is a symbolic link; the recorder writes only files of the "
                "repository itself (through the link it would write outside it)"
            )


class AgentRepo:
    """A GASP agent repository: a git work tree with ``AGENT.md``, ``identity/`` and the log.

    Build one with :meth:`init` (a new repository, or scaffolding added to an existing git
    work tree) or :meth:`open`.
    """

    def __init__(self, root: Path, repo: git.Repo) -> None:
        self.root = root
        self.git = repo
        self._identity_env: dict[str, str] | None = None

    # --- construction --------------------------------------------------------------------

    @classmethod
    def init(cls, root: str | Path, agent_id: str, *, identity: str | None = None) -> AgentRepo:
        """Create the layout at ``root`` (``git init`` when it is not yet a repository).

        Writes ``identity/IDENTITY.md`` (``identity`` as its text, else a one-line default)
        unless ``identity/`` exists, ``AGENT.md`` with the identity hash unless it exists,
        the ``.gitignore`` entries for the lease, and ``state/``. Nothing is committed:
        :meth:`commit_scaffolding` does that (the recorder calls it once its goal is logged).
        """
        if not agent_id.strip() or "\n" in agent_id:
            raise ValueError("agent_id must be one non-empty line")
        base = Path(root)
        base.mkdir(parents=True, exist_ok=True)
        _refuse_links(base, (MANIFEST, IDENTITY_DIR, *WRITTEN_THROUGH))  # before any write
        try:
            repo = DetachedRepo(base)
        except git.InvalidGitRepositoryError:
            repo = DetachedRepo.init(base)
        if repo.bare or repo.working_tree_dir is None:
            raise RepositoryError(f"{base} is a bare git repository; an agent needs a work tree")
        top = Path(repo.working_tree_dir).resolve()
        if top != base.resolve():
            raise RepositoryError(f"{base} is inside the git work tree {top}, not its root")
        identity_dir = base / IDENTITY_DIR
        if not identity_dir.exists():
            identity_dir.mkdir()
            text = identity if identity is not None else f"# Identity\n\nI am {agent_id}.\n"
            (identity_dir / "IDENTITY.md").write_text(text, encoding="utf-8")
        manifest_path = base / MANIFEST
        if not manifest_path.exists():
            manifest = Manifest(agent_id=agent_id, identity_hash=identity_hash(base))
            manifest_path.write_text(manifest.render(), encoding="utf-8")
        return cls._prepare(base, repo)

    @classmethod
    def open(cls, root: str | Path) -> AgentRepo:
        """Open an existing agent repository (its work tree root)."""
        base = Path(root)
        missing = f"{base} is not a git repository (the GASP layout requires one)"
        with git_errors(RepositoryError, "git", not_a_repository=missing):
            repo = DetachedRepo(base)
        if repo.working_tree_dir is None or Path(repo.working_tree_dir).resolve() != base.resolve():
            raise RepositoryError(f"{base} is not the root of a git work tree")
        read_manifest(base)  # not an agent repository: refused before anything is written
        return cls._prepare(base, repo)

    @classmethod
    def _prepare(cls, base: Path, repo: git.Repo) -> AgentRepo:
        agent_repo = cls(base, repo)
        _refuse_links(base, WRITTEN_THROUGH)
        (base / "state").mkdir(exist_ok=True)
        agent_repo._ensure_gitignore()
        return agent_repo

    def _ensure_gitignore(self) -> None:
        """The lease and HEAD are machine-local: make sure git never tracks them."""
        path = self.root / ".gitignore"
        try:
            existing = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            existing = ""
        present = {line.strip() for line in existing.splitlines()}
        missing = [entry for entry in GITIGNORED if entry not in present]
        if not missing:
            return
        if existing and not existing.endswith("\n"):
            existing += "\n"
        atomic_write(path, existing + "".join(f"{entry}\n" for entry in missing))

    # --- what it holds -------------------------------------------------------------------

    @property
    def log_path(self) -> Path:
        """``state/events.jsonl``."""
        return self.root / LOG_PATH

    def manifest(self) -> Manifest:
        """``AGENT.md``'s declarations."""
        return read_manifest(self.root)

    # --- the durable append ----------------------------------------------------------------

    def open_log(self) -> int:
        """An append-only descriptor on the log; creating the file fsyncs its directory."""
        path = self.log_path
        flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_CLOEXEC", 0) | _NO_FOLLOW
        try:
            return os.open(path, flags)
        except FileNotFoundError:
            descriptor = os.open(path, flags | os.O_CREAT, 0o644)
            directory = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(directory)
            finally:
                os.close(directory)
            return descriptor

    def cut_log(self, keep: int) -> None:
        """Cut the log back to its first ``keep`` bytes, durably — the repair of a partial
        last line a dead writer left. Refused when git has committed any of the bytes it
        would cut: the log's history is append-only, and a human must look at it."""
        committed = self._committed_log()
        if committed is not None and committed.size > keep:
            raise RepositoryError(
                f"{LOG_PATH} ends in a partial line that git has committed (HEAD holds "
                f"{committed.size} bytes, the whole lines end at {keep}); cutting it would "
                "rewrite committed history, so repair it by hand"
            )
        descriptor = os.open(self.log_path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0) | _NO_FOLLOW)
        try:
            os.ftruncate(descriptor, keep)
            os.fsync(descriptor)
        finally:
            os.close(descriptor)

    # --- commits -------------------------------------------------------------------------

    def _commit_env(self) -> dict[str, str]:
        """Environment for commits: a fallback author only when git has no identity."""
        if self._identity_env is None:
            try:
                self.git.git.var("GIT_AUTHOR_IDENT")
                self.git.git.var("GIT_COMMITTER_IDENT")
                self._identity_env = {}
            except git.GitCommandError:
                agent = self.manifest().agent_id
                name, email = f"{agent} (yoagent-gasp)", f"{agent}@{_FALLBACK_EMAIL_DOMAIN}"
                logger.info("git has no user identity here: committing as %s <%s>", name, email)
                self._identity_env = {
                    "GIT_AUTHOR_NAME": name,
                    "GIT_AUTHOR_EMAIL": email,
                    "GIT_COMMITTER_NAME": name,
                    "GIT_COMMITTER_EMAIL": email,
                }
        return self._identity_env

    def _commit_paths(self, message: str, paths: list[str]) -> str | None:
        """Stage ``paths`` and commit only them; ``None`` when none of them changed."""
        present = [p for p in paths if (self.root / p).exists()]
        if not present:
            return None
        with git_errors(RepositoryError, "git commit"):
            self.git.git.add("--", *present)
            if not self.git.git.diff("--cached", "--name-only", "--", *present).strip():
                return None
            self.git.git.commit(
                "-q", "--no-edit", "-m", message, "--", *present, env=self._commit_env()
            )
        return self._head_sha()

    def _head_sha(self) -> str:
        """HEAD's commit, read from the refs on disk (no git process, no object read)."""
        return git.SymbolicReference.dereference_recursive(self.git, "HEAD")

    def commit_scaffolding(self) -> str | None:
        """Commit the log, ``.gitignore`` and — while git does not track them yet —
        ``AGENT.md`` and ``identity/`` as ``gasp: agent scaffolding`` (so a fresh clone
        restores); ``None`` if unchanged. An edit to a tracked manifest or identity is
        never swept in: identity changes are human-gated commits of their own."""
        paths = [
            p for p in SCAFFOLDING_PATHS if p in (".gitignore", LOG_PATH) or not self._in_head(p)
        ]
        return self._commit_paths(SCAFFOLDING_MESSAGE, paths)

    def _in_head(self, path: str) -> bool:
        return self._head_entry(path) is not None

    def _head_entry(self, path: str) -> git.Blob | git.Tree | git.Submodule | None:
        """``path`` as HEAD holds it, if it does (read through the object helper, started
        afresh when the old one has gone)."""
        try:
            head = self._head_sha()
        except ValueError:  # no commit yet
            return None

        def read() -> git.Blob | git.Tree | git.Submodule | None:
            try:
                return self.git.commit(head).tree / path
            except KeyError:
                return None

        return object_lookup(self.git, read)

    def commit_run(
        self, run_id: str, goal_id: str, outcome: str, extra_paths: tuple[str, ...] = ()
    ) -> str | None:
        """The run's closing commit: only the log (and ``extra_paths``), message
        ``run <id>: <outcome>`` with the trailers. Returns the sha, ``None`` if unchanged.

        A value holding a newline is refused (it would forge trailers); a log that git
        tracks but the work tree lost is refused rather than committed as a deletion.
        """
        message = run_commit_message(run_id, goal_id, outcome)
        if not self.log_path.exists():
            if self.git.git.ls_files("--", LOG_PATH).strip():
                raise RepositoryError(
                    f"{LOG_PATH} is tracked but missing from the work tree; refusing to "
                    "commit its deletion as a run boundary"
                )
            return None
        if not extra_paths:
            committed = self._committed_log()
            if committed is not None:
                return self._commit_tracked_log(message, committed)
        return self._commit_paths(message, [LOG_PATH, *extra_paths])

    def _committed_log(self) -> git.Blob | None:
        """The log as HEAD holds it, if it does."""
        blob = self._head_entry(LOG_PATH)
        return blob if isinstance(blob, git.Blob) else None

    def _commit_tracked_log(self, message: str, committed: git.Blob) -> str | None:
        """The hot path: one ``git commit -- <log>`` (no ``add``: the path is tracked)."""
        if self.log_path.stat().st_size == committed.size:  # else it changed: no need to read it
            content = self.log_path.read_bytes()
            header = b"blob %d\0" % len(content)
            if (
                hashlib.sha1(header + content, usedforsecurity=False).hexdigest()
                == committed.hexsha
            ):
                return None
        with git_errors(RepositoryError, "git commit"):
            self.git.git.commit(
                "-q", "--no-edit", "-m", message, "--", LOG_PATH, env=self._commit_env()
            )
        return self._head_sha()
