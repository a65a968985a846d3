"""``yoagent.providers`` imports a protocol's module when it is first used (issue 12)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _providers_modules_after(code: str) -> set[str]:
    script = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    return {m for m in json.loads(out.stdout.splitlines()[-1]) if m.startswith("yoagent.providers")}


def test_one_protocol_imports_neither_the_others_nor_cloud_credentials() -> None:
    loaded = _providers_modules_after("import yoagent.providers.openai_completions")
    for other in ("anthropic", "bedrock", "google", "vertex", "models", "_aws_credentials"):
        assert f"yoagent.providers.{other}" not in loaded


def test_every_public_name_is_reachable_from_the_package() -> None:
    import yoagent.providers as providers

    for name in providers.__all__:
        assert getattr(providers, name) is not None
    assert providers.models.__name__ == "yoagent.providers.models"
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = providers.Nope  # pyright: ignore[reportAttributeAccessIssue]


def test_the_vertex_provider_imports_cryptography_only_to_sign_a_service_account_jwt() -> None:
    script = (
        "import sys\nimport yoagent.providers.vertex, yoagent.providers._vertex_auth\n"
        "print('cryptography' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.split() == ["False"]
