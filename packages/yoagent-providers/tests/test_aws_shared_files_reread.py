"""The AWS shared files are read again only when they change: each request asks for the
profile (credentials rotate), and parsing both files every time cost ≈ 150 µs of CPU per
request. A file rewritten (even to the same size), replaced, removed or broken is seen at
the next request."""

from __future__ import annotations

import configparser
import os
import time
from pathlib import Path

import pytest
from bedrock_fixtures import bedrock_config, fixed_env

from yoagent.core import ProviderError
from yoagent.providers import _aws_credentials
from yoagent.providers._aws_credentials import SharedFiles, SigV4Auth, resolve_auth, resolve_region

PROFILE = "[default]\naws_access_key_id = {key}\naws_secret_access_key = s3cr3t-{key}\n"


@pytest.fixture(autouse=True)
def no_recent_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file is kept as soon as it is read (the window in which a just-modified file is
    read every time is tested on its own: a file's ctime cannot be set back)."""
    monkeypatch.setattr(_aws_credentials, "_RACY_NS", -(10**18))


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "credentials").write_text(PROFILE.format(key="AKIAONE1"))
    (tmp_path / "config").write_text("[default]\nregion = eu-west-3\n")
    return fixed_env(
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "credentials"),
        AWS_CONFIG_FILE=str(tmp_path / "config"),
    )


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files parsed, in order."""
    seen: list[str] = []
    parse = configparser.ConfigParser.read_file

    def counted(self: configparser.ConfigParser, handle: object, source: str | None = None) -> None:
        seen.append(Path(getattr(handle, "name", "?")).name)
        parse(self, handle, source)  # type: ignore[arg-type]

    monkeypatch.setattr(configparser.ConfigParser, "read_file", counted)
    return seen


def access_key(env: dict[str, str]) -> str:
    auth = resolve_auth(bedrock_config(api_key=""), env)
    assert isinstance(auth, SigV4Auth)
    return auth.credentials.access_key


def rewrite(path: Path, text: str) -> None:
    """``text`` written in place, its modification time moved on a second (as an edit
    a moment later would), so the change cannot hide in the file system's clock tick."""
    before = path.stat().st_mtime_ns
    path.write_text(text)
    os.utime(path, ns=(before + 1_000_000_000, before + 1_000_000_000))


def test_unchanged_files_are_parsed_once(files: dict[str, str], reads: list[str]) -> None:
    assert [access_key(files) for _ in range(3)] == ["AKIAONE1"] * 3
    assert [resolve_region("", files) for _ in range(3)] == ["eu-west-3"] * 3
    assert sorted(reads) == ["config", "credentials"]


def test_a_file_modified_within_the_window_is_read_every_time(
    files: dict[str, str], reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = Path(files["AWS_SHARED_CREDENTIALS_FILE"])
    window = 3600 * 1_000_000_000
    monkeypatch.setattr(_aws_credentials, "_RACY_NS", window)
    back = time.time_ns() - 2 * window
    os.utime(path, ns=(back, back))  # an old mtime (as cp -p leaves), its ctime now
    assert [access_key(files) for _ in range(2)] == ["AKIAONE1"] * 2
    assert reads.count("credentials") == 2  # not kept: its ctime is recent
    monkeypatch.setattr(_aws_credentials, "_RACY_NS", -(10**18))
    assert [access_key(files) for _ in range(2)] == ["AKIAONE1"] * 2
    assert reads.count("credentials") == 3  # once more, then kept


def test_a_file_rewritten_to_the_same_size_is_read_again(
    files: dict[str, str], reads: list[str]
) -> None:
    assert access_key(files) == "AKIAONE1"
    rewrite(Path(files["AWS_SHARED_CREDENTIALS_FILE"]), PROFILE.format(key="AKIATWO2"))
    assert access_key(files) == "AKIATWO2"
    assert reads.count("credentials") == 2


def test_a_file_replaced_by_another_is_read_again(files: dict[str, str]) -> None:
    assert access_key(files) == "AKIAONE1"
    path = Path(files["AWS_SHARED_CREDENTIALS_FILE"])
    fresh = path.with_name("credentials.new")
    fresh.write_text(PROFILE.format(key="AKIANEW3"))
    fresh.replace(path)  # a new inode, as tools that write atomically leave it
    assert access_key(files) == "AKIANEW3"


def test_a_removed_file_is_seen_as_gone(files: dict[str, str]) -> None:
    assert resolve_region("", files) == "eu-west-3"
    Path(files["AWS_CONFIG_FILE"]).unlink()
    with pytest.raises(ProviderError, match="which AWS region"):
        resolve_region("", files)


def test_a_file_broken_after_a_good_read_fails_every_time(
    files: dict[str, str], reads: list[str]
) -> None:
    assert access_key(files) == "AKIAONE1"
    rewrite(Path(files["AWS_SHARED_CREDENTIALS_FILE"]), "aws_access_key_id = before-a-section\n")
    for _ in range(2):
        with pytest.raises(ProviderError, match="comes before any"):
            access_key(files)
    assert reads.count("credentials") == 3  # the broken file is not kept


def test_what_a_caller_does_to_a_section_does_not_reach_the_next(files: dict[str, str]) -> None:
    first = SharedFiles(files)._section(Path(files["AWS_CONFIG_FILE"]), ("default",))  # pyright: ignore[reportPrivateUsage]
    assert first == {"region": "eu-west-3"}
    first["region"] = "changed"
    assert resolve_region("", files) == "eu-west-3"
