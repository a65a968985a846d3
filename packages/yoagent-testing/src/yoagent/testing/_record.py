"""RecordingProvider: wraps any provider and writes every call it makes to a cassette."""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import anyio

from yoagent.core import AgentTool, AssistantMessage, ErrorKind, ProviderError
from yoagent.core.provider import DeltaSink, StreamConfig, StreamProvider

from ._cassette import Cassette
from ._codec import Delta, JsonObject, delta_json, error_json, message_json, request_json
from ._records import RecordedCall
from ._tools import RecordingTool
from ._writer import CassetteWriter


class RecordingProvider:
    """A provider that passes every call to ``provider`` and records it.

    Each call becomes one cassette record: the request as yoagent built it (see
    :func:`request_json`), every delta in order (with its time since the call began when
    ``timing`` is on), and how it ended — the final message, the :class:`ProviderError`
    it raised, or its cancellation. The call itself behaves exactly as ``provider``'s does.
    ``cassette`` is a path (a new cassette; ``append=True`` adds to an existing one) or a
    :class:`CassetteWriter` shared with other recorders.
    """

    def __init__(
        self,
        provider: StreamProvider,
        cassette: str | Path | CassetteWriter,
        *,
        timing: bool = False,
        append: bool = False,
        secrets: Iterable[str] = (),
    ) -> None:
        self.provider = provider
        if isinstance(cassette, CassetteWriter):
            cassette.add_secrets(secrets)
            self.writer = cassette
        else:
            self.writer = CassetteWriter(cassette, append=append, secrets=secrets)
        self.timing = timing

    def __repr__(self) -> str:
        return f"RecordingProvider({self.provider!r}, {str(self.writer.path)!r})"

    @property
    def cassette(self) -> Cassette:
        """What has been recorded so far (as written, secrets replaced)."""
        return self.writer.cassette

    def record_tools(self, tools: Sequence[AgentTool]) -> list[AgentTool]:
        """``tools`` wrapped so that each execution's result is recorded too (a replay can
        then serve it without running the tool)."""
        return [RecordingTool(tool, self.writer) for tool in tools]

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        """Make the call through the wrapped provider, recording it as it goes."""
        writer = self.writer
        writer.add_model(config.model)
        call = RecordedCall(n=writer.reserve(), request=request_json(config))
        deltas: list[JsonObject] = call.deltas
        times: list[float] | None = [] if self.timing else None
        call.times = times
        started = time.monotonic()

        def relay(delta: Delta) -> None:
            deltas.append(delta_json(delta))
            if times is not None:
                times.append(_since(started))
            sink(delta)

        ended = False
        try:
            reply = await self.provider.stream(config, relay)
        except ProviderError as error:
            call.error, ended = error_json(error), True
            raise
        except anyio.get_cancelled_exc_class():
            call.cancelled = ended = True
            raise
        except Exception as error:
            # Recorded as the loop reports a broken provider, so a replay reads the same.
            text = f"provider failed: {type(error).__name__}: {error}"
            call.error, ended = error_json(ProviderError(ErrorKind.OTHER, text)), True
            raise
        else:
            call.reply, ended = message_json(reply), True
            return reply
        finally:
            if ended:
                if times is not None:
                    call.elapsed = _since(started)
                writer.write_call(call)


def _since(started: float) -> float:
    return round(time.monotonic() - started, 4)
