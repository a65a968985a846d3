"""``logs.report_library_warnings`` in this process: each warning or error of a
``yoagent.*`` logger is one ``yoagent: warning:`` or ``yoagent: error:`` line on stderr,
made inert; debug and info say nothing; the handler is added once; a record that cannot be
formatted never raises."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from yoagent.cli.logs import report_library_warnings

LIBRARY = logging.getLogger("yoagent")


@pytest.fixture(autouse=True)
def _own_handlers() -> Iterator[None]:
    """The yoagent logger's handlers and level as they were, after each test."""
    handlers, level = list(LIBRARY.handlers), LIBRARY.level
    LIBRARY.handlers = [h for h in handlers if type(h).__name__ != "_StderrWarnings"]
    LIBRARY.setLevel(logging.DEBUG)  # every record reaches the handler's own level check
    yield
    LIBRARY.handlers = handlers
    LIBRARY.setLevel(level)


def test_warnings_and_errors_are_one_line_each(capsys: pytest.CaptureFixture[str]) -> None:
    report_library_warnings()
    logger = logging.getLogger("yoagent.mcp")
    logger.debug("not shown")
    logger.info("not shown either")
    logger.warning("server %s exited", "notes")
    logger.error("could not record: %s", "disk full")
    logger.critical("very bad")
    assert capsys.readouterr().err == (
        "yoagent: warning: server notes exited\n"
        "yoagent: error: could not record: disk full\n"
        "yoagent: error: very bad\n"
    )


def test_the_handler_is_added_once(capsys: pytest.CaptureFixture[str]) -> None:
    report_library_warnings()
    report_library_warnings()
    logging.getLogger("yoagent.x").warning("once")
    assert capsys.readouterr().err == "yoagent: warning: once\n"
    assert sum(type(h).__name__ == "_StderrWarnings" for h in LIBRARY.handlers) == 1


def test_a_control_sequence_in_a_warning_is_shown_not_obeyed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report_library_warnings()
    logging.getLogger("yoagent.mcp").warning("server said: \x1b[2Jgone")
    err = capsys.readouterr().err
    assert "\x1b" not in err
    assert err.startswith("yoagent: warning: server said: ")
    assert err.endswith("gone\n")


def test_a_record_that_cannot_be_formatted_never_raises(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logging, "raiseExceptions", False)
    report_library_warnings()
    logging.getLogger("yoagent.x").warning("%d items", "not a number")
    logging.getLogger("yoagent.x").warning("still working")
    assert capsys.readouterr().err == "yoagent: warning: still working\n"


def test_other_loggers_are_not_shown(capsys: pytest.CaptureFixture[str]) -> None:
    report_library_warnings()
    logging.getLogger("httpx").warning("not ours")
    assert capsys.readouterr().err == ""
