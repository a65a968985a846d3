"""What a cancelled task reports, over loopback HTTP with the SDK's client: a task whose
run is going on is aborted by the executor and says ``cancelled`` (its run ends cancelled);
a task still waiting for its context's previous task is marked cancelled as it is."""

from __future__ import annotations

from typing import Any

import anyio
import httpx
import pytest
from a2a.client import ClientConfig, create_client
from a2a.types import CancelTaskRequest, TaskState
from a2a_testing import Ends, message

from yoagent.core.extension import CANCELLED_MARKER

pytestmark = pytest.mark.anyio


def said(status: Any) -> tuple[TaskState, str]:
    return status.state, "".join(part.text for part in status.message.parts)


async def test_a_running_task_cancelled_says_cancelled(a2a_url: str, ends: Ends) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http))
        task_id = ""
        answered: list[Any] = []
        statuses: list[Any] = []
        async for response in client.send_message(message("slow")):
            if response.HasField("task"):
                task_id = response.task.id
            if response.HasField("artifact_update") and not answered:
                answered.append(await client.cancel_task(CancelTaskRequest(id=task_id)))
            if response.HasField("status_update"):
                statuses.append(response.status_update.status)
    assert [said(a.status) for a in answered] == [(TaskState.TASK_STATE_CANCELED, "cancelled")]
    assert said(statuses[-1]) == (TaskState.TASK_STATE_CANCELED, "cancelled")
    assert ends.finished.wait(10) and ends.outcomes == ["cancelled"]


async def test_a_task_waiting_for_its_context_is_cancelled_before_it_runs(
    a2a_url: str, ends: Ends
) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        client = await create_client(a2a_url, ClientConfig(streaming=True, httpx_client=http))
        first_id = context_id = ""
        waiting: list[Any] = []
        with anyio.fail_after(60):
            async for response in client.send_message(message("slow")):
                if response.HasField("task"):
                    first_id, context_id = response.task.id, response.task.context_id
                if response.HasField("artifact_update") and not waiting:
                    # A second task of the context: it waits for the first to end.
                    stream = client.send_message(message("hello", context_id))
                    queued = await anext(aiter(stream))
                    assert queued.HasField("task")
                    cancelled = await client.cancel_task(CancelTaskRequest(id=queued.task.id))
                    waiting.append(cancelled)
                    await stream.aclose()
                    await client.cancel_task(CancelTaskRequest(id=first_id))
    assert [said(w.status) for w in waiting] == [(TaskState.TASK_STATE_CANCELED, CANCELLED_MARKER)]
    assert ends.finished.wait(10) and ends.outcomes[:1] == ["cancelled"]
