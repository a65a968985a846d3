"""gitpython, set up once: its errors as this package's own (the one place they are
translated), and repositories whose git processes stay out of the caller's terminal."""

from __future__ import annotations

import os
from collections.abc import Callable, Generator
from contextlib import contextmanager
from typing import Any, TypeVar

import git

from ._errors import GaspError


@contextmanager
def git_errors(
    error: Callable[[str], GaspError],
    doing: str,
    *,
    shown: Callable[[str], str] = lambda text: text,
    not_a_repository: str = "",
) -> Generator[None]:
    """Inside the block, gitpython's errors become ``error(...)``, never chained to them.

    A git command that fails: ``"<doing> failed: <what git said>"`` (its stderr, else the
    exception's text), passed through ``shown`` (which hides what must not be shown, such
    as a URL's password). A folder that is not a git repository (or does not exist):
    ``not_a_repository`` when given, else ``"<doing> failed: <the folder> is not a git
    repository"``.
    """
    try:
        yield
    except git.GitCommandError as failure:
        detail = (failure.stderr or "").strip() or str(failure)
        raise error(f"{doing} failed: {shown(detail)}") from None
    except (git.InvalidGitRepositoryError, git.NoSuchPathError) as failure:
        text = not_a_repository or f"{doing} failed: {shown(str(failure))} is not a git repository"
        raise error(text) from None


class _OwnSessionGit(git.Git):
    """gitpython's command wrapper, starting every git process in a session of its own.

    In the caller's process group a git process gets the terminal's Ctrl+C, meant for the
    application: the recorder's persistent ``cat-file`` helpers died of it, and every
    later commit failed on their broken pipe.
    """

    def execute(self, command: Any, *args: Any, **kwargs: Any) -> Any:  # pyright: ignore[reportIncompatibleMethodOverride]
        if os.name == "posix":
            kwargs.setdefault("start_new_session", True)
        return super().execute(command, *args, **kwargs)  # pyright: ignore[reportCallIssue, reportUnknownVariableType]


class DetachedRepo(git.Repo):
    """A :class:`git.Repo` whose git processes run outside the caller's process group (a
    terminal's signals never reach them). For the repositories a long-lived process
    writes to in the background; a command run in the foreground (a clone the user may
    interrupt) keeps gitpython's default."""

    GitCommandWrapperType = _OwnSessionGit


_T = TypeVar("_T")


def object_lookup(repo: git.Repo, read: Callable[[], _T]) -> _T:
    """``read()``, which reads objects through gitpython's persistent ``cat-file`` helper;
    once more with a fresh helper when the old one has gone (killed: a broken pipe)."""
    try:
        return read()
    except (BrokenPipeError, ConnectionResetError):
        repo.git.clear_cache()
        return read()
