"""Installing our packages the way a user does, in tests: a clean environment for the
subprocess, a skip (with uv's or pip's own words) when the failure is the network's, and
what in an environment still links into the clone.

Third-party dependencies come from uv's cache or PyPI; when neither can supply them (no
network, cold cache) the test skips and shows why. Any other install failure, such as one
of our packages failing to build or resolve, fails it.
"""

from __future__ import annotations

import json
import os
import re
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
# One of our own packages not found is never the network's doing: it is an install command
# that cannot work (pip looking on PyPI for yoagent-core, a wheel missing from a folder).
_OURS_MISSING = re.compile(
    r"no matching distribution found for yoagent|yoagent[\w-]* was not found in the package",
    re.IGNORECASE,
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
    if _OURS_MISSING.search(output):
        pytest.fail(f"installing {what} did not find a yoagent package:\n{tail}")
    if any(symptom in output.lower() for symptom in NETWORK_SYMPTOMS):
        pytest.skip(f"no package index or cache to install {what} from:\n{tail}")
    pytest.fail(f"installing {what} failed:\n{tail}")


def links_into(venv: Path, clone: Path) -> list[str]:
    """What in ``venv`` makes an installed package depend on files of ``clone``: a ``.pth``
    line naming a folder inside it, an editable install's record or finder module."""
    found: list[str] = []
    for pth in sorted(venv.rglob("*.pth")):
        for line in pth.read_text("utf-8", errors="replace").splitlines():
            if line.strip() and not line.startswith(("import ", "#")):
                target = Path(line.strip())
                if target.is_absolute() and target.resolve().is_relative_to(clone.resolve()):
                    found.append(f"{pth.name} adds {line.strip()}")
    for record in sorted(venv.rglob("*.dist-info/direct_url.json")):
        if json.loads(record.read_text("utf-8")).get("dir_info", {}).get("editable"):
            found.append(f"{record.parent.name} is an editable install")
    found += [f"{path.name}: an editable finder" for path in venv.rglob("__editable__*.py")]
    return found
