"""The decision presets' key variables that yoagent-providers lists (it may not import
yoagent-decision) are the ones yoagent-decision reads."""

from __future__ import annotations

from yoagent.decision import _openai, _systemone  # the constants the presets read
from yoagent.providers import models


def test_api_key_variables_names_the_decision_presets_keys_as_yoagent_decision_reads_them() -> None:
    table = models.api_key_variables()
    assert table["decision:typesafe"] == (_systemone.TYPESAFE_API_KEY_ENV,)  # DecisionModel.jev()
    assert table["decision:opencode"] == (_systemone.OPENCODE_API_KEY_ENV,)  # jev_opencode*()
    assert table["decision:cloudflare"] == _systemone.CLOUDFLARE_TOKEN_ENVS  # clef*()
    assert table["decision:openai"] == (_openai.OPENAI_API_KEY_ENV,)  # gpt_6_luna()
    assert sorted(k for k in table if k.startswith("decision:")) == [
        "decision:cloudflare",
        "decision:openai",
        "decision:opencode",
        "decision:typesafe",
    ]
