"""Agent factories the tests ship to Ray workers (module-level, so they pickle by name;
the workers import this module from the tests folder, which ``conftest`` puts on their
``PYTHONPATH``)."""

from __future__ import annotations

from typing import Any

from yoagent.core import Agent, ApiProtocol, ModelConfig, RetryConfig, RunSettings
from yoagent.ray import AgentTask

FAST_RETRIES = RetryConfig(max_retries=2, initial_delay=0.05, max_delay=0.2)


def scripted_model(base_url: str, provider: str = "scripted") -> ModelConfig:
    """The loopback model server as an OpenAI-compatible model (no key needed)."""
    return ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider=provider,
        id="scripted-model",
        base_url=base_url,
    )


def chat_agent(task: AgentTask) -> Agent:
    """A plain agent on the server whose URL is ``task.data["url"]``."""
    data: dict[str, Any] = task.data
    settings = RunSettings(retry=data.get("retry", FAST_RETRIES))
    return Agent.from_config(scripted_model(data["url"]), settings=settings)


def raising_agent(task: AgentTask) -> Agent:
    """Like :func:`chat_agent`, except for tasks whose id starts with ``broken``."""
    if task.id.startswith("broken"):
        raise ValueError(f"cannot build an agent for {task.id}")
    return chat_agent(task)


def bash_agent(task: AgentTask) -> Agent:
    """An agent with the real ``bash`` tool (its commands run in their own session)."""
    from yoagent.tools import BashTool

    data: dict[str, Any] = task.data
    return Agent.from_config(
        scripted_model(data["url"]), tools=[BashTool(timeout=600)], retry=FAST_RETRIES
    )
