"""Saved sessions: ``yoagent.core.Session`` files under the user's data folder.

Each conversation is ``<id>.jsonl``, written by core's :class:`~yoagent.core.Session`: a
tree of messages, where a save appends only what is new and a history the agent compacted
forks a branch rather than rewriting the file. Beside it, ``<id>.meta.json`` holds what
core's format has no place for and the session list shows: the folder the session was
started in, the model, the start time and the first prompt. A session file without one
(any core session file) still lists and resumes.
"""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from collections.abc import Sequence, Set
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import platformdirs

from yoagent.core import AgentMessage, Session, SessionError, UserMessage
from yoagent.core.extension import is_loop_injected
from yoagent.core.support import atomic_write

SUFFIX = ".jsonl"
META_SUFFIX = ".meta.json"


def default_root() -> Path:
    """``<user data folder>/yoagent/sessions`` (honours ``XDG_DATA_HOME`` on Linux)."""
    return Path(platformdirs.user_data_dir("yoagent", appauthor=False)) / "sessions"


def _new_id() -> str:
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _id_of(path: Path) -> str:
    return path.name.removesuffix(SUFFIX)


def meta_path(path: Path) -> Path:
    """The sidecar of the session file ``path``: ``<id>.meta.json``."""
    return path.with_name(_id_of(path) + META_SUFFIX)


def _read_meta(path: Path) -> dict[str, str]:
    try:
        value: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in cast(dict[str, Any], value).items() if isinstance(v, str)}


def _title(messages: Sequence[AgentMessage]) -> str:
    for message in messages:
        if isinstance(message, UserMessage) and not is_loop_injected(message):
            text = " ".join(message.text.split())
            if text:
                return text[:80]
    return ""


@dataclass(slots=True, frozen=True)
class SessionInfo:
    """What a session list shows: id, file, folder, model, start time and first prompt."""

    id: str
    path: Path
    cwd: str
    model: str
    created: str
    title: str
    modified: float


class SavedSession:
    """One conversation: a core :class:`~yoagent.core.Session` and the file it is saved in."""

    def __init__(
        self,
        path: Path,
        *,
        cwd: str,
        model: str,
        created: str,
        title: str = "",
        session: Session | None = None,
    ) -> None:
        self.path = path
        self.cwd = cwd
        self.model = model
        self.created = created
        self.title = title
        self.session = session if session is not None else Session()

    @property
    def id(self) -> str:
        """The session's id (its file name without ``.jsonl``)."""
        return _id_of(self.path)

    @property
    def messages(self) -> list[AgentMessage]:
        """The history to give the agent: the branch ending at the session's head."""
        return self.session.path_messages()

    @property
    def warnings(self) -> list[str]:
        """What loading skipped (a corrupt or cut-off last line), to show; the next save
        drops that line from the file."""
        return [
            f"session {self.path}: {w}; skipped it, the rest is resumed"
            for w in self.session.load_warnings
        ]

    def save(self, messages: Sequence[AgentMessage]) -> str | None:
        """Bring the file in line with ``messages`` (the agent's history); nothing is written
        while the session is empty.

        When something else changed the file since it was read or written, the session is
        saved under a new id instead, and the old id is returned.
        """
        self.session.append_new(messages)
        if not len(self.session):
            return None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        moved: str | None = None
        try:
            self.session.save(self.path)
        except SessionError:
            moved = self.id
            self.path = self.path.with_name(_new_id() + SUFFIX)
            self.session.save(self.path)
        title = self.title or _title(self.session.path_messages())
        if moved or title != self.title or not meta_path(self.path).exists():
            self.title = title
            self._write_meta()
        return moved

    def _write_meta(self) -> None:
        meta = {"cwd": self.cwd, "model": self.model, "created": self.created, "title": self.title}
        atomic_write(meta_path(self.path), json.dumps(meta, ensure_ascii=False) + "\n")


class SessionStore:
    """The folder of saved sessions."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_root()

    def create(self, *, cwd: Path, model: str) -> SavedSession:
        """A new session (its files appear on the first :meth:`SavedSession.save` with
        messages)."""
        return SavedSession(
            self.root / f"{_new_id()}{SUFFIX}",
            cwd=str(cwd),
            model=model,
            created=datetime.now().astimezone().isoformat(timespec="seconds"),
        )

    @staticmethod
    def open(info: SessionInfo) -> SavedSession:
        """A listed session, loaded to continue (see :attr:`SavedSession.warnings`).

        Raises :class:`~yoagent.core.SessionError` when the file cannot be read or holds a
        bad line before its last.
        """
        try:
            session = Session.load(info.path)
        except OSError as error:
            raise SessionError(f"cannot read session {info.path}: {error.strerror}") from None
        return SavedSession(
            info.path,
            cwd=info.cwd,
            model=info.model,
            created=info.created,
            title=info.title,
            session=session,
        )

    def list(self) -> list[SessionInfo]:
        """Every saved session, newest first."""
        if not self.root.is_dir():
            return []
        found = [info for path in self.root.glob(f"*{SUFFIX}") if (info := self._info(path))]
        found.sort(key=lambda info: (info.modified, info.id), reverse=True)
        return found

    def latest(self, cwd: Path | None = None) -> SessionInfo | None:
        """The newest session started in ``cwd``, else the newest of all."""
        sessions = self.list()
        if cwd is not None:
            here = [s for s in sessions if s.cwd == str(cwd)]
            if here:
                return here[0]
        return sessions[0] if sessions else None

    def find(self, key: str) -> SessionInfo:
        """The session whose id is (or starts with) ``key``, or a session file's path."""
        as_path = Path(key).expanduser()
        if as_path.suffix == SUFFIX and as_path.is_file():
            info = self._info(as_path)
            if info is not None:
                return info
        sessions = self.list()
        matches = [s for s in sessions if s.id == key] or [
            s for s in sessions if s.id.startswith(key)
        ]
        if not matches:
            raise SessionError(f"no saved session {key!r} (see /sessions)")
        if len(matches) > 1:
            ids = ", ".join(s.id for s in matches[:5])
            raise SessionError(f"{key!r} matches several sessions: {ids}")
        return matches[0]

    @staticmethod
    def delete(info: SessionInfo) -> None:
        """Delete a saved session: its file and its sidecar."""
        info.path.unlink(missing_ok=True)
        meta_path(info.path).unlink(missing_ok=True)

    def prune(
        self,
        *,
        max_age_days: int = 0,
        max_total_mb: int = 0,
        keep: Set[str] = frozenset(),
        now: float | None = None,
    ) -> list[SessionInfo]:
        """Delete the sessions untouched for more than ``max_age_days`` days, then the
        oldest ones while all of them together take more than ``max_total_mb`` MB (0: no
        such limit). The sessions in ``keep`` (ids) are never deleted. Returns the
        deleted ones; one that cannot be deleted is skipped."""
        sessions = self.list()  # newest first
        cutoff = (now if now is not None else time.time()) - max_age_days * 86_400
        deleted: list[SessionInfo] = []

        def remove(info: SessionInfo) -> None:
            with contextlib.suppress(OSError):
                self.delete(info)
                deleted.append(info)

        for info in sessions:
            if max_age_days and info.modified < cutoff and info.id not in keep:
                remove(info)
        if max_total_mb:
            remaining = [info for info in sessions if info not in deleted]
            sizes = {info.id: _size(info.path) for info in remaining}
            total = sum(sizes.values())
            for info in reversed(remaining):  # oldest first
                if total <= max_total_mb * 1024 * 1024:
                    break
                if info.id in keep:
                    continue
                remove(info)
                total -= sizes[info.id]
        return deleted

    @staticmethod
    def _info(path: Path) -> SessionInfo | None:
        try:
            modified = path.stat().st_mtime
        except OSError:
            return None
        meta = _read_meta(meta_path(path))
        return SessionInfo(
            id=_id_of(path),
            path=path,
            cwd=meta.get("cwd", ""),
            model=meta.get("model", ""),
            created=meta.get("created", ""),
            title=meta.get("title", ""),
            modified=modified,
        )


def _size(path: Path) -> int:
    total = 0
    for part in (path, meta_path(path)):
        with contextlib.suppress(OSError):
            total += part.stat().st_size
    return total


def moved_notice(old_id: str, saved: SavedSession) -> str:
    """What to say when :meth:`SavedSession.save` had to move to a new id."""
    return (
        f"session {old_id} was changed on disk by something else; "
        f"this conversation is saved as {saved.id}"
    )
