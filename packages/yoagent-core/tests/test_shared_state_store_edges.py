"""Shared state's store at its edges: each refusal's text word for word, the cap's
arithmetic and its exact bound, the flags a file is read with, the OS errors a file
backend turns into a :class:`SharedStateError`, and the summary's wording and count."""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
from core_helpers import route_reads

from yoagent.core._shared_state.store import (
    FileBackend,
    InvalidKeyError,
    MemoryBackend,
    SharedState,
    SharedStateError,
    SharedStateFullError,
    tool_output_key,
    validate_key,
)


def test_an_empty_key_is_refused_in_these_words() -> None:
    with pytest.raises(InvalidKeyError) as caught:
        validate_key("")
    assert str(caught.value) == "shared state key is empty"


def test_a_long_key_is_quoted_by_its_first_40_characters() -> None:
    key = "".join(chr(ord("a") + i % 26) for i in range(201))
    with pytest.raises(InvalidKeyError) as caught:
        validate_key(key)
    assert str(caught.value) == (
        f"shared state key is 201 bytes long; the limit is 200 (key starts {key[:40]!r})"
    )


async def test_the_full_error_gives_the_sizes_in_megabytes_and_says_what_to_do() -> None:
    backend = MemoryBackend(max_bytes=1024 * 1024)
    with pytest.raises(SharedStateFullError) as caught:
        await backend.set("k", "x" * (10 * 1024 * 1024))
    assert str(caught.value) == (
        "shared state is full: storing 'k' (10.00 MB) would use 10.00 MB of its 1.00 MB cap; "
        "remove keys that are no longer needed, or give MemoryBackend a larger max_bytes"
    )
    assert await backend.list() == []
    assert backend.used_bytes == 0


async def test_a_store_filled_to_its_cap_exactly_is_not_full() -> None:
    backend = MemoryBackend(max_bytes=len("key") + len("value"))
    await backend.set("key", "value")
    assert await backend.get("key") == "value"
    assert backend.used_bytes == backend.max_bytes
    with pytest.raises(SharedStateFullError):
        await backend.set("key", "value!")


async def test_a_file_is_opened_without_following_links_blocking_or_leaking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = FileBackend(tmp_path)
    await backend.set("k", "v")
    seen: list[int] = []
    real_open = os.open

    def recording_open(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if Path(path) == tmp_path / "k":
            seen.append(flags)
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", recording_open)
    assert await backend.get("k") == "v"
    assert seen == [os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC]


async def test_a_link_in_the_folder_is_refused_in_these_words(tmp_path: Path) -> None:
    (tmp_path / "target").write_text("secret")
    (tmp_path / "k").symlink_to(tmp_path / "target")
    with pytest.raises(SharedStateError) as caught:
        await FileBackend(tmp_path).get("k")
    assert str(caught.value) == (
        f"shared state 'k' is a symbolic link in {tmp_path}; links are not followed"
    )


async def test_a_folder_named_like_the_key_is_refused_in_these_words(tmp_path: Path) -> None:
    (tmp_path / "k").mkdir()
    with pytest.raises(SharedStateError) as caught:
        await FileBackend(tmp_path).get("k")
    assert str(caught.value) == (
        f"shared state 'k' is not a regular file in {tmp_path} "
        "(a directory or device named like the key); remove it"
    )


@pytest.mark.parametrize(
    ("error", "reason"),
    [
        (PermissionError(errno.EACCES, "Permission denied"), "Permission denied"),
        (OSError("disk gone"), "disk gone"),  # no strerror: the error's text
    ],
)
async def test_an_open_that_fails_names_the_read_the_key_and_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: OSError, reason: str
) -> None:
    def refused(*args: Any, **kwargs: Any) -> int:
        raise error

    monkeypatch.setattr(os, "open", refused)
    with pytest.raises(SharedStateError) as caught:
        await FileBackend(tmp_path).get("k")
    assert str(caught.value) == f"cannot read shared state 'k': {reason}"


async def test_a_read_that_fails_names_the_read_the_key_and_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = FileBackend(tmp_path)
    await backend.set("k", "v")

    def failing(handle: Any, size: int) -> bytes:
        raise OSError(errno.EIO, "Input/output error")

    route_reads(monkeypatch, failing)
    with pytest.raises(SharedStateError) as caught:
        await backend.get("k")
    assert str(caught.value) == "cannot read shared state 'k': Input/output error"


async def test_a_write_over_a_folder_names_the_write_the_key_and_the_folder(
    tmp_path: Path,
) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "inside").write_text("x")
    with pytest.raises(SharedStateError) as caught:
        await FileBackend(tmp_path).set("k", "v")
    assert str(caught.value) == (
        "cannot write shared state 'k': a directory of that name is in the way"
    )


async def test_a_file_backend_makes_its_folder_and_the_folders_above_it(tmp_path: Path) -> None:
    backend = FileBackend(tmp_path / "a" / "b" / "state")
    await backend.set("k", "v")
    assert (tmp_path / "a" / "b" / "state" / "k").read_text() == "v"


async def test_a_value_with_a_lone_surrogate_is_refused_naming_its_key(tmp_path: Path) -> None:
    expected = (
        "the value for 'k' contains a lone surrogate '\\ud800' at character 1, which is not "
        "valid text; remove or replace it"
    )
    with pytest.raises(SharedStateError) as caught:
        await SharedState().set("k", "a\ud800")
    assert str(caught.value) == expected
    with pytest.raises(SharedStateError) as caught:
        await FileBackend(tmp_path).set("k", "a\ud800")
    assert str(caught.value) == expected


async def test_the_summary_of_an_empty_store() -> None:
    assert await SharedState().summary() == (
        "Shared state is empty. Use the shared_state tool to store artifacts by key."
    )


async def test_the_summary_names_50_keys_by_default_and_counts_the_rest() -> None:
    state = SharedState()
    keys = [f"k{index:02d}" for index in range(51)]
    for key in keys:
        await state.set(key, "v")
    assert await state.summary() == (
        f"Shared state holds 51 keys: {', '.join(keys[:50])} (and 1 more). "
        "Read one with the shared_state tool (action get)."
    )


async def test_the_summary_of_as_many_keys_as_it_shows_adds_no_count() -> None:
    state = SharedState()
    for key in ("a", "b"):
        await state.set(key, "v")
    assert await state.summary(max_keys=2) == (
        "Shared state holds 2 keys: a, b. Read one with the shared_state tool (action get)."
    )


async def test_a_sink_made_by_the_store_writes_under_its_prefix() -> None:
    state = SharedState()
    sink = state.sink(prefix="kept-")
    assert await sink("c1", "bash", "full text") == "kept-c1"
    assert await state.get("kept-c1") == "full text"


def test_a_tool_output_key_of_the_longest_length_is_kept_as_it_is() -> None:
    call_id = "c" * (200 - len("tool-output-"))
    assert tool_output_key(call_id) == "tool-output-" + call_id


def test_a_changed_call_id_gets_twelve_hex_digits_of_its_hash() -> None:
    digest = hashlib.sha256(b"call/1").hexdigest()[:12]
    assert tool_output_key("call/1") == f"tool-output-call_1-{digest}"
