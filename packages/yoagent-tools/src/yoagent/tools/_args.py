"""Reading a tool call's arguments, with errors the model can act on."""

from __future__ import annotations

from typing import Any

from yoagent.core import ToolError


def get_str(tool: str, arguments: dict[str, Any], name: str, default: str | None = None) -> str:
    """A string argument; required when ``default`` is ``None``."""
    value = arguments.get(name)
    if value is None:
        if default is None:
            raise ToolError(f"{tool}: the '{name}' argument is required (a string)")
        return default
    if not isinstance(value, str):
        raise ToolError(f"{tool}: '{name}' must be a string, got {type(value).__name__}")
    return value


def get_opt_str(tool: str, arguments: dict[str, Any], name: str) -> str | None:
    """An optional string argument (``None`` when absent or empty)."""
    value = arguments.get(name)
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ToolError(f"{tool}: '{name}' must be a string, got {type(value).__name__}")
    return value


def get_int(
    tool: str,
    arguments: dict[str, Any],
    name: str,
    default: int,
    *,
    minimum: int,
    maximum: int | None = None,
) -> int:
    """An integer argument within ``[minimum, maximum]`` (integral floats and digit strings too)."""
    value = arguments.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        raise ToolError(f"{tool}: '{name}' must be an integer, got a boolean")
    number: int
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    else:
        raise ToolError(f"{tool}: '{name}' must be an integer, got {value!r}")
    if number < minimum:
        raise ToolError(f"{tool}: '{name}' must be at least {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ToolError(f"{tool}: '{name}' must be at most {maximum}, got {number}")
    return number


def get_bool(tool: str, arguments: dict[str, Any], name: str, default: bool) -> bool:
    """A boolean argument (also ``"true"``/``"false"`` strings)."""
    value = arguments.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ToolError(f"{tool}: '{name}' must be true or false, got {value!r}")
