"""The run viewer reads only what it can read safely: a FIFO, a device or an oversized
record is refused in words, never opened; and a record is read off the event loop, so a
slow read never stops the server."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from yoagent.ui.web import (
    WebApp,
    _cassette_runs,  # pyright: ignore[reportPrivateUsage]
    to_web,
)

TOKEN = "v" * 24


def client(app: WebApp) -> httpx.AsyncClient:
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://web", timeout=30
    )


async def open_source(app: WebApp, path: Path | str) -> dict[str, Any]:
    async with client(app) as web:
        answer = await web.post(f"/{TOKEN}/api/sources", json={"path": str(path)})
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A FIFO named like a cassette. Should a reader block on it, a writer comes and goes
    after 3 s, so a regression fails instead of hanging the test run."""
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    done = threading.Event()

    def unblock() -> None:
        if not done.wait(3):
            os.close(os.open(path, os.O_RDWR))

    guard = threading.Thread(target=unblock, daemon=True)
    guard.start()
    yield path
    done.set()
    guard.join()


async def test_a_fifo_is_refused_without_being_opened(fifo: Path) -> None:
    app = to_web(None, token=TOKEN)
    started = time.monotonic()
    source = await open_source(app, fifo)
    assert time.monotonic() - started < 2
    assert (
        source["error"] == f"{fifo} is not a regular file: the viewer reads only files and folders"
    )
    assert source["runs"] == 0


async def test_a_repositorys_log_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "repo" / "state" / "events.jsonl"
    log.parent.mkdir(parents=True)
    os.mkfifo(log)
    source = await open_source(to_web(None, token=TOKEN), tmp_path / "repo")
    assert source["kind"] == "gasp"
    assert (
        source["error"] == f"{log} is not a regular file: the viewer reads only files and folders"
    )


async def test_a_device_is_refused() -> None:
    # /dev/null, not /dev/zero: a regression must fail, not eat the memory of the machine
    source = await open_source(to_web(None, token=TOKEN), "/dev/null")
    assert (
        source["error"]
        == "/dev/null is not a regular file: the viewer reads only files and folders"
    )


async def test_a_record_over_the_limit_is_refused_and_one_under_it_is_read(tmp_path: Path) -> None:
    app = to_web(None, token=TOKEN)
    app.library.max_bytes = 100
    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    big.write_text("x" * 101)
    small.write_text("not json\n")

    refused = await open_source(app, big)
    read = await open_source(app, small)

    assert refused["error"] == f"{big} is 101 bytes, over the viewer's limit of 100 bytes"
    assert read["error"] is not None and "over the viewer's limit" not in read["error"]
    assert str(small) in read["error"]  # the cassette's own complaint, naming the file
    big.write_text("x" * 50)  # the record shrank: it is read again
    async with client(app) as web:
        sources = (await web.get(f"/{TOKEN}/api/sources")).json()["sources"]
    (again,) = [s for s in sources if s["path"] == str(big)]
    assert "over the viewer's limit" not in again["error"]


async def test_a_slow_read_never_stops_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entered, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow(path: Path) -> Any:
        entered.set()
        release.wait(3)  # a hang guard: a read on the event loop fails the test, late
        order.append("read")
        raise ValueError(f"{path}: slow")

    monkeypatch.setattr(_cassette_runs, "read_cassette", slow)
    record = tmp_path / "slow.jsonl"
    record.write_text("{}\n")
    app = to_web(None, token=TOKEN)
    async with client(app) as web, anyio.create_task_group() as group:

        async def open_it() -> None:
            await web.post(f"/{TOKEN}/api/sources", json={"path": str(record)})

        group.start_soon(open_it)
        assert await anyio.to_thread.run_sync(entered.wait, 5)
        page = await web.get(f"/{TOKEN}/")  # answered while the record is being read
        order.append("page")
        release.set()
        assert page.status_code == 200
    assert order == ["page", "read"]
