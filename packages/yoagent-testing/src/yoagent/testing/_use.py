"""UseCassette: one test's cassette under a record mode — record it, replay it, or both."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path

from yoagent.core import AgentTool, AssistantMessage, ModelConfig
from yoagent.core.provider import (
    DeltaSink,
    StreamConfig,
    StreamProvider,
    default_registry,
    with_env_key,
)

from ._codec import CassetteError
from ._match import Match, RequestMismatch
from ._record import RecordingProvider
from ._replay import ReplayProvider
from ._tools import RecordingTool, ReplayingTool, ToolResultMismatch
from ._writer import CassetteWriter

LiveProvider = StreamProvider | Callable[[], StreamProvider] | ModelConfig
"""A real provider, a function making one (called only when something is recorded), or a
model config to make one from (through the provider registry, its key from the environment)."""


class RecordMode(StrEnum):
    """When a test's model calls are recorded (the modes of pytest-recording / VCR.py)."""

    NONE = "none"
    """Replay only: never call a model; a missing cassette is an error."""
    ONCE = "once"
    """Replay the cassette when it exists; record it when it does not."""
    NEW_EPISODES = "new_episodes"
    """Replay the calls the cassette holds; record the others, appended to it."""
    ALL = "all"
    """Record every call again, replacing the cassette."""


class UseCassette:
    """One cassette, used as ``mode`` says: the providers and tools a test runs with.

    Whether it records is decided once, when it is made (``once`` records only when the
    file did not exist then). Every :meth:`provider` shares the cassette: recorders write
    to one file, replays play each recorded call once between them.
    """

    def __init__(
        self,
        path: str | Path,
        mode: RecordMode | str = RecordMode.NONE,
        *,
        match: Match | None = None,
        timing: bool = False,
    ) -> None:
        self.path = Path(path)
        self.mode = RecordMode(mode)
        self.match = match or Match()
        self.timing = timing
        existed = self.path.exists()
        self.recording = self.mode is RecordMode.ALL or (
            self.mode in (RecordMode.ONCE, RecordMode.NEW_EPISODES) and not existed
        )
        """True when every call is recorded (none replayed)."""
        self._writer: CassetteWriter | None = None
        self._replay: ReplayProvider | None = None
        if not self.recording and existed:
            self._replay = ReplayProvider(self.path, match=self.match)

    def __repr__(self) -> str:
        return f"UseCassette({str(self.path)!r}, {self.mode.value!r})"

    def provider(self, live: LiveProvider | None = None) -> StreamProvider:
        """The provider to run with: a recorder around ``live``, a replay of the cassette,
        or (``new_episodes``) a replay that records what it cannot serve.

        ``live`` is needed only to record; a replay never makes it.
        """
        if self.recording:
            return RecordingProvider(self._live(live), self._writer_for(), timing=self.timing)
        replay = self._replaying()
        if self.mode is not RecordMode.NEW_EPISODES:
            return replay.sibling(then=None)
        return replay.sibling(then=_Lazy(lambda: self._recorder(live)))

    def tools(self, tools: Sequence[AgentTool]) -> list[AgentTool]:
        """``tools`` wrapped to record each result, or to serve recorded results without
        running (``new_episodes``: a call with no recording runs, and is recorded)."""
        if self.recording:
            writer = self._writer_for()
            return [RecordingTool(tool, writer) for tool in tools]
        replay = self._replaying()
        if self.mode is not RecordMode.NEW_EPISODES:
            return replay.replay_tools(tools)
        writer = self._writer_for()
        return [
            ReplayingTool(tool, replay.tool_results, fallback=RecordingTool(tool, writer))
            for tool in tools
        ]

    @property
    def mismatches(self) -> list[RequestMismatch | ToolResultMismatch]:
        """The requests and tool calls the cassette could not serve."""
        return self._replay.mismatches if self._replay is not None else []

    def check(self) -> None:
        """Raise the first mismatch, if there was one."""
        if self._replay is not None:
            self._replay.check()

    def _replaying(self) -> ReplayProvider:
        if self._replay is None:
            raise CassetteError(
                f"no cassette at {self.path}: record it with --yoagent-record=once "
                "(or RecordMode.ONCE), against a real model"
            )
        return self._replay

    def _writer_for(self) -> CassetteWriter:
        if self._writer is None:
            append = self.mode is RecordMode.NEW_EPISODES and not self.recording
            self._writer = CassetteWriter(self.path, append=append)
        return self._writer

    def _recorder(self, live: LiveProvider | None) -> StreamProvider:
        return RecordingProvider(self._live(live), self._writer_for(), timing=self.timing)

    def _live(self, live: LiveProvider | None) -> StreamProvider:
        if live is None:
            raise CassetteError(
                f"recording {self.path} needs the real provider: pass provider(live) a "
                "provider, a function making one, or a ModelConfig"
            )
        if isinstance(live, ModelConfig):
            return default_registry().create(with_env_key(live))
        if isinstance(live, StreamProvider):
            return live
        return live()


class _Lazy:
    """A provider made on its first call (so a replay that never needs it never makes it)."""

    __slots__ = ("_made", "_make")

    def __init__(self, make: Callable[[], StreamProvider]) -> None:
        self._make = make
        self._made: StreamProvider | None = None

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        if self._made is None:
            self._made = self._make()
        return await self._made.stream(config, sink)
