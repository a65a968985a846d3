"""Nothing is sent until a decision model is built *and used*: keys in the environment, the
presets, gates, guards and advisors built on them send nothing on their own."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
import respx
from decision_helpers import KEY_VARIABLES, SECRET

from yoagent.core import RetryConfig
from yoagent.decision import Advisor, DecisionError, DecisionModel, InputGuard, ToolGate


@pytest.fixture
def every_request() -> Iterator[respx.Router]:
    """Answers (and counts) any request at all, to any host."""
    with respx.mock(assert_all_called=False) as router:
        router.route().mock(return_value=httpx.Response(500))
        yield router


def test_keys_in_the_environment_send_nothing(
    monkeypatch: pytest.MonkeyPatch, every_request: respx.Router
) -> None:
    for name in KEY_VARIABLES:
        monkeypatch.setenv(name, SECRET if name != "TYPESAFE_BASE_URL" else "http://127.0.0.1:1")
    models = [
        DecisionModel.jev(),
        DecisionModel.jev_opencode(),
        DecisionModel.jev_opencode_free(),
        DecisionModel.clef("acct"),
        DecisionModel.clef_flash("acct"),
        DecisionModel.gpt_6_luna(),
        DecisionModel.local("http://127.0.0.1:1"),
        DecisionModel.logprobs("http://127.0.0.1:1", "m"),
    ]
    chain = models[0] | models[3] | models[5]
    ToolGate(model=chain)
    InputGuard(model=chain)
    Advisor(model=chain)
    for model in models:
        repr(model)
        model.capabilities()
        model.chain_capabilities()
    assert every_request.calls.call_count == 0


async def test_a_model_sends_only_when_used(
    monkeypatch: pytest.MonkeyPatch, every_request: respx.Router
) -> None:
    monkeypatch.setenv("TYPESAFE_API_KEY", SECRET)
    model = DecisionModel.jev()
    assert every_request.calls.call_count == 0
    with pytest.raises(DecisionError):
        await model.with_retry(RetryConfig.none()).noul("s", "q?")
    assert every_request.calls.call_count == 1
