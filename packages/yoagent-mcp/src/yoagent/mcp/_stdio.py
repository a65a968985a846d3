"""The stdio transport: newline-delimited JSON-RPC between a child process and the SDK session.

The SDK's own ``stdio_client`` is not used (see ``_process``); this module bridges the
child's pipes to the two memory streams a ``ClientSession`` reads and writes:

* stdout is read in the event loop (non-blocking, ``anyio.wait_readable``) and split into
  lines; a line that is not a JSON-RPC message is skipped, logged and counted (the count
  goes into the error that reports the connection's end); an error response with a
  ``null`` id is taken as the answer to the one request in flight, if there is exactly one.
* every message the session writes goes to stdin as one line; a broken pipe ends the
  connection ("no longer reads its input").
* a ``tools/call`` result is made lenient (``_lenient``) before the session validates it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Final, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from yoagent.core.support import warn_once

from ._lenient import lenient_tool_result
from ._log import logger
from ._process import ServerProcess, settle

if TYPE_CHECKING:
    from mcp.shared.message import SessionMessage

MAX_LINE_BYTES: Final = 64 * 1024 * 1024
"""A line longer than this ends the connection (a server that never sends a newline)."""

EXIT_TAIL_GRACE: Final = 0.5
"""How long an exit's description may still change (its stderr still draining)."""

EXIT_WAIT: Final = 3.0
"""How long a closed connection waits for its server's process to be seen exiting: a
server that dies closes its output first, and a loaded machine may reap it late."""

_READ_CHUNK: Final = 1 << 16
_WARNED_LINES: Final = 5  # non-JSON lines logged one by one; the rest are only counted


class StdioState:
    """What is known about one stdio server's end: the reason an exit watch reports."""

    def __init__(self, process: ServerProcess) -> None:
        self.process = process
        self.non_json_lines = 0
        self.output_closed = False
        self.input_closed = False
        self.line_too_long = False
        self.closed_by_host = False
        self._first_seen: float | None = None  # when the process's exit was first seen
        self._latched: str | None = None

    def _why(self) -> str | None:
        if self.closed_by_host:
            return "was closed"
        status = self.process.status
        if status is not None:
            return status
        if self.line_too_long:
            return f"sent a line over {MAX_LINE_BYTES} bytes"
        if self.output_closed:
            return "closed its output (its process is still running)"
        if self.input_closed:
            return "no longer reads its input (its process is still running)"
        return None

    def suffix(self) -> str:
        """``; last stderr: …`` and the skipped-line count, as far as known now."""
        parts: list[str] = []
        if self.non_json_lines:
            lines = "line" if self.non_json_lines == 1 else "lines"
            parts.append(f"{self.non_json_lines} non-JSON {lines} on its output skipped")
        tail = self.process.stderr.text()
        if tail:
            parts.append(f"last stderr: {tail}")
        return "".join(f"; {part}" for part in parts)

    def exit_reason(self) -> str | None:
        """Why the server has gone, or ``None`` while it is up. Never blocks.

        The text may still grow while stderr drains (at most :data:`EXIT_TAIL_GRACE`
        after the exit is first seen); then it is fixed. A closed output or input while
        the process still runs is not fixed: when the process then exits, however late
        (a loaded machine), the reason becomes its exit status.
        """
        if self._latched is not None:
            return self._latched
        why = self._why()
        if why is None:
            return None
        text = why + self.suffix()
        # An exit is final once stderr has drained or the grace is over; a closed output
        # or input stays open to the exit status that usually follows it.
        exited = self.process.has_exited
        if exited and self._first_seen is None:
            self._first_seen = time.monotonic()
        waited = exited and time.monotonic() - (self._first_seen or 0.0) >= EXIT_TAIL_GRACE
        drained = exited and self.process.stderr.done.is_set()
        if self.closed_by_host or drained or waited:
            self._latched = text
        return text

    async def settled_reason(self) -> str:
        """The end's reason once the exit and the stderr drain are seen: waits up to
        :data:`EXIT_WAIT` for the exit, then up to :data:`EXIT_TAIL_GRACE` for stderr
        (nothing when this side closed the connection: the reason is known)."""
        if not self.closed_by_host:
            # Both are set by threads (threading.Event): polled, not awaited.
            with anyio.move_on_after(EXIT_WAIT):
                while not self.process.has_exited:  # noqa: ASYNC110
                    await anyio.sleep(0.01)
            if self.process.has_exited:
                with anyio.move_on_after(EXIT_TAIL_GRACE):
                    while not self.process.stderr.done.is_set():  # noqa: ASYNC110
                        await anyio.sleep(0.01)
        return self.exit_reason() or ("ended" + self.suffix())


class _Lines:
    """Splits a byte stream into lines without rescanning what was already searched."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._scanned = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buffer += chunk
        lines: list[bytes] = []
        start = 0
        while (end := self._buffer.find(b"\n", max(start, self._scanned))) >= 0:
            lines.append(bytes(self._buffer[start:end]))
            start = end + 1
        del self._buffer[:start]
        self._scanned = len(self._buffer)
        return lines

    @property
    def pending(self) -> int:
        return len(self._buffer)


class _Bridge:
    """The two tasks that move messages between the child's pipes and the session."""

    def __init__(self, state: StdioState, name: str) -> None:
        self.state = state
        self.name = name
        self.in_flight: set[str] = set()  # request ids written and not yet answered

    def _parse(self, line: bytes) -> SessionMessage | None:
        from mcp_types import JSONRPCError, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter

        from mcp.shared.message import SessionMessage

        stripped = line.strip()
        if not stripped:
            return None
        try:
            raw: Any = json.loads(stripped)
            if isinstance(raw, dict):
                raw = self._fix(cast(dict[str, Any], raw))
            message = jsonrpc_message_adapter.validate_python(raw, by_name=False)
        except ValueError:  # json.JSONDecodeError and pydantic.ValidationError alike
            self._skip(stripped)
            return None
        if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
            self.in_flight.discard(str(message.id))
        elif isinstance(message, JSONRPCRequest) and message.method != "ping":
            warn_once(
                logger,
                f"server-request:{self.name}:{message.method}",
                "MCP server %s asked this client for %r; answered that it is not supported",
                self.name,
                message.method,
            )
        return SessionMessage(message)

    def _fix(self, raw: dict[str, Any]) -> dict[str, Any]:
        if "result" in raw and isinstance(raw["result"], dict):
            result = cast(dict[str, Any], raw["result"])
            if "content" in result:
                raw = {**raw, "result": lenient_tool_result(result)}
        if "error" in raw and raw.get("id") is None:
            if len(self.in_flight) == 1:
                (only,) = self.in_flight
                logger.warning(
                    "MCP server %s answered with an error without an id; "
                    "taken as the answer to the request in flight",
                    self.name,
                )
                raw = {**raw, "id": int(only) if only.isdigit() else only}
            else:
                logger.warning(
                    "MCP server %s sent an error without an id: %s",
                    self.name,
                    str(raw.get("error"))[:200],
                )
        return raw

    def _skip(self, line: bytes) -> None:
        self.state.non_json_lines += 1
        if self.state.non_json_lines <= _WARNED_LINES:
            text = line[:200].decode("utf-8", errors="replace")
            logger.warning(
                "MCP server %s printed a line that is not JSON-RPC (skipped): %s", self.name, text
            )

    async def read(self, out: MemoryObjectSendStream[SessionMessage | Exception]) -> None:
        fd = self.state.process.stdout.fileno()
        os.set_blocking(fd, False)
        lines = _Lines()
        async with out:
            while True:
                try:
                    chunk = os.read(fd, _READ_CHUNK)
                except BlockingIOError:
                    await anyio.wait_readable(fd)
                    continue
                except OSError:
                    chunk = b""
                if not chunk:
                    self.state.output_closed = True
                    return
                for line in lines.feed(chunk):
                    message = self._parse(line)
                    if message is None:
                        continue
                    try:
                        await out.send(message)
                    except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                        return  # the session has gone, or the writer ended the connection
                if lines.pending > MAX_LINE_BYTES:
                    self.state.line_too_long = True
                    return

    async def write(self, source: MemoryObjectReceiveStream[SessionMessage]) -> None:
        from mcp_types import JSONRPCRequest

        fd = self.state.process.stdin.fileno()
        os.set_blocking(fd, False)
        async with source:
            async for item in source:
                message = item.message
                if isinstance(message, JSONRPCRequest):
                    self.in_flight.add(str(message.id))
                data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                view = memoryview(data)
                try:
                    while view:
                        try:
                            written = os.write(fd, view)
                        except BlockingIOError:
                            await anyio.wait_writable(fd)
                            continue
                        view = view[written:]
                except OSError:
                    self.state.input_closed = True
                    return


@asynccontextmanager
async def stdio_streams(
    process: ServerProcess, state: StdioState, *, close_grace: float
) -> AsyncGenerator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """The session's read and write streams for ``process``; kills it when left."""
    from mcp.shared.message import SessionMessage

    bridge = _Bridge(state, process.name)
    read_send, read_receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_send, write_receive = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as group:

            async def read_then_end() -> None:
                await bridge.read(read_send)

            async def write_then_end() -> None:
                await bridge.write(write_receive)
                if state.input_closed:
                    await read_send.aclose()  # the session must see the end, not wait

            group.start_soon(read_then_end)
            group.start_soon(write_then_end)
            try:
                yield read_receive, write_send
            finally:
                group.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(settle, process, close_grace)
        for stream in (read_send, read_receive, write_send, write_receive):
            stream.close()
