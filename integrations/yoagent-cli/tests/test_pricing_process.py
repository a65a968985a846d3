"""Pricing in the real ``yoagent`` (a subprocess): on by default, ``--pricing off`` and the
config key, a refused ``YOAGENT_PRICES``, and the ``-p --json`` summary's cost."""

from __future__ import annotations

import json
from pathlib import Path

from cli_testing import RunCli
from sse_server import ScriptedServer, text

PRICED = ["--provider", "openai", "--model", "gpt-5.5"]


def summary(stdout: str) -> dict[str, object]:
    return json.loads(stdout.strip().splitlines()[-1])


def test_the_bundled_prices_are_on_by_default_and_the_summary_carries_the_cost(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(text("four"))
    result = run_cli(*PRICED, "--base-url", server.url, "-p", "2+2?", "--json")
    assert result.returncode == 0, result.stderr
    assert summary(result.stdout)["cost_usd"] == 0.0011  # 100 in at $5/M, 20 out at $30/M
    assert result.stderr == ""


def test_pricing_off_by_flag_or_config_prices_nothing_and_says_so(
    run_cli: RunCli, server: ScriptedServer, cli_env: dict[str, str]
) -> None:
    server.add(text("four"), text("five"))
    result = run_cli(*PRICED, "--base-url", server.url, "--pricing", "off", "-p", "2+2?", "--json")
    assert result.returncode == 0, result.stderr
    assert summary(result.stdout)["cost_usd"] is None

    config = Path(cli_env["XDG_CONFIG_HOME"]) / "yoagent" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('pricing = "off"\n')
    result = run_cli(*PRICED, "--base-url", server.url, input="hi\n/cost\n")
    assert result.returncode == 0, result.stderr
    status = next(line for line in result.stdout.splitlines() if "tokens in 100" in line)
    assert "$" not in status and "cost unknown" not in status  # off: no cost, no noise
    assert '(cost unknown: pricing is off (pricing = "off" or --pricing off))' in result.stdout


def test_a_refused_yoagent_prices_is_a_warning_at_start(
    run_cli: RunCli, server: ScriptedServer
) -> None:
    server.add(text("four"))
    result = run_cli(
        *PRICED,
        "--base-url",
        server.url,
        "-p",
        "2+2?",
        "--json",
        env={"YOAGENT_PRICES": '{"schema": 1, "providers": '},
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr.startswith("yoagent: warning: YOAGENT_PRICES (inline JSON) was ignored: ")
    assert len(result.stderr.splitlines()) == 1  # said once (not again by the library's log)
    assert summary(result.stdout)["cost_usd"] == 0.0011  # the snapshot still prices it
