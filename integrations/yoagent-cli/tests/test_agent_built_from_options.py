"""What ``app`` builds from the options: the approvals, the file sandbox, the tools, the
system prompt and the agent (its limits, thinking, tools, middleware, tool sources and
extensions)."""

from __future__ import annotations

from pathlib import Path

from yoagent.cli.app import (
    Options,
    build_agent,
    build_tools,
    confirmation,
    file_sandbox,
    system_prompt_for,
)
from yoagent.cli.tool_gate import build_tool_gate
from yoagent.core import (
    AgentTool,
    Allow,
    ModelConfig,
    ThinkingLevel,
    ToolCallRequest,
    ToolDecision,
    load_skills,
)
from yoagent.tools import SandboxPolicy


def skill_options(tmp_path: Path) -> Options:
    skill = tmp_path / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy up.\n---\nTidy.\n")
    return Options(cwd=tmp_path, skills=load_skills([tmp_path / "skills"]))


def test_the_approvals_carry_yes_the_callbacks_and_whether_commands_are_sandboxed(
    tmp_path: Path,
) -> None:
    def trusted(name: str) -> bool:
        return name == "notes__read"

    def on_denied(request: ToolCallRequest, reason: str) -> None:
        del request, reason

    confirm = confirmation(Options(cwd=tmp_path, yes=True), trusted=trusted, on_denied=on_denied)
    assert (confirm.ask, confirm.assume_yes, confirm.sandboxed) == (None, True, True)
    assert (confirm.trusted, confirm.on_denied) == (trusted, on_denied)
    unsandboxed = confirmation(Options(cwd=tmp_path, sandbox=SandboxPolicy.FULL_ACCESS))
    assert (unsandboxed.assume_yes, unsandboxed.sandboxed) == (False, False)


def test_the_file_sandbox_is_the_folder_then_the_allowed_paths(tmp_path: Path) -> None:
    options = Options(cwd=tmp_path, allow_paths=[tmp_path.parent])
    assert file_sandbox(options).roots == (str(tmp_path), str(tmp_path.parent))


def test_the_tools_reach_the_folder_and_read_skill_comes_with_skills(tmp_path: Path) -> None:
    names = [tool.name for tool in build_tools(Options(cwd=tmp_path))]
    assert "read_skill" not in names
    assert {"bash", "read_file", "write_file", "edit_file"} <= set(names)
    with_skills = build_tools(skill_options(tmp_path))
    assert [tool.name for tool in with_skills] == [*names, "read_skill"]


def test_the_tools_are_confined_to_the_folder_and_the_allowed_paths(tmp_path: Path) -> None:
    options = Options(cwd=tmp_path, allow_paths=[tmp_path.parent])
    [read] = [tool for tool in build_tools(options) if tool.name == "read_file"]
    assert read.sandbox.roots == (str(tmp_path), str(tmp_path.parent))


def test_the_system_prompt_names_the_folder_or_is_the_system_file(tmp_path: Path) -> None:
    assert str(tmp_path) in system_prompt_for(Options(cwd=tmp_path))
    system = tmp_path / "system.md"
    system.write_text("You are terse.\n")
    assert system_prompt_for(Options(cwd=tmp_path, system=system)) == "You are terse."


def test_the_system_prompt_holds_the_instructions_unless_turned_off(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always use tabs.")
    assert "Always use tabs." in system_prompt_for(Options(cwd=tmp_path))
    off = Options(cwd=tmp_path, project_instructions=False)
    assert "Always use tabs." not in system_prompt_for(off)
    assert "tidy" in system_prompt_for(skill_options(tmp_path))


class NoTools:
    """A tool source offering nothing, to be found among the agent's."""

    async def tools(self) -> list[AgentTool]:
        return []

    def generation(self) -> int:
        return 0


async def allow_all(request: ToolCallRequest) -> ToolDecision:
    del request
    return Allow()


def test_the_agent_gets_the_prompt_limits_thinking_tools_and_extensions(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Always use tabs.")
    marker = build_tool_gate("http://127.0.0.1:8")  # any extension, to be found
    gate = build_tool_gate("http://127.0.0.1:9")
    options = Options(cwd=tmp_path, max_turns=7, thinking=ThinkingLevel.HIGH, tool_gate=gate)
    source = NoTools()
    agent = build_agent(options, ModelConfig.mock(), [allow_all], [source], [marker])
    assert agent.system_prompt == system_prompt_for(options)
    assert agent.settings.limits.max_turns == 7
    assert agent.settings.limits.max_duration is None
    assert agent.thinking_level is ThinkingLevel.HIGH
    assert [tool.name for tool in agent.tools] == [tool.name for tool in build_tools(options)]
    assert agent.settings.tool_middleware == (allow_all,)
    assert agent.settings.tool_sources == (source,)
    assert agent.settings.extensions[-2:] == (gate, marker)


def test_an_agent_without_max_turns_stops_after_50_and_has_no_gate(tmp_path: Path) -> None:
    agent = build_agent(Options(cwd=tmp_path), ModelConfig.mock())
    assert agent.settings.limits.max_turns == 50
    assert agent.settings.extensions == ()
    assert agent.model == ModelConfig.mock()
