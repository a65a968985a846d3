"""The pytest plugin: the ``yoagent_cassette`` fixture and the ``--yoagent-record`` option.

Record once against a real model (``pytest --yoagent-record=once``), commit the cassette,
and every later run replays it with no network and no key (the default mode, ``none``).
Registered through the ``pytest11`` entry point as ``yoagent``; ``-p no:yoagent`` turns it
off. yoagent itself is imported only when a test uses the fixture.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

if TYPE_CHECKING:
    from ._use import UseCassette

MODES = ("none", "once", "new_episodes", "all")
_UNSAFE = re.compile(r"[^\w.\-\[\]]+")
_LONGEST_NAME = 120


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("yoagent", "yoagent record and replay")
    group.addoption(
        "--yoagent-record",
        dest="yoagent_record",
        choices=MODES,
        default=None,
        help=(
            "when model calls are recorded to cassettes: none (replay only, the default), "
            "once (record missing cassettes), new_episodes (record calls a cassette "
            "lacks), all (record everything again)"
        ),
    )
    parser.addini("yoagent_record", "the default for --yoagent-record", default="none")


def pytest_configure(config: pytest.Config) -> None:
    mode = config.getini("yoagent_record")
    if mode not in MODES:
        raise pytest.UsageError(f"yoagent_record = {mode!r}: use one of {', '.join(MODES)}")
    config.addinivalue_line(
        "markers",
        "yoagent_cassette(name=None, *, match=None, timing=False): the test's cassette file "
        "(relative to yoagent_cassette_dir), how requests are matched, and whether delta "
        "timing is recorded",
    )


@pytest.fixture
def yoagent_record_mode(request: pytest.FixtureRequest) -> str:
    """The record mode: ``--yoagent-record``, else the ``yoagent_record`` ini value."""
    return str(
        request.config.getoption("yoagent_record") or request.config.getini("yoagent_record")
    )


@pytest.fixture
def yoagent_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """Where the test's cassettes live: ``cassettes/<module name>/`` beside the module.
    Override this fixture to keep them elsewhere."""
    return request.path.parent / "cassettes" / request.path.stem


@pytest.fixture
def yoagent_cassette(
    request: pytest.FixtureRequest, yoagent_record_mode: str, yoagent_cassette_dir: Path
) -> Iterator[UseCassette]:
    """The test's cassette, ready to use: ``.provider(live)`` and ``.tools(tools)``.

    The file is ``<test name>.jsonl`` (``<class>.<test name>.jsonl`` in a class) in
    :func:`yoagent_cassette_dir`, the name made safe by :func:`cassette_name`, or the
    name the ``yoagent_cassette`` marker gives. A
    request or tool call the cassette could not serve fails the test at teardown, even
    when the run caught the error.
    """
    from ._use import UseCassette

    marker = request.node.get_closest_marker("yoagent_cassette")
    args: tuple[Any, ...] = marker.args if marker else ()
    options: dict[str, Any] = dict(marker.kwargs) if marker else {}
    test = request.node.name
    owner = cast("type[Any] | None", getattr(request, "cls", None))
    if owner is not None:  # two classes of one module may hold tests of one name
        test = f"{owner.__name__}.{test}"
    name = str(args[0]) if args and args[0] else cassette_name(test)
    use = UseCassette(
        yoagent_cassette_dir / name,
        yoagent_record_mode,
        match=options.get("match"),
        timing=bool(options.get("timing", False)),
    )
    yield use
    if use.mismatches:
        pytest.fail(
            f"{use.path}: the cassette could not serve this test: {use.mismatches[0]}\n"
            "(if the change is intended, record again with --yoagent-record=all)",
            pytrace=False,
        )


def cassette_name(test_name: str) -> str:
    """A file name for a test's cassette: its name made safe for any file system.

    A name that is already safe (and at most 120 characters) is kept as it is. Otherwise
    other characters become ``_``, the name is cut to fit, and it ends in ``-`` and 12 hex
    digits of a hash of the test's own name: ``test_ask[what is 2+2?]`` and
    ``test_ask[what is 2*2?]`` are both ``test_ask[what_is_2_2_]`` once made safe, and
    must not share a cassette.
    """
    safe = _UNSAFE.sub("_", test_name).strip("._") or "test"
    if safe == test_name and len(safe) <= _LONGEST_NAME:
        return f"{safe}.jsonl"
    digest = hashlib.sha256(test_name.encode()).hexdigest()[:12]
    return f"{safe[: _LONGEST_NAME - 13]}-{digest}.jsonl"
