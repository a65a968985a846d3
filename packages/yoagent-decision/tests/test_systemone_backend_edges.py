"""SystemOneBackend's settings at their edges: the presets' capabilities, a Workers AI
model path, a base URL of your own, a key variable of your own, and which host is whose.
(Added from mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import httpx
import pytest
import respx
from decision_helpers import NO_RETRY, SECRET

from yoagent.decision import (
    Capabilities,
    DecisionError,
    DecisionErrorKind,
    DecisionModel,
    Noul,
    SystemOneBackend,
)

ANSWER = {"answers": {"q": {"type": "noul", "noul": 0.9}}}


def test_the_hosted_presets_have_the_hosted_apis_limits() -> None:
    assert SystemOneBackend.typesafe().capabilities() == Capabilities.systemone()
    clef = SystemOneBackend.workers_ai("acc", "@cf/cloudflare/clef")
    assert clef.capabilities() == Capabilities.systemone()
    assert SystemOneBackend("http://127.0.0.1:8000").capabilities() == Capabilities()


@pytest.mark.parametrize("path", ["@cf/cloudflare/clef", " /@cf/cloudflare/clef ", "//X-model"])
def test_a_workers_ai_model_path_loses_its_leading_slashes(path: str) -> None:
    backend = SystemOneBackend.workers_ai(" acc ", path)
    expected = path.strip().lstrip("/")
    assert backend.endpoint_url() == (
        f"https://api.cloudflare.com/client/v4/accounts/acc/ai/run/{expected}"
    )
    assert backend.is_cloudflare_host() and not backend.is_typesafe_host()


def test_a_base_url_of_your_own_replaces_the_presets() -> None:
    backend = SystemOneBackend.typesafe().with_base_url("http://127.0.0.1:8000/BOX/")
    assert backend.endpoint_url() == "http://127.0.0.1:8000/BOX/v1/systemone"
    assert not backend.is_typesafe_host()
    assert SystemOneBackend.typesafe().is_typesafe_host()
    assert not SystemOneBackend.typesafe().is_cloudflare_host()


@respx.mock
async def test_a_key_variable_of_your_own_is_read_at_call_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    route = respx.post("http://127.0.0.1:8000/v1/systemone").mock(
        return_value=httpx.Response(200, json=ANSWER)
    )
    backend = SystemOneBackend("http://127.0.0.1:8000").with_api_key_env("MY_JEV_KEY")
    model = DecisionModel.from_backend(backend.with_retry(NO_RETRY), "jev")
    with pytest.raises(DecisionError) as missing:
        await model.evaluate("s", {"q": Noul("q?")})
    assert (missing.value.kind, missing.value.variable) == (
        DecisionErrorKind.MISSING_API_KEY,
        "MY_JEV_KEY",
    )
    monkeypatch.setenv("MY_JEV_KEY", SECRET)
    assert (await model.evaluate("s", {"q": Noul("q?")})).p_true("q") == 0.9
    assert route.calls[0].request.headers["authorization"] == f"Bearer {SECRET}"
