"""A remote A2A agent as a yoagent tool: the model delegates a task, the remote agent's
streamed answer is the call's progress, its final answer the call's result.

The calls of one run continue one remote context (a conversation with the remote agent);
each run has its own, so agents sharing the tool never share a remote conversation. A
non-streaming remote agent answers with its ended task: its ``answer`` artifact (or its
status message) is the result. Cancelling the call (the run was cancelled) cancels the
remote task; a remote task that ends cancelled, fails, or a connection that breaks
mid-stream, is the call's error result: the run goes on, it never hangs.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import anyio
import httpx

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    AgentCard,
    CancelTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    StreamResponse,
    TaskState,
)
from yoagent.core import ToolContext, ToolResult
from yoagent.core.support import BoundedMap, http_client

from ._errors import RemoteAgentError, remote_errors

TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task": {
            "type": "string",
            "description": "The task for the remote agent, complete and self-contained.",
        }
    },
    "required": ["task"],
}

_ENDED = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_REJECTED,
    TaskState.TASK_STATE_INPUT_REQUIRED,
    TaskState.TASK_STATE_AUTH_REQUIRED,
}


RUNS_KEPT = 1024
"""How many runs' remote contexts a tool remembers (the run that called longest ago goes)."""


def _text(parts: Any) -> str:
    return "".join(part.text for part in parts if part.HasField("text"))


class _RemoteContext:
    """The remote context of one run's calls, known once a call's task shows its id."""

    __slots__ = ("id", "known")

    def __init__(self) -> None:
        self.id = ""
        self.known = anyio.Event()

    def learn(self, context_id: str) -> None:
        if context_id and not self.id:
            self.id = context_id
            self.known.set()


class A2AAgentTool:
    """A remote A2A agent as a tool: one ``task`` argument, the agent's answer as result.

    Build it with :meth:`connect` (reads the remote agent card: name, description) or
    directly from a card. ``timeout`` bounds the wait for each piece of the remote
    stream (seconds); ``http`` is the httpx client to use (one is made and closed per
    call otherwise, the project's way: ``yoagent.core.support.http_client``). Runs under
    asyncio (the A2A SDK's client needs it).

    The calls of one run (``ToolContext.run_id``) continue one remote context: the first
    opens it, and calls made meanwhile (in parallel) wait until its id is known. Another
    run, of this agent or of another sharing the tool, opens its own; the contexts of the
    last :data:`RUNS_KEPT` runs are remembered.
    """

    def __init__(
        self,
        card: AgentCard,
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float = 300.0,
        http: httpx.AsyncClient | None = None,
    ) -> None:
        self.card = card
        self.name = name or _tool_name(card.name)
        self.description = description or card.description or f"The remote agent {card.name}."
        self.parameters: dict[str, Any] = TASK_SCHEMA
        self.timeout = timeout
        self._http = http
        self._contexts: BoundedMap[str, _RemoteContext] = BoundedMap(RUNS_KEPT)

    @classmethod
    async def connect(
        cls,
        url: str,
        *,
        name: str | None = None,
        description: str | None = None,
        timeout: float = 300.0,  # noqa: ASYNC109 - the tool's own limit, kept for its calls
        http: httpx.AsyncClient | None = None,
    ) -> A2AAgentTool:
        """The remote agent at ``url`` (its card at ``/.well-known/agent-card.json``) as a
        tool; :class:`RemoteAgentError` when the card cannot be read."""
        with remote_errors(name or url, url):
            async with _client(http, timeout) as client:
                card = await A2ACardResolver(client, url).get_agent_card()
        return cls(card, name=name, description=description, timeout=timeout, http=http)

    @property
    def url(self) -> str:
        """Where the remote agent is reached."""
        interfaces = self.card.supported_interfaces
        return interfaces[0].url if interfaces else ""

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        task = str(arguments.get("task", "")).strip()
        if not task:
            raise RemoteAgentError("say what the remote agent should do: 'task' is empty")
        remote = self._contexts.get(ctx.run_id) if ctx.run_id else None
        opener = remote is None
        if remote is None:
            remote = _RemoteContext()
            if ctx.run_id:
                self._contexts[ctx.run_id] = remote
        else:
            await remote.known.wait()  # the run's first call is opening the context
        try:
            return await self._call(task, remote, ctx)
        finally:
            if opener:
                remote.known.set()  # never learnt (it failed): the others go on their own

    async def _call(self, task: str, remote: _RemoteContext, ctx: ToolContext) -> ToolResult:
        message = Message(
            role=Role.ROLE_USER,
            message_id=str(uuid.uuid4()),
            parts=[Part(text=task)],
            context_id=remote.id,
        )
        answer: list[str] = []
        task_id: list[str] = []
        final = ""
        with remote_errors(self.name, self.url):
            async with _client(self._http, self.timeout) as http:
                client = ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create(
                    self.card
                )
                failure: list[BaseException] = []

                async def follow() -> None:
                    nonlocal final
                    try:
                        final = await self._follow(client, message, ctx, answer, task_id, remote)
                    except Exception as error:  # raised below, outside the task group
                        failure.append(error)
                    group.cancel_scope.cancel()

                async def watch_cancel() -> None:
                    await ctx.cancel.wait()
                    group.cancel_scope.cancel()

                try:
                    async with anyio.create_task_group() as group:
                        group.start_soon(watch_cancel)
                        group.start_soon(follow)
                except BaseException:  # this task was cancelled: so is the remote one
                    await _cancel_remote(client, task_id)
                    raise
                if failure and not isinstance(failure[0], RemoteAgentError):
                    await _cancel_remote(client, task_id)
                if failure:
                    raise failure[0]
                if ctx.cancelled:
                    await _cancel_remote(client, task_id)
                    raise RemoteAgentError(
                        f"the call was cancelled; so was the task of {self.name}"
                    )
        return ToolResult.from_text(final)

    async def _follow(
        self,
        client: Any,
        message: Message,
        ctx: ToolContext,
        answer: list[str],
        task_id: list[str],
        remote: _RemoteContext,
    ) -> str:
        """Read the remote task's stream to its end; the final answer."""
        stream = client.send_message(SendMessageRequest(message=message))
        async for response in stream:
            state = self._read(response, ctx, answer, task_id, remote)
            if state is not None:
                return self._final(state, response, answer)
        raise RemoteAgentError(
            f"the remote agent {self.name} ended its stream before its task ended"
        )

    def _read(
        self,
        response: StreamResponse,
        ctx: ToolContext,
        answer: list[str],
        task_id: list[str],
        remote: _RemoteContext,
    ) -> TaskState | None:
        if response.HasField("task"):
            task_id[:] = [response.task.id]
            remote.learn(response.task.context_id)
            if response.task.status.state in _ENDED:
                return response.task.status.state
        elif response.HasField("artifact_update"):
            update = response.artifact_update
            answer.append(_text(update.artifact.parts))
            ctx.update(ToolResult.from_text("".join(answer)))
        elif response.HasField("status_update"):
            update = response.status_update
            task_id[:] = [update.task_id]
            remote.learn(update.context_id)
            note = _text(update.status.message.parts)
            if update.status.state in _ENDED:
                return update.status.state
            if note:
                ctx.progress(note)
        elif response.HasField("message"):
            remote.learn(response.message.context_id)
            answer.append(_text(response.message.parts))
            return TaskState.TASK_STATE_COMPLETED
        return None

    def _final(self, state: TaskState, response: StreamResponse, answer: list[str]) -> str:
        note = ""
        if response.HasField("status_update"):
            note = _text(response.status_update.status.message.parts)
        elif response.HasField("task"):  # the ended task itself (a non-streaming agent)
            note = _text(response.task.status.message.parts)
            if not answer:
                answer = [_text(artifact.parts) for artifact in response.task.artifacts]
        if state == TaskState.TASK_STATE_COMPLETED:
            return "".join(answer) or note
        if state == TaskState.TASK_STATE_CANCELED:
            raise RemoteAgentError(f"the remote agent {self.name} cancelled its task")
        if state == TaskState.TASK_STATE_FAILED:
            raise RemoteAgentError(
                f"the remote agent {self.name} failed: {note or 'no reason given'}"
            )
        raise RemoteAgentError(
            f"the remote agent {self.name} stopped in state {TaskState.Name(state)}: {note}"
        )


async def _cancel_remote(client: Any, task_id: list[str]) -> None:
    """Cancel the remote task, if it started, within 5 s, whatever happens to this task."""
    if not task_id:
        return
    # Already ended, or unreachable: nothing more to do.
    with anyio.CancelScope(shield=True), anyio.move_on_after(5), contextlib.suppress(Exception):
        await client.cancel_task(CancelTaskRequest(id=task_id[0]))


def _tool_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c in "_-" else "_" for c in name.strip())
    return cleaned[:64] or "remote_agent"


class _client:
    """The given httpx client, or one made for the call and closed after it."""

    def __init__(self, http: httpx.AsyncClient | None, timeout: float) -> None:
        self._given = http
        self._made: httpx.AsyncClient | None = None
        self._timeout = timeout

    async def __aenter__(self) -> httpx.AsyncClient:
        if self._given is not None:
            return self._given
        self._made = http_client(timeout=httpx.Timeout(self._timeout, connect=10.0))
        return self._made

    async def __aexit__(self, *exc_info: object) -> None:
        if self._made is not None:
            await self._made.aclose()
