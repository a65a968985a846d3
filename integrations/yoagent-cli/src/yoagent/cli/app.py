"""What both modes share: the parsed options and the agent built from them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from yoagent.core import (
    Agent,
    AgentTool,
    ExecutionLimits,
    Extension,
    ModelConfig,
    ReadSkillTool,
    SkillSet,
    ThinkingLevel,
    ToolCallRequest,
    ToolSource,
)
from yoagent.core.extension import MiddlewareLike
from yoagent.decision import ToolGate
from yoagent.tools import PathSandbox, SandboxPolicy, default_tools

from .confirm import ConfirmMiddleware
from .instructions import find_instructions, instructions_section
from .mcp_config import McpServerSpec
from .prices import PricingMode
from .sandbox import DEFAULT as DEFAULT_SANDBOX
from .sandbox import build_sandbox
from .system_prompt import build_system_prompt


@dataclass(slots=True, kw_only=True)
class Options:
    """The command line, parsed and checked."""

    prompt: str | None = None
    json: bool = False
    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    allow_paths: list[Path] = field(default_factory=list[Path])
    yes: bool = False
    skills: SkillSet = field(default_factory=SkillSet)
    system: Path | None = None
    max_turns: int | None = None
    thinking: ThinkingLevel = ThinkingLevel.OFF
    resume: str | None = None
    """``None``: a new session; ``""``: the latest one; else a session id."""
    plain: bool = False
    show_thinking: bool = True
    project_instructions: bool = True
    """Read AGENTS.md and CLAUDE.md into the system prompt."""
    pricing: PricingMode = PricingMode.BUNDLED
    prices_url: str | None = None
    """With ``pricing`` live: a price file to fetch instead of models.dev."""
    mcp_servers: list[McpServerSpec] = field(default_factory=list[McpServerSpec])
    """The config file's servers, then the flags'."""
    tool_gate: ToolGate | None = None
    """``--tool-gate``: judges commands, writes and edits (after the approvals)."""
    sandbox: SandboxPolicy = DEFAULT_SANDBOX
    """``--sandbox``: where bash's commands may write (see :mod:`.sandbox`)."""
    sandbox_network: bool = False
    """``--sandbox-network``: sandboxed commands may use the network."""
    cwd: Path = field(default_factory=Path.cwd)
    record: Path | None = None
    """The GASP agent repository the session's runs are recorded into (``--record``)."""


def _roots(options: Options) -> list[Path]:
    return [options.cwd, *options.allow_paths]


def confirmation(
    options: Options,
    *,
    trusted: Callable[[str], bool] | None = None,
    on_denied: Callable[[ToolCallRequest, str], None] | None = None,
) -> ConfirmMiddleware:
    """The approvals of ``options`` (``--yes``; whether bash's commands run in the OS
    sandbox), with nobody to ask yet: the interactive mode sets its ``ask``."""
    return ConfirmMiddleware(
        None,
        assume_yes=options.yes,
        on_denied=on_denied,
        trusted=trusted,
        sandboxed=options.sandbox is not SandboxPolicy.FULL_ACCESS,
    )


def file_sandbox(options: Options) -> PathSandbox:
    """The sandbox the file tools check paths with (the working folder first, then the
    ``--allow-path`` folders): previews and ``/undo`` resolve a tool's path through it."""
    return PathSandbox(_roots(options))


def build_tools(options: Options) -> list[AgentTool]:
    """The coding tools confined to the working folder (and ``--allow-path`` folders), bash
    in the OS sandbox of ``--sandbox``, plus ``read_skill`` when skills were given."""
    roots = _roots(options)
    sandbox = build_sandbox(options.sandbox, roots, options.sandbox_network)
    tools = default_tools(roots, sandbox=sandbox, allow_outside_sandbox=True)
    if len(options.skills):
        tools.append(ReadSkillTool(options.skills))
    return tools


def system_prompt_for(options: Options) -> str:
    """The default prompt (or ``--system``'s file), the project's instructions (AGENTS.md,
    CLAUDE.md) and the skills list."""
    instructions = find_instructions(options.cwd) if options.project_instructions else []
    return build_system_prompt(
        options.cwd,
        options.system,
        [instructions_section(instructions), options.skills.prompt_section()],
    )


def build_agent(
    options: Options,
    config: ModelConfig,
    middleware: Sequence[MiddlewareLike] = (),
    tool_sources: Sequence[ToolSource] = (),
    extensions: Sequence[Extension] = (),
) -> Agent:
    """The agent for ``options`` on ``config``, offered the tools of ``tool_sources`` (the
    MCP servers) beside its own, with ``extensions`` (the ``--record`` recorder)."""
    system_prompt = system_prompt_for(options)
    limits = ExecutionLimits(
        max_turns=options.max_turns if options.max_turns is not None else 50,
        max_duration=None,  # Ctrl+C stops a run that takes too long
    )
    agent = Agent.from_config(
        config,
        system_prompt=system_prompt,
        tools=build_tools(options),
        thinking_level=options.thinking,
        limits=limits,
        tool_middleware=list(middleware),
        tool_sources=list(tool_sources),
    )
    if options.tool_gate is not None:
        agent.with_extension(options.tool_gate)
    for extension in extensions:
        agent.with_extension(extension)
    return agent
