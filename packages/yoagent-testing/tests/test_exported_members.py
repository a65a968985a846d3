"""The public surface of yoagent.testing is a reviewed list; pytest stays out of it."""

from __future__ import annotations

import subprocess
import sys

import yoagent.testing

EXPORTED = {
    "FORMAT_VERSION",
    "REDACTED",
    "Cassette",
    "CassetteError",
    "CassetteWriter",
    "Difference",
    "Match",
    "RecordMode",
    "RecordedCall",
    "RecordedTool",
    "RecordingProvider",
    "RecordingTool",
    "ReplayProvider",
    "ReplayingTool",
    "RequestMismatch",
    "TestingError",
    "ToolResultMismatch",
    "UseCassette",
    "first_difference",
    "free_port",
    "fork",
    "fork_point",
    "fork_provider",
    "request_json",
}


def test_the_exported_names_are_the_reviewed_ones() -> None:
    assert set(yoagent.testing.__all__) == EXPORTED
    assert all(hasattr(yoagent.testing, name) for name in EXPORTED)


def test_public_classes_read_as_yoagent_testing() -> None:
    assert yoagent.testing.RequestMismatch.__module__ == "yoagent.testing"
    assert repr(yoagent.testing.CassetteError("x")) == "CassetteError('x')"


def test_importing_the_library_does_not_import_pytest() -> None:
    script = "import sys, yoagent.testing; print('pytest' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "False"
