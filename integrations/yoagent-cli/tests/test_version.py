"""``yoagent --version`` names every installed yoagent distribution with its version."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version

import pytest
from cli_testing import RunCli

from yoagent.cli import versions


def test_version_lists_each_installed_yoagent_distribution(run_cli: RunCli) -> None:
    result = run_cli("--version")

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    for name in ("yoagent-cli", "yoagent-core", "yoagent-providers", "yoagent-tools"):
        assert f"{name} {version(name)}" in lines
    assert lines == sorted(lines)
    assert all(line.startswith("yoagent") and len(line.split()) == 2 for line in lines)


@dataclass
class FakeDistribution:
    name: str
    version: str


def test_only_yoagent_distributions_are_listed_once_each(monkeypatch: pytest.MonkeyPatch) -> None:
    installed = [
        FakeDistribution("yoagent-tools", "0.3.0"),
        FakeDistribution("yoagent", "1.0.0"),
        FakeDistribution("Yoagent_Core", "0.2.1"),  # any spelling of the name
        FakeDistribution("yoagent-core", "0.1.0"),  # a second copy later on the path
        FakeDistribution("yoagentish", "9.9"),
        FakeDistribution("not-yoagent", "9.9"),
        FakeDistribution("httpx", "0.28.1"),
    ]
    monkeypatch.setattr(versions, "distributions", lambda: installed)

    assert versions.version_text().splitlines() == [
        "yoagent 1.0.0",
        "yoagent-core 0.2.1",
        "yoagent-tools 0.3.0",
    ]


def test_with_nothing_installed_it_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(versions, "distributions", list)

    assert "no installed yoagent distribution" in versions.version_text()
