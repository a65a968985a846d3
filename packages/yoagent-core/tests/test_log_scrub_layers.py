"""The log scrub guard's two layers apart: the filters on the loggers that exist when a
guard starts hold when a program replaces the record factory with one that does not call
ours, and the record factory scrubs a logger made after the guard. Which loggers carry
the filter, how the factory passes a record's arguments on, and the guard's ``repr``.
(Added from mutation testing: each pins a behaviour a surviving mutant changed.)

Every test guards loggers of a name of its own (``_fresh``): the guard remembers the
loggers it has filtered for the life of the process, so a name used before would already
carry a filter and hide what a test means to show."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Iterator

import pytest

from yoagent.core.support import Scrubber, scrub_logs

SECRET = "layered-secret-0123456789"  # no key shape: only the scrubber knowing it replaces it


def _fresh() -> str:
    return f"layers{uuid.uuid4().hex}"


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture
def restore_factory() -> Iterator[None]:
    before = logging.getLogRecordFactory()
    yield
    logging.setLogRecordFactory(before)


def _messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_a_guarded_logger_stays_scrubbed_under_a_record_factory_that_does_not_call_ours(
    logs: pytest.LogCaptureFixture, restore_factory: None
) -> None:
    name = _fresh()
    with scrub_logs(Scrubber([SECRET]), [name]):
        logging.setLogRecordFactory(logging.LogRecord)  # ours is no longer called
        logging.getLogger(name).info("url %s", f"http://h/{SECRET}")
    assert _messages(logs) == ["url http://h/[redacted]"]


def test_a_second_guard_filters_its_logger_when_no_logger_was_made_since_the_first(
    logs: pytest.LogCaptureFixture, restore_factory: None
) -> None:
    first, second = _fresh(), _fresh()
    # The first guard makes its logger; the second's does not exist yet, and no other
    # logger was made in between: the second guard must still put its filter on it.
    with scrub_logs(Scrubber([SECRET]), [first]), scrub_logs(Scrubber([SECRET]), [second]):
        logging.setLogRecordFactory(logging.LogRecord)
        logging.getLogger(second).info(SECRET)
    assert _messages(logs) == ["[redacted]"]


def test_a_guard_again_on_a_filtered_logger_filters_the_children_made_since(
    logs: pytest.LogCaptureFixture, restore_factory: None
) -> None:
    root = _fresh()
    with scrub_logs(Scrubber([SECRET]), [root]):
        pass
    child = logging.getLogger(f"{root}.made_between")  # after the first guard looked
    with scrub_logs(Scrubber([SECRET]), [root]):
        logging.setLogRecordFactory(logging.LogRecord)
        child.info(SECRET)
    assert _messages(logs) == ["[redacted]"]


def test_only_the_guarded_loggers_and_those_below_them_get_the_filter(
    restore_factory: None,
) -> None:
    root = _fresh()
    below = logging.getLogger(f"{root}.below")
    beside = logging.getLogger(f"{root}beside")  # a longer name, not below the root
    other = logging.getLogger(_fresh())
    with scrub_logs(Scrubber([SECRET]), [root]):
        guarded = logging.getLogger(root)
        assert len(guarded.filters) == 1
        assert below.filters == guarded.filters
        assert beside.filters == []
        assert other.filters == []
        assert logging.getLogger().filters == []


def test_a_logger_made_after_the_guard_is_scrubbed_by_the_record_factory(
    logs: pytest.LogCaptureFixture,
) -> None:
    root = _fresh()
    with scrub_logs(Scrubber([SECRET]), [root]):
        late = logging.getLogger(f"{root}.late")
        assert late.filters == []  # no filter: only the record factory can scrub it
        late.debug("Location: /%s/x", SECRET)
    assert _messages(logs) == ["Location: /[redacted]/x"]


def test_a_second_guard_leaves_the_record_factory_as_the_first_installed_it(
    restore_factory: None,
) -> None:
    with scrub_logs(Scrubber([SECRET]), [_fresh()]):
        installed = logging.getLogRecordFactory()
        with scrub_logs(Scrubber([SECRET]), [_fresh()]):
            assert logging.getLogRecordFactory() is installed
    with scrub_logs(Scrubber([SECRET]), [_fresh()]):
        assert logging.getLogRecordFactory() is installed


def test_a_record_factory_reset_to_the_default_is_wrapped_again_for_a_new_logger(
    logs: pytest.LogCaptureFixture, restore_factory: None
) -> None:
    root = _fresh()
    with scrub_logs(Scrubber([SECRET]), [_fresh()]):
        pass
    logging.setLogRecordFactory(logging.LogRecord)
    with scrub_logs(Scrubber([SECRET]), [root]):
        assert logging.getLogRecordFactory() is not logging.LogRecord
        logging.getLogger(f"{root}.after_a_reset").info(SECRET)
    assert _messages(logs) == ["[redacted]"]


def test_the_record_factory_passes_keyword_arguments_on() -> None:
    root = _fresh()
    with scrub_logs(Scrubber([SECRET]), [root]):
        record = logging.getLogRecordFactory()(
            name=f"{root}.direct",
            level=logging.INFO,
            pathname="p.py",
            lineno=7,
            msg="token %s",
            args=(SECRET,),
            exc_info=None,
            func="f",
            sinfo="stack",
        )
    assert record.getMessage() == "token [redacted]"
    assert (record.lineno, record.funcName, record.stack_info) == (7, "f", "stack")


def test_a_guards_repr_names_its_loggers_and_its_state() -> None:
    guard = scrub_logs(Scrubber([SECRET]), ["layers.repr.a", "layers.repr.b"])
    assert repr(guard) == "<LogScrubGuard layers.repr.a, layers.repr.b (active)>"
    guard.close()
    assert repr(guard) == "<LogScrubGuard layers.repr.a, layers.repr.b (closed)>"
