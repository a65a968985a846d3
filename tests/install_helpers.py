"""Installing our packages the way a user does, in tests: a clean environment for the
subprocess, and a skip (with uv's or pip's own words) when the failure is the network's.

Third-party dependencies come from uv's cache or PyPI; when neither can supply them (no
network, cold cache) the test skips and shows why. Any other install failure, such as one
of our packages failing to build or resolve, fails it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

# What uv and pip say when the index cannot be reached; nothing our own build prints.
NETWORK_SYMPTOMS = (
    "failed to fetch",
    "error sending request",
    "dns error",
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "connection refused",
    "connection reset",
    "could not connect",
    "max retries exceeded",
    "connecterror",
    "timed out",
    "no matching distribution found",
    "not found in the cache",  # uv --offline with a cold cache
)


def run(
    command: list[str], *, timeout: float, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``command`` outside the workspace's environment: no VIRTUAL_ENV, no PYTHONPATH."""
    clean = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    return subprocess.run(
        command,
        cwd=cwd,
        env={**clean, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def install(command: list[str], *, what: str, cwd: Path, env: dict[str, str] | None = None) -> None:
    """Run an install ``command``; skip when the network failed it, fail on anything else."""
    try:
        installed = run(command, timeout=300, cwd=cwd, env=env)
    except subprocess.TimeoutExpired as timeout:
        pytest.skip(f"installing {what} timed out: {timeout}")
    if installed.returncode == 0:
        return
    output = installed.stdout + installed.stderr
    tail = "\n".join(output.strip().splitlines()[-15:])
    if any(symptom in output.lower() for symptom in NETWORK_SYMPTOMS):
        pytest.skip(f"no package index or cache to install {what} from:\n{tail}")
    pytest.fail(f"installing {what} failed:\n{tail}")
