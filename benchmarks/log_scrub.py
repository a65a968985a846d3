"""What the log scrubbing of yoagent-openapi and yoagent-mcp costs a program's logging.

    uv run python benchmarks/log_scrub.py [--repeat 7] [--number 200000]

Both packages wrap the logging record factory (``logging.setLogRecordFactory``) so that
a record of an HTTP library's logger is scrubbed as it is made, whenever the logger was
created. This measures one logging call, in ns, with the default factory (the floor)
and with both packages' factories installed, interleaved; the fastest of ``--repeat``
runs of ``--number`` calls (the machine is shared: the minimum is the least disturbed):

- a DEBUG call on a logger whose level is off (httpcore's, the common case): no record
  is made, so the factory is never called;
- an INFO call on an enabled application logger (``app``), no call in flight;
- the same while a call with secrets is in flight (the factory tests the name);
- a DEBUG call on an enabled ``httpcore.http11`` logger while a call is in flight,
  with a message holding a key: the scrubbing itself (the loggers' filters, in place
  before this change, run in both variants).

Every logger has one ``NullHandler``-like handler that does nothing, so the figures are
logging's own cost and the factory's, not a handler's I/O.
"""

from __future__ import annotations

import argparse
import logging
import timeit
from collections.abc import Callable

from yoagent.mcp._secrets import UrlSecrets, guard_logs, unguard_logs
from yoagent.openapi._log_scrub import _filter as openapi_scrubber  # pyright: ignore[reportPrivateUsage]
from yoagent.openapi._log_scrub import guarded_logs
from yoagent.openapi._secrets import Secrets

KEY = "sk-bench-0123456789abcdef"


class _Discard(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        record.getMessage()


def _logger(name: str, level: int) -> logging.Logger:
    log = logging.getLogger(name)
    log.setLevel(level)
    log.propagate = False
    log.handlers[:] = [_Discard()]
    return log


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--number", type=int, default=20_000)
    options = parser.parse_args()

    off = _logger("httpcore.connection", logging.WARNING)
    app = _logger("app", logging.INFO)
    wire = _logger("httpcore.http11", logging.DEBUG)
    url = f"http://h/items?api_key={KEY}"

    # Install both packages' factories (and their filters), then keep the result aside.
    secrets = Secrets([KEY])
    with guarded_logs(secrets):
        pass
    url_secrets = UrlSecrets(f"http://h/{KEY}/mcp")
    guard_logs(url_secrets)
    unguard_logs(url_secrets)
    ours = logging.getLogRecordFactory()
    assert ours is not logging.LogRecord

    cases: dict[str, Callable[[], None]] = {
        "DEBUG, logger off (httpcore)": lambda: off.debug("connect_tcp %s", url),
        "INFO, app logger, nothing in flight": lambda: app.info("served %s", 200),
        "INFO, app logger, a call in flight": lambda: app.info("served %s", 200),
        "DEBUG httpcore.http11 with a key, in flight": lambda: wire.debug("Location %s", url),
    }
    in_flight_cases = {
        "INFO, app logger, a call in flight",
        "DEBUG httpcore.http11 with a key, in flight",
    }
    factories = {"floor (default factory)": logging.LogRecord, "with both scrubbers": ours}
    results: dict[tuple[str, str], list[float]] = {}
    for _ in range(options.repeat):
        for variant, factory in factories.items():
            logging.setLogRecordFactory(factory)
            for name, call in cases.items():
                # A call in flight, without guarded_logs (it would reinstall the factory).
                if name in in_flight_cases:
                    openapi_scrubber.register(secrets)
                seconds = timeit.timeit(call, number=options.number)
                if name in in_flight_cases:
                    openapi_scrubber.unregister(secrets)
                results.setdefault((name, variant), []).append(seconds / options.number * 1e9)
    logging.setLogRecordFactory(ours)

    print(f"| call | {' | '.join(factories)} | added |")
    print("|---|" + "---|" * (len(factories) + 1))
    for name in cases:
        floor, scrubbed = (min(results[name, variant]) for variant in factories)
        print(f"| {name} | {floor:.0f} | {scrubbed:.0f} | {scrubbed - floor:+.0f} |")


if __name__ == "__main__":
    main()
