"""``--tool-gate`` in-process: what each preset builds, which values count as URLs, and the
refusals and warning word for word (the process tests see them only through the CLI)."""

from __future__ import annotations

import pytest

from yoagent.cli.tool_gate import (
    build_tool_gate,
    is_url,
    missing_key_warning,
    project_refusal,
)

WORKERS_AI = "https://api.cloudflare.com/client/v4/accounts/{account}/ai/run/@cf/cloudflare/{model}"


@pytest.mark.parametrize("preset", ["clef", "clef-flash"])
def test_a_cloudflare_preset_sends_to_its_own_model_on_the_named_account(preset: str) -> None:
    gate = build_tool_gate(preset, {"CLOUDFLARE_ACCOUNT_ID": " acct-7 "})
    assert gate.model.model == preset
    assert gate.model.backend.endpoint_url() == WORKERS_AI.format(account="acct-7", model=preset)


@pytest.mark.parametrize("env", [{}, {"CLOUDFLARE_ACCOUNT_ID": "   "}])
@pytest.mark.parametrize("preset", ["clef", "clef-flash"])
def test_a_cloudflare_preset_without_an_account_id_is_refused_by_name(
    preset: str, env: dict[str, str]
) -> None:
    with pytest.raises(ValueError, match=r"^needs CLOUDFLARE_ACCOUNT_ID ") as caught:
        build_tool_gate(preset, env)
    assert str(caught.value) == "needs CLOUDFLARE_ACCOUNT_ID (the Workers AI account id)"


def test_a_url_gate_sends_to_that_server() -> None:
    gate = build_tool_gate("http://127.0.0.1:8000")
    assert gate.model.backend.endpoint_url() == "http://127.0.0.1:8000/v1/systemone"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("http://judge.example", True),
        ("HTTPS://judge.example/v1", True),
        ("https://judge.example/?next=ftp://elsewhere", True),
        ("ftp://judge.example", False),
        ("judge.example", False),
        ("https://   ", False),
        ("https://", False),
    ],
)
def test_a_url_is_http_or_https_with_something_after_the_scheme(value: str, expected: bool) -> None:
    assert is_url(value) is expected


def test_a_project_configs_refusals_word_for_word() -> None:
    assert (
        project_refusal("off", user_set=False) == "a project config cannot turn the tool gate off"
    )
    assert project_refusal("https://judge.example", user_set=False) == (
        "a project config cannot point the tool gate at a URL (only a preset)"
    )
    assert project_refusal("jev", user_set=True) == "the user config's tool_gate is kept"
    assert project_refusal("jev", user_set=False) is None


def test_the_missing_key_warning_word_for_word() -> None:
    assert missing_key_warning("jev", {}) == (
        "--tool-gate jev: TYPESAFE_API_KEY is not set; every command, write and edit will be "
        "denied until it is"
    )
