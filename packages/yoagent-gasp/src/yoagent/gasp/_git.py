"""gitpython's errors as this package's own: the one place they are translated."""

from __future__ import annotations

from collections.abc import Callable, Generator
from contextlib import contextmanager

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
