"""Saved sessions: one JSONL file per conversation under the user's data folder.

The first line is a header (``{"type": "session", ...}``: id, folder, model, time); each
later line is one message (``{"type": "message", "message": {...}}``) serialized with
``yoagent.core.message_adapter``, so a session round-trips exactly. A stand-in for
``yoagent.core.session`` until core ships it.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, cast

import platformdirs

from yoagent.core import UserMessage, message_adapter
from yoagent.core.messages import AnyMessage

FORMAT_VERSION = 1


def default_root() -> Path:
    """``<user data folder>/yoagent/sessions`` (honours ``XDG_DATA_HOME`` on Linux)."""
    return Path(platformdirs.user_data_dir("yoagent", appauthor=False)) / "sessions"


class SessionError(Exception):
    """A session could not be found or read."""


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


def _new_id() -> str:
    return f"{datetime.now():%Y%m%d-%H%M%S}-{secrets.token_hex(2)}"


def _header(line: str) -> dict[str, Any] | None:
    try:
        value: object = json.loads(line)
    except ValueError:
        return None
    if isinstance(value, dict) and cast(dict[str, Any], value).get("type") == "session":
        return cast(dict[str, Any], value)
    return None


def _title(messages: Sequence[AnyMessage]) -> str:
    for message in messages:
        if isinstance(message, UserMessage) and message.text.strip():
            return " ".join(message.text.split())[:80]
    return ""


class SessionFile:
    """One session's file. :meth:`sync` writes whatever the history gained since the last
    call (appending), or rewrites the file when the history was replaced."""

    def __init__(self, path: Path, id: str, *, cwd: str, model: str, created: str) -> None:
        self.path = path
        self.id = id
        self.cwd = cwd
        self.model = model
        self.created = created
        self._written: list[AnyMessage] = []

    def _header_line(self) -> str:
        header = {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self.id,
            "cwd": self.cwd,
            "model": self.model,
            "created": self.created,
        }
        return json.dumps(header, ensure_ascii=False)

    @staticmethod
    def _message_line(message: AnyMessage) -> str:
        payload = message_adapter.dump_python(message, mode="json")
        return json.dumps({"type": "message", "message": payload}, ensure_ascii=False)

    def sync(self, messages: Sequence[AnyMessage]) -> None:
        """Make the file hold ``messages``. Nothing is written for an empty history."""
        written = self._written
        same_prefix = len(messages) >= len(written) and all(
            a is b for a, b in zip(written, messages, strict=False)
        )
        if same_prefix and self.path.exists():
            new = messages[len(written) :]
            if new:
                with self.path.open("a", encoding="utf-8") as file:
                    file.writelines(self._message_line(m) + "\n" for m in new)
        elif messages or self.path.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            lines = [self._header_line(), *(self._message_line(m) for m in messages)]
            temporary = self.path.with_suffix(".tmp")
            temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
            os.replace(temporary, self.path)
        self._written = list(messages)

    def load(self) -> list[AnyMessage]:
        """The messages in the file (and remember them as written)."""
        messages = read_messages(self.path)
        self._written = list(messages)
        return messages


def read_messages(path: Path) -> list[AnyMessage]:
    """The messages of a session file; lines that are not messages are skipped."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SessionError(f"cannot read session {path}: {error.strerror}") from None
    messages: list[AnyMessage] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry: object = json.loads(line)
        except ValueError:
            raise SessionError(f"{path}:{number}: not JSON") from None
        if isinstance(entry, dict):
            data = cast(dict[str, Any], entry)
            if data.get("type") == "message":
                messages.append(message_adapter.validate_python(data.get("message")))
    return messages


class SessionStore:
    """The folder of saved sessions."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root if root is not None else default_root()

    def create(self, *, cwd: Path, model: str) -> SessionFile:
        """A new session (its file appears on the first :meth:`SessionFile.sync` with
        messages)."""
        session_id = _new_id()
        return SessionFile(
            self.root / f"{session_id}.jsonl",
            session_id,
            cwd=str(cwd),
            model=model,
            created=datetime.now().astimezone().isoformat(timespec="seconds"),
        )

    def open(self, info: SessionInfo) -> SessionFile:
        """The file of a listed session, to load and continue."""
        return SessionFile(info.path, info.id, cwd=info.cwd, model=info.model, created=info.created)

    def list(self) -> list[SessionInfo]:
        """Every saved session, newest first."""
        if not self.root.is_dir():
            return []
        found: list[SessionInfo] = []
        for path in self.root.glob("*.jsonl"):
            info = self._info(path)
            if info is not None:
                found.append(info)
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
        if as_path.suffix == ".jsonl" and as_path.is_file():
            info = self._info(as_path)
            if info is not None:
                return info
        matches = [s for s in self.list() if s.id == key] or [
            s for s in self.list() if s.id.startswith(key)
        ]
        if not matches:
            raise SessionError(f"no saved session {key!r} (see /sessions)")
        if len(matches) > 1:
            ids = ", ".join(s.id for s in matches[:5])
            raise SessionError(f"{key!r} matches several sessions: {ids}")
        return matches[0]

    @staticmethod
    def _info(path: Path) -> SessionInfo | None:
        try:
            with path.open(encoding="utf-8") as file:
                header = _header(file.readline())
                title = ""
                for line in file:
                    if '"role":"user"' in line.replace(" ", ""):
                        try:
                            message = message_adapter.validate_python(
                                json.loads(line).get("message")
                            )
                        except ValueError:
                            continue
                        title = _title([message])
                        if title:
                            break
            modified = path.stat().st_mtime
        except OSError:
            return None
        if header is None:
            return None
        return SessionInfo(
            id=str(header.get("id") or path.stem),
            path=path,
            cwd=str(header.get("cwd", "")),
            model=str(header.get("model", "")),
            created=str(header.get("created", "")),
            title=title,
            modified=modified,
        )
