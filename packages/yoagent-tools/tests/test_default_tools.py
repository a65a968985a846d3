"""default_tools and the tool contract: names, schemas, descriptions."""

from __future__ import annotations

from pathlib import Path

from yoagent.core import AgentTool
from yoagent.tools import (
    BashTool,
    EditFileTool,
    ListFilesTool,
    ReadFileTool,
    SearchTool,
    WriteFileTool,
    default_tools,
)


def test_default_tools_are_the_six_with_their_wire_names(tmp_path: Path) -> None:
    tools = default_tools([tmp_path])
    assert [tool.name for tool in tools] == [
        "bash",
        "read_file",
        "write_file",
        "edit_file",
        "list_files",
        "search",
    ]
    kinds = [BashTool, ReadFileTool, WriteFileTool, EditFileTool, ListFilesTool, SearchTool]
    assert [type(tool) for tool in tools] == kinds
    assert all(isinstance(tool, AgentTool) for tool in tools)
    sandboxes = {id(getattr(tool, "sandbox")) for tool in tools[1:]}  # noqa: B009
    assert len(sandboxes) == 1
    bash = tools[0]
    assert isinstance(bash, BashTool)
    assert bash.cwd == str(tmp_path.resolve())


def test_unrestricted_by_default() -> None:
    tools = default_tools()
    read = tools[1]
    assert isinstance(read, ReadFileTool)
    assert not read.sandbox.restricted
    bash = tools[0]
    assert isinstance(bash, BashTool)
    assert bash.cwd is None


def test_every_schema_is_an_object_whose_required_fields_are_properties() -> None:
    for tool in default_tools():
        schema = tool.parameters
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        for name in schema.get("required", []):
            assert name in schema["properties"]
        for prop in schema["properties"].values():
            assert prop.get("description") or prop.get("items")
        assert len(tool.description) > 80
