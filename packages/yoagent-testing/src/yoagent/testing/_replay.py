"""ReplayProvider: serves a cassette's recorded calls, with no network and no key."""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from pathlib import Path

import anyio
import anyio.lowlevel

from yoagent.core import AgentTool, AssistantMessage
from yoagent.core.provider import DeltaSink, StreamConfig, StreamProvider

from ._cassette import Cassette
from ._codec import JsonObject, request_json
from ._match import Difference, Match, RequestMismatch, canonical_json, first_difference
from ._records import RecordedCall
from ._tools import RecordedResults, ReplayingTool, ToolResultMismatch


class ReplayProvider:
    """A provider that answers each request with the recorded call that matches it.

    A request is served by the first unplayed call whose request equals it under
    ``match`` (see :class:`Match`); each call is played once. It streams the recorded
    deltas in order, then returns the recorded final message (a fresh object), raises the
    recorded :class:`~yoagent.core.ProviderError`, or — for a call that was cancelled —
    waits to be cancelled again. ``speed`` keeps the recorded timing (``1.0``: as
    recorded, ``2.0``: twice as fast; ``None``: no waiting).

    A request no call serves goes to ``then`` when one is given (recording new calls, or
    continuing a fork with another model); otherwise it fails with
    :class:`RequestMismatch`, whose message names the first field that differs from the
    next unplayed call. ``max_calls`` stops serving from the cassette after that many
    calls (everything after goes to ``then``).
    """

    def __init__(
        self,
        cassette: Cassette | str | Path,
        *,
        match: Match | None = None,
        speed: float | None = None,
        then: StreamProvider | None = None,
        max_calls: int | None = None,
    ) -> None:
        self.cassette = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
        self.match = match or Match()
        if speed is not None and not speed > 0:
            raise ValueError(f"speed must be above 0 (or None for no waiting), not {speed}")
        self.speed = speed
        self.then = then
        self.max_calls = max_calls
        self.requests: list[StreamConfig] = []
        """Every request asked of this provider (and its siblings), in order."""
        self._unplayed: list[RecordedCall] = list(self.cassette.calls)
        self._mismatches: list[RequestMismatch | ToolResultMismatch] = []
        self._results = RecordedResults(
            self.cassette.tools, source=self._source, mismatches=self._mismatches
        )

    def __repr__(self) -> str:
        return f"ReplayProvider({self.cassette!r}, unplayed={len(self._unplayed)})"

    @property
    def _source(self) -> str:
        return str(self.cassette.path) if self.cassette.path else "the cassette"

    def sibling(self, *, then: StreamProvider | None) -> ReplayProvider:
        """Another provider serving the same cassette, with its own ``then``: each recorded
        call is still played once between them (two agents of one test, two models)."""
        twin = copy.copy(self)  # shares the unplayed calls, requests and mismatches
        twin.then = then
        return twin

    @property
    def served(self) -> int:
        """How many recorded calls have been played."""
        return len(self.cassette.calls) - len(self._unplayed)

    @property
    def unplayed(self) -> list[RecordedCall]:
        """The recorded calls no request has used yet."""
        return list(self._unplayed)

    @property
    def mismatches(self) -> list[RequestMismatch | ToolResultMismatch]:
        """Every request and tool call the cassette could not serve, in order."""
        return list(self._mismatches)

    @property
    def tool_results(self) -> RecordedResults:
        """The cassette's recorded tool results, shared by every tool :meth:`replay_tools`
        wraps (each served once)."""
        return self._results

    def check(self) -> None:
        """Raise the first mismatch, if there was one (a run that caught it still fails)."""
        found = self.mismatches
        if found:
            raise found[0]

    def replay_tools(
        self, tools: Sequence[AgentTool], *, run_missing: bool = False
    ) -> list[AgentTool]:
        """``tools`` wrapped so each call gets its recorded result and the tool never runs.

        A call with no recording fails (the model reads a :class:`ToolResultMismatch`
        error), or, with ``run_missing=True``, runs the tool for real.
        """
        return [
            ReplayingTool(tool, self._results, fallback=tool if run_missing else None)
            for tool in tools
        ]

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Serve the recorded call matching ``config`` (see the class docstring)."""
        number = len(self.requests)
        self.requests.append(config)
        call = self._take(request_json(config), number)
        if call is None:
            assert self.then is not None
            return await self.then.stream(config, sink)
        return await self._play(call, sink)

    def _take(self, request: JsonObject, number: int) -> RecordedCall | None:
        if self.max_calls is not None and self.served >= self.max_calls:
            if self.then is not None:
                return None
            raise self._fail(
                RequestMismatch(
                    f"request {number}: this replay serves at most {self.max_calls} "
                    f"calls from {self._source}, and has served them",
                    request=number,
                )
            )
        wanted = self.match.apply(request)
        wanted_text = canonical_json(wanted)
        for position, call in enumerate(self._unplayed):
            if canonical_json(self.match.apply(call.request)) == wanted_text:
                del self._unplayed[position]
                return call
        if self.then is not None:
            return None
        if not self._unplayed:
            raise self._fail(
                RequestMismatch(
                    f"request {number} matches no recorded call: all "
                    f"{len(self.cassette.calls)} calls of {self._source} were played",
                    request=number,
                )
            )
        nearest = self._unplayed[0]
        recorded = self.match.apply(nearest.request)
        # A normalizer returning what JSON cannot tell apart (tuples, int keys) may leave
        # no field to name: the whole request is then shown.
        difference = first_difference(recorded, wanted) or Difference((), recorded, wanted)
        raise self._fail(
            RequestMismatch(
                f"request {number} matches no recorded call in {self._source}; against "
                f"the next unplayed call ({nearest.n}), " + difference.describe(recorded, wanted),
                request=number,
                call=nearest.n,
                difference=difference,
            )
        )

    def _fail(self, mismatch: RequestMismatch) -> RequestMismatch:
        self._mismatches.append(mismatch)
        return mismatch

    async def _play(self, call: RecordedCall, sink: DeltaSink) -> AssistantMessage:
        deltas = call.delta_objects()
        times = call.times if self.speed is not None else None
        started = time.monotonic()
        for index, delta in enumerate(deltas):
            if times is not None:
                await self._wait_until(started, times[index])
            else:
                await anyio.lowlevel.checkpoint()  # a consumer may cancel between deltas
            sink(delta)
        if self.speed is not None and call.elapsed is not None:
            await self._wait_until(started, call.elapsed)
        reply = call.reply_message()
        if reply is not None:
            return reply
        error = call.provider_error()
        if error is not None:
            raise error
        await anyio.sleep_forever()  # recorded as cancelled: it ends the same way again
        raise AssertionError("unreachable")  # pragma: no cover

    async def _wait_until(self, started: float, offset: float) -> None:
        assert self.speed is not None
        await anyio.sleep(max(started + offset / self.speed - time.monotonic(), 0.0))
