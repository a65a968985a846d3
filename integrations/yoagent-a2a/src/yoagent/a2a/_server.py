"""A yoagent agent served as an A2A agent, on the A2A SDK's server (JSON-RPC over HTTP).

Each A2A message starts a task that runs the agent once on the message's text, from the
history kept for the message's context. The reply streams as the task's ``answer``
artifact (a chunk per text delta); tool calls show as ``working`` status messages; the
task ends ``completed`` with the final text, ``failed`` with the error, or ``canceled``
when a client cancels it (the run is aborted and its history kept). The tasks of one
context run one at a time (each on the history the one before it left).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from collections.abc import AsyncGenerator, Sequence

import anyio
from starlette.applications import Starlette

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import TaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
)
from a2a.utils.constants import PROTOCOL_VERSION_CURRENT
from yoagent.core import (
    Agent,
    AgentMessage,
    MessageUpdate,
    RunEnd,
    RunFailedError,
    RunOutcome,
    TextDelta,
    ToolExecutionStart,
)
from yoagent.core.extension import CANCELLED_MARKER
from yoagent.core.loop import AgentFactory, agent_from, last_assistant

from ._store import HistoryStore, MemoryHistoryStore, MemoryTaskStore

logger = logging.getLogger("yoagent.a2a")

ANSWER_ARTIFACT = "answer"
"""The name of the artifact a task's reply streams into."""


def _ended(outcome: RunOutcome | None, messages: Sequence[AgentMessage]) -> tuple[str, str]:
    """How a run that added ``messages`` ended (``outcome``: ``Agent.last_outcome``):
    (``completed`` | ``failed`` | ``canceled``, the text to report)."""
    reply = last_assistant(messages)
    if outcome is None or outcome.end is RunEnd.FAILED:
        failure = reply.error_message if reply is not None else None
        return "failed", (outcome.reason if outcome is not None else None) or failure or (
            "the run failed"
        )
    if outcome.end is RunEnd.CANCELLED:
        return "canceled", outcome.reason or "cancelled"
    text = reply.text if reply is not None else ""
    if outcome.end is RunEnd.STOPPED and outcome.reason:
        stop = f"[stopped: {outcome.reason}]"
        text = f"{text}\n\n{stop}" if text else stop
    return "completed", text


class YoagentExecutor(AgentExecutor):
    """Runs a yoagent agent for each A2A task (the A2A SDK's executor interface)."""

    def __init__(self, agent: AgentFactory, store: HistoryStore) -> None:
        self.factory = agent
        self.store = store
        self._running: dict[str, tuple[Agent, anyio.Event]] = {}
        self._contexts: dict[str, tuple[anyio.Lock, int]] = {}

    @property
    def running(self) -> int:
        """How many tasks have a run going on now."""
        return len(self._running)

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        message = context.message
        if message is None:
            raise ValueError("an A2A task needs a message")
        task = context.current_task or new_task_from_user_message(message)
        if context.current_task is None:
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        async with self._context(task.context_id):  # the task before ends first
            history = await self.store.load(task.context_id) or []
            agent = await agent_from(self.factory)
            agent.replace_messages(history)
            ended = anyio.Event()
            self._running[task.id] = (agent, ended)
            try:
                await self._run(agent, history, task.context_id, updater, context)
            finally:
                del self._running[task.id]
                ended.set()

    @contextlib.asynccontextmanager
    async def _context(self, context_id: str) -> AsyncGenerator[None]:
        """Hold the context ``context_id``: its tasks load, run and save one at a time."""
        lock, users = self._contexts.get(context_id) or (anyio.Lock(), 0)
        self._contexts[context_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._contexts[context_id]
            if users == 1:
                del self._contexts[context_id]
            else:
                self._contexts[context_id] = (lock, users - 1)

    async def _run(
        self,
        agent: Agent,
        history: list[AgentMessage],
        context_id: str,
        updater: TaskUpdater,
        context: RequestContext,
    ) -> None:
        await updater.start_work()
        artifact_id = str(uuid.uuid4())
        streamed = False
        added: list[AgentMessage] = []
        try:
            async with agent.stream(context.get_user_input()) as events:
                async for event in events:
                    if isinstance(event, MessageUpdate) and isinstance(event.delta, TextDelta):
                        if event.delta.delta:
                            await updater.add_artifact(
                                [Part(text=event.delta.delta)],
                                artifact_id=artifact_id,
                                name=ANSWER_ARTIFACT,
                                append=streamed,
                                last_chunk=False,
                            )
                            streamed = True
                    elif isinstance(event, ToolExecutionStart):
                        note = updater.new_agent_message([Part(text=f"calling {event.tool_name}")])
                        await updater.start_work(note)
        except RunFailedError as failure:
            added = failure.messages
        finally:
            with anyio.CancelScope(shield=True):
                await self.store.save(context_id, agent.messages)
        added = added or agent.messages[len(history) :]
        state, text = _ended(agent.last_outcome, added)
        reply = updater.new_agent_message([Part(text=text)])
        if state == "failed":
            await updater.failed(reply)
        elif state == "canceled":
            await updater.cancel(reply)
        else:
            if not streamed and text:
                await updater.add_artifact(
                    [Part(text=text)], artifact_id=artifact_id, name=ANSWER_ARTIFACT
                )
            await updater.complete(reply)

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Abort the task's run and wait for it to end (it reports ``canceled`` itself and
        keeps its history); a task with no run going on is marked ``canceled`` here."""
        task_id = context.task_id
        running = self._running.get(task_id) if task_id is not None else None
        if running is not None:
            agent, ended = running
            agent.abort()
            with anyio.move_on_after(30):
                await ended.wait()
            return
        task = context.current_task
        if task is None or task_id is None:
            return
        updater = TaskUpdater(event_queue, task_id, task.context_id)
        await updater.cancel(updater.new_agent_message([Part(text=CANCELLED_MARKER)]))


def agent_card(
    agent: Agent, *, name: str, description: str, url: str, version: str = "1.0.0"
) -> AgentCard:
    """The A2A agent card of ``agent``: its name and description, and a skill per tool."""
    skills = [
        AgentSkill(id=tool.name, name=tool.name, description=tool.description, tags=["tool"])
        for tool in agent.tools
    ]
    if not skills:
        skills = [AgentSkill(id="chat", name=name, description=description, tags=["chat"])]
    return AgentCard(
        name=name,
        description=description,
        version=version,
        supported_interfaces=[
            AgentInterface(
                protocol_binding="JSONRPC", url=url, protocol_version=PROTOCOL_VERSION_CURRENT
            )
        ],
        capabilities=AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=skills,
    )


async def a2a_app(
    agent: AgentFactory,
    *,
    name: str,
    description: str,
    url: str,
    store: HistoryStore | None = None,
    task_store: TaskStore | None = None,
) -> Starlette:
    """A Starlette app serving the agents ``agent`` builds as one A2A agent.

    ``url`` is where clients reach it (it goes on the agent card, served at
    ``/.well-known/agent-card.json``); JSON-RPC is at ``/``, speaking A2A 1.0 and the
    0.3 method names (``message/send``, ``message/stream``, ``tasks/get``,
    ``tasks/cancel``) beside it. Each context's history is kept in ``store`` (default: a
    :class:`MemoryHistoryStore`), and the tasks (for ``GetTask``, ``ListTasks``,
    ``CancelTask``) in ``task_store`` (default: a :class:`MemoryTaskStore`, which forgets
    the task updated longest ago past 10,000). Runs under asyncio (the A2A SDK's server
    needs it).
    """
    card = agent_card(await agent_from(agent), name=name, description=description, url=url)
    executor = YoagentExecutor(agent, store if store is not None else MemoryHistoryStore())
    tasks = task_store if task_store is not None else MemoryTaskStore()
    handler = DefaultRequestHandler(agent_executor=executor, task_store=tasks, agent_card=card)
    routes = [
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, rpc_url="/", enable_v0_3_compat=True),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncGenerator[None]:
        yield
        await handler.aclose()  # no task left running when the server stops

    return Starlette(routes=routes, lifespan=lifespan)
