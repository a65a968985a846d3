"""Connecting MCP servers for a session, in process, against the real notes server: tool
prefixes, what ``/mcp`` reports (a server that has gone included), and a start-up failure
that closes what was already connected."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import anyio
import pytest

from yoagent.cli.mcp_config import McpServerSpec
from yoagent.cli.mcp_servers import McpStartError, connect_servers

NOTES_SERVER = Path(__file__).parent / "notes_mcp_server.py"


def notes(name: str | None = None, *, confirm: bool = True, marker: str = "") -> McpServerSpec:
    source = "config" if name else "--mcp"
    argv = (sys.executable, str(NOTES_SERVER), "stdio", *([marker] if marker else []))
    return McpServerSpec(name=name, source=source, argv=argv, confirm=confirm)


def running_with(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``."""
    found: list[int] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker.encode() not in (entry / "cmdline").read_bytes():
                continue
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X"):
            found.append(int(entry.name))
    return found


async def test_servers_are_prefixed_uniquely_and_report_their_tools_or_why_they_went(
    tmp_path: Path,
) -> None:
    specs = [notes("notes", confirm=False), notes()]  # both call themselves "notes"
    async with connect_servers(specs, tmp_path) as servers:
        assert [server.prefix for server in servers.servers] == ["notes", "notes_2"]
        assert servers.summary() == "notes (3 tools), notes_2 (3 tools)"
        assert servers.trusted("notes__add_note") and not servers.trusted("notes_2__add_note")
        assert await servers.report() == [
            "notes (notes, from config; runs without asking): 3 tools",
            "  notes__add_note, notes__owner, notes__shutdown",
            "notes_2 (python notes_mcp_server.py, from --mcp; calls itself notes): 3 tools",
            "  notes_2__add_note, notes_2__owner, notes_2__shutdown",
        ]
        second = servers.servers[1].client
        assert (await second.call_tool("shutdown")).content[0].text == "shutting down"  # pyright: ignore[reportAttributeAccessIssue]
        with anyio.fail_after(30):
            while second.exited() is None:  # noqa: ASYNC110 (exited() is a poll, no event)
                await anyio.sleep(0.05)
        report = await servers.report()
        assert report[2].startswith(
            "notes_2 (python notes_mcp_server.py, from --mcp; calls itself notes): "
            "exited with status 3"
        )
        assert report[2].endswith("; its tools are withdrawn")
        assert await servers.servers[1].source.tools() == []


async def test_a_server_that_cannot_start_closes_the_ones_already_connected(
    tmp_path: Path,
) -> None:
    if sys.platform != "linux":
        pytest.skip("needs /proc to see which processes are left")
    marker = f"marker-{uuid.uuid4().hex}"
    broken = McpServerSpec(name="broken", source="config", argv=("no-such-program-q",))
    started: list[str] = []

    async def start() -> None:
        specs = [notes("notes", marker=marker), broken]
        async with connect_servers(specs, tmp_path, tmp_path / "c.toml"):
            started.append("body")  # never reached

    with pytest.raises(McpStartError) as caught:
        await start()
    assert started == []
    assert running_with(marker) == []  # the server that had started was ended
    assert str(caught.value) == (
        "config: MCP server broken: cannot start 'no-such-program-q': No such file or "
        f"directory (enabled = false in [mcp_servers.broken] of {tmp_path / 'c.toml'} "
        "starts without it)"
    )


async def test_mcp_report_shows_a_renamed_tool_with_its_own_name_and_renaming_is_stable(
    tmp_path: Path,
) -> None:
    async with connect_servers([notes("n", marker="odd-names")], tmp_path) as servers:
        report = await servers.report()
        listed = report[1].split(", ")
        assert "n__notes_count" in listed  # valid: never renamed
        renamed = [entry for entry in listed if "(the server's " in entry]
        assert sorted(entry.split(" (")[1] for entry in renamed) == [
            "the server's count_" + "x" * 70 + ")",
            "the server's notes.count)",
        ]
        source = servers.servers[0].source
        first = [tool.name for tool in await source.tools()]
        assert [tool.name for tool in await source.tools()] == first  # the same every listing
