"""The six tools on argument models: schema from the model, lax coercions, unknown keys refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from yoagent.core import ModelTool, ToolContext, ToolError
from yoagent.tools import (
    BashTool,
    EditFileTool,
    ListFilesTool,
    PathSandbox,
    ReadFileTool,
    SearchTool,
    WriteFileTool,
    default_tools,
)

VALID: dict[str, dict[str, Any]] = {
    "bash": {"command": "echo hi"},
    "read_file": {"path": "a.txt"},
    "write_file": {"path": "b.txt", "content": "x"},
    "edit_file": {"path": "a.txt", "old_text": "hello", "new_text": "bye"},
    "list_files": {},
    "search": {"pattern": "hello"},
}


def _tools(root: Path) -> dict[str, ModelTool[Any]]:
    tools = default_tools([root])
    found: dict[str, ModelTool[Any]] = {}
    for tool in tools:
        assert isinstance(tool, ModelTool)
        found[tool.name] = tool
    return found


@pytest.mark.parametrize("name", sorted(VALID))
async def test_an_unknown_argument_is_an_error_result_the_model_reads(
    root: Path, ctx: ToolContext, name: str
) -> None:
    (root / "a.txt").write_text("hello\n")
    tool = _tools(root)[name]
    with pytest.raises(ToolError) as info:
        await tool.execute({**VALID[name], "surprise": 1}, ctx)
    assert str(info.value) == (
        f"invalid arguments for {name}: surprise: Extra inputs are not permitted"
    )
    assert not (root / "b.txt").exists()  # nothing ran
    assert (root / "a.txt").read_text() == "hello\n"


@pytest.mark.parametrize("name", sorted(VALID))
def test_each_schema_is_its_models_and_closed(root: Path, name: str) -> None:
    tool = _tools(root)[name]
    schema = tool.parameters
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert set(schema["properties"]) == set(tool.arguments_model.model_fields)
    assert "$defs" not in str(schema) and "$ref" not in str(schema)
    assert all("title" not in field for field in schema["properties"].values())


def test_edit_items_are_inlined_and_closed(root: Path) -> None:
    items = EditFileTool(PathSandbox([root])).parameters["properties"]["edits"]["items"]
    assert items["type"] == "object"
    assert items["additionalProperties"] is False
    assert items["required"] == ["old_text", "new_text"]


async def test_lax_coercions_keep_working(root: Path, ctx: ToolContext) -> None:
    (root / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    read = ReadFileTool(PathSandbox([root]))
    result = await read.execute({"path": "a.txt", "offset": "3", "limit": "2"}, ctx)
    assert result.text.splitlines()[:2] == ["     3\tline 3", "     4\tline 4"]
    listing = await ListFilesTool(PathSandbox([root])).execute({"all": "true", "depth": 2.0}, ctx)
    assert listing.text == "a.txt"
    found = await SearchTool(PathSandbox([root]), engine="python").execute(
        {"pattern": "LINE 1$", "ignore_case": "true", "max_results": "5"}, ctx
    )
    assert found.text == "a.txt:1:line 1"


async def test_null_means_the_default(root: Path, ctx: ToolContext) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    result = await ReadFileTool(PathSandbox([root])).execute(
        {"path": "a.txt", "offset": None, "limit": None}, ctx
    )
    assert result.text == "     1\tone\n     2\ttwo"


async def test_wrong_types_and_bounds_are_reported_with_the_field(
    root: Path, ctx: ToolContext
) -> None:
    sandbox = PathSandbox([root])
    with pytest.raises(ToolError, match=r"invalid arguments for read_file: offset: Input should"):
        await ReadFileTool(sandbox).execute({"path": "a.txt", "offset": "three"}, ctx)
    with pytest.raises(ToolError, match=r"list_files: depth: Input should be less than or equal"):
        await ListFilesTool(sandbox).execute({"depth": 99}, ctx)
    with pytest.raises(ToolError, match=r"write_file: content: Field required"):
        await WriteFileTool(sandbox).execute({"path": "x"}, ctx)
    with pytest.raises(ToolError, match=r"edit_file: edits\.0\.surprise: Extra inputs"):
        await EditFileTool(sandbox).execute(
            {"path": "a.txt", "edits": [{"old_text": "a", "new_text": "b", "surprise": 1}]}, ctx
        )
    with pytest.raises(ToolError, match=r"search: pattern: String should have at least 1"):
        await SearchTool(sandbox).execute({"pattern": ""}, ctx)


def test_per_instance_defaults_and_maxima_are_in_the_schema() -> None:
    bash = BashTool(timeout=30, max_timeout=90).parameters["properties"]["timeout"]
    assert (bash["default"], bash["maximum"]) == (30, 90)
    assert SearchTool(max_results=7).parameters["properties"]["max_results"]["default"] == 7
    assert ReadFileTool(default_limit=40).parameters["properties"]["limit"]["default"] == 40


def test_descriptions_say_where_relative_paths_lead(root: Path) -> None:
    for tool in default_tools([root]):
        if tool.name == "bash":
            continue
        assert f"Relative paths are resolved against {root} (the first allowed folder)." in (
            tool.description
        )
    unrestricted = ReadFileTool().description
    assert "Relative paths are resolved against the current working folder." in unrestricted
