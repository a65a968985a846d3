"""The log scrub guard: a library's records are scrubbed while a guard lives, whenever the
logger that writes them was made, and only the guarded loggers' records."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap
from typing import Any

import pytest

from yoagent.core.support import Scrubber, scrub_logs

SECRET = "guarded-secret-0123456789"  # no key shape: only the scrubber knowing it replaces it


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_a_guarded_logger_and_its_children_are_scrubbed_until_the_guard_closes(
    logs: pytest.LogCaptureFixture,
) -> None:
    guard = scrub_logs(Scrubber([SECRET]), ["floorlib"])
    logging.getLogger("floorlib").info("url %s", f"http://h/{SECRET}")
    logging.getLogger("floorlib.made_after_the_guard").debug("key=%s", SECRET)
    logging.getLogger("floorlibrary").info("not below floorlib: %s", SECRET)
    logging.getLogger("unrelated").info(SECRET)
    guard.close()
    guard.close()  # idempotent
    logging.getLogger("floorlib").info("after: %s", SECRET)

    assert _messages(logs) == [
        "url http://h/[redacted]",
        "key=[redacted]",
        f"not below floorlib: {SECRET}",
        SECRET,
        f"after: {SECRET}",
    ]


def test_arguments_and_tracebacks_are_scrubbed_too(logs: pytest.LogCaptureFixture) -> None:
    log = logging.getLogger("floorlib.tracebacks")
    with scrub_logs(Scrubber([SECRET]), ["floorlib"]):
        try:
            raise ValueError(f"bad url http://h/{SECRET}/mcp")
        except ValueError:
            log.exception("failed for %s", SECRET)
    assert SECRET not in logs.text
    assert logs.text.count("[redacted]") >= 2


def test_guards_are_independent(logs: pytest.LogCaptureFixture) -> None:
    other = "tok-other-0123456789"
    first = scrub_logs(Scrubber([SECRET]), ["floorlib.a"])
    second = scrub_logs(Scrubber([other]), ["floorlib.b"])
    logging.getLogger("floorlib.a").info("%s %s", SECRET, other)
    logging.getLogger("floorlib.b").info("%s %s", SECRET, other)
    first.close()
    logging.getLogger("floorlib.b").info("%s", other)
    second.close()

    assert _messages(logs) == [
        f"[redacted] {other}",
        f"{SECRET} [redacted]",
        "[redacted]",
    ]


def test_a_scrubber_that_knows_no_value_guards_nothing(logs: pytest.LogCaptureFixture) -> None:
    shaped = "sk-0123456789abcdefghij"  # a key shape, which a library's log keeps
    with scrub_logs(Scrubber(), ["floorlib"]) as guard:
        logging.getLogger("floorlib").info(shaped)
    assert _messages(logs) == [shaped]
    assert "closed" in repr(guard)


def test_a_record_factory_reset_to_the_default_is_wrapped_again(
    logs: pytest.LogCaptureFixture,
) -> None:
    with scrub_logs(Scrubber([SECRET]), ["floorlib"]):
        pass
    logging.setLogRecordFactory(logging.LogRecord)
    with scrub_logs(Scrubber([SECRET]), ["floorlib"]):
        logging.getLogger("floorlib.after_a_reset").info(SECRET)
    assert _messages(logs) == ["[redacted]"]


def test_another_librarys_factory_set_after_a_reset_is_wrapped_too(
    logs: pytest.LogCaptureFixture,
) -> None:
    before = logging.getLogRecordFactory()
    with scrub_logs(Scrubber([SECRET]), ["floorlib"]):
        pass
    logging.setLogRecordFactory(logging.LogRecord)

    def foreign(*args: Any, **kwargs: Any) -> logging.LogRecord:  # as ray.init installs
        return logging.LogRecord(*args, **kwargs)

    logging.setLogRecordFactory(foreign)
    try:
        with scrub_logs(Scrubber([SECRET]), ["floorlib"]):
            logging.getLogger("floorlib.made_after_a_foreign_factory").info(SECRET)
    finally:
        logging.setLogRecordFactory(before)
    assert _messages(logs) == ["[redacted]"]


FRESH_PROCESS = textwrap.dedent(
    """
    import io, logging
    from yoagent.core.support import Scrubber, scrub_logs

    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)
    with scrub_logs(Scrubber(["sk-fresh-0123456789"]), ["lateborn"]):
        # made after the guard, with no filter on it: the record factory scrubs it
        logging.getLogger("lateborn.http11").debug("Location: /sk-fresh-0123456789/x")
    print(out.getvalue())
    """
)


def test_a_logger_made_after_the_guard_in_a_fresh_process_is_scrubbed() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FRESH_PROCESS],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "lateborn.http11 Location: /[redacted]/x" in done.stdout
    assert "sk-fresh" not in done.stdout + done.stderr
