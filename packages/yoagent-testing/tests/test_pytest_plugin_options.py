"""The pytest plugin's option, ini value and marker as pytest shows and reads them, run in
this process (``pytester``) so the plugin module under test is the one imported here; and
cassette names at their length bounds (from the mutation triage)."""

from __future__ import annotations

import re

import pytest

from yoagent.testing.pytest_plugin import cassette_name

pytest_plugins = ("pytester",)

MODE_TEST = """
def test_mode(yoagent_record_mode):
    print("MODE=" + yoagent_record_mode)
"""


def _run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest("-p", "no:asyncio", "-p", "no:cacheprovider", *args)


def _flat(result: pytest.RunResult) -> str:
    return re.sub(r"\s+", " ", result.stdout.str() + result.stderr.str())


HELP = (
    "yoagent record and replay: --yoagent-record={none,once,new_episodes,all} when model "
    "calls are recorded to cassettes: none (replay only, the default), once (record "
    "missing cassettes), new_episodes (record calls a cassette lacks), all (record "
    "everything again)"
)
INI_HELP = "yoagent_record (string): the default for --yoagent-record"
MARKER_HELP = (
    "@pytest.mark.yoagent_cassette(name=None, *, match=None, timing=False): the test's "
    "cassette file (relative to yoagent_cassette_dir), how requests are matched, and "
    "whether delta timing is recorded"
)


@pytest.mark.parametrize(
    ("flag", "texts"), [("--help", (HELP, INI_HELP)), ("--markers", (MARKER_HELP,))]
)
def test_the_option_ini_value_and_marker_are_described(
    pytester: pytest.Pytester, flag: str, texts: tuple[str, ...]
) -> None:
    shown = _flat(_run(pytester, flag))
    for text in texts:
        assert text in shown


@pytest.mark.parametrize(
    ("ini", "args", "mode"),
    [
        ("", (), "none"),
        ("yoagent_record = once\n", (), "once"),
        ("yoagent_record = once\n", ("--yoagent-record=all",), "all"),
        ("", ("--yoagent-record", "new_episodes"), "new_episodes"),
    ],
)
def test_the_mode_comes_from_the_option_else_the_ini_value(
    pytester: pytest.Pytester, ini: str, args: tuple[str, ...], mode: str
) -> None:
    pytester.makeini("[pytest]\n" + ini)
    pytester.makepyfile(test_inner=MODE_TEST)
    result = _run(pytester, "-s", *args)
    result.assert_outcomes(passed=1)
    assert f"MODE={mode}" in result.stdout.str()


def test_a_mode_outside_the_four_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_inner=MODE_TEST)
    result = _run(pytester, "--yoagent-record=sometimes")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "invalid choice: 'sometimes'" in _flat(result)


def test_a_bad_ini_mode_names_the_four(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\nyoagent_record = sometimes\n")
    pytester.makepyfile(test_inner=MODE_TEST)
    result = _run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "yoagent_record = 'sometimes': use one of none, once, new_episodes, all" in (
        _flat(result)
    )


def test_cassette_names_at_the_length_bound() -> None:
    assert cassette_name("testX") == "testX.jsonl"
    assert cassette_name("t" * 120) == "t" * 120 + ".jsonl"
    longer = cassette_name("t" * 121)
    assert len(longer) == 120 + len(".jsonl")
    assert longer.startswith("t" * 107 + "-")
