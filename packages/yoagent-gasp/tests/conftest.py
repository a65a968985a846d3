"""Every test runs git with a configuration of its own (an identity, no system or user
hooks or settings), so results do not depend on the machine's git setup."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _isolated_git(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path_factory.mktemp("gitconfig") / "config"
    config.write_text(
        "[user]\n\tname = GASP Tests\n\temail = tests@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n",
        encoding="utf-8",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("GIT_CONFIG_GLOBAL", str(config))
        patch.setenv("GIT_CONFIG_NOSYSTEM", "1")
        yield


@pytest.fixture
def repo_dir(tmp_path: Path) -> Path:
    return tmp_path / "agent"
