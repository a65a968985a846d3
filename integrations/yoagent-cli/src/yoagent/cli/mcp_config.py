"""Which MCP servers to connect at start-up: ``--mcp``, ``--mcp-http`` and the config file's
``[mcp_servers.<name>]`` tables, as :class:`McpServerSpec` values.

Servers from the flags are added to the file's (a server the file lists is turned off with
``enabled = false`` in its table). ``${VAR}`` in a table's ``args``, ``env``, ``url`` or
``headers`` is read from yoagent's environment here, so a key can stay out of the file; a
variable that is not set is a configuration error naming the table and the key, never a
value.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .problems import origin
from .settings import McpServerTable, Settings, SettingsError, http_url_problem

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServerSpec:
    """One MCP server to connect: a command to start, or a Streamable HTTP URL.

    ``name`` prefixes its tools (``name__tool``); ``None`` for a server from a flag, which
    is then named by what it calls itself. ``source`` says where it was asked for (a flag,
    or the config file) for messages. ``argv``, ``url``, ``env`` and ``headers`` may hold
    keys: they are left out of the repr, and messages show :attr:`label` only.
    """

    name: str | None
    source: str
    """``--mcp``, ``--mcp-http`` or ``config``."""
    argv: tuple[str, ...] = field(default=(), repr=False)
    url: str | None = field(default=None, repr=False)
    env: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    headers: Mapping[str, str] = field(default_factory=dict[str, str], repr=False)
    confirm: bool = True
    """Ask before each call of its tools."""

    @property
    def label(self) -> str:
        """How messages name it: its name, else the program's and, when the program's first
        argument is not an option, that argument's (``python server.py``; an option's
        value, which may be a key, never is), else the URL's origin (never its path or
        query)."""
        if self.name is not None:
            return self.name
        if self.url is not None:
            return origin(self.url)
        words = [Path(self.argv[0]).name]
        first = self.argv[1] if len(self.argv) > 1 else ""
        if first and not first.startswith("-") and not any(c in first for c in " \t\n"):
            words.append(Path(first).name)  # a script or package, not code (``-c '...'``)
        return " ".join(words)


def flag_servers(commands: Sequence[str], urls: Sequence[str]) -> list[McpServerSpec]:
    """The servers of ``--mcp "cmd args"`` and ``--mcp-http URL``.

    Raises :class:`ValueError` (a usage error) for an empty or unbalanced command and a URL
    that is not http(s) (the message never quotes the URL).
    """
    specs: list[McpServerSpec] = []
    for command in commands:
        try:
            argv = shlex.split(command)
        except ValueError as error:
            raise ValueError(f"--mcp {command!r}: {error}") from None
        if not argv:
            raise ValueError("--mcp needs a command, e.g. --mcp 'python server.py'")
        specs.append(McpServerSpec(name=None, source="--mcp", argv=tuple(argv)))
    for url in urls:
        if problem := http_url_problem(url):
            raise ValueError(f"--mcp-http: {problem}")
        specs.append(McpServerSpec(name=None, source="--mcp-http", url=url.strip()))
    return specs


def _expand(value: str, where: str) -> str:
    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        found = os.environ.get(name)
        if found is None:
            raise SettingsError(f"{where}: ${{{name}}} is not set in the environment")
        return found

    return _VARIABLE.sub(variable, value)


def _expanded(values: Mapping[str, str], where: str) -> dict[str, str]:
    return {key: _expand(value, f"{where}.{key}") for key, value in values.items()}


def config_servers(settings: Settings, user_file: Path | None) -> list[McpServerSpec]:
    """The enabled ``[mcp_servers.<name>]`` tables (read from the user file only).

    Raises :class:`SettingsError` for a ``${VAR}`` that is not set.
    """
    where = str(user_file) if user_file is not None else "config"
    specs: list[McpServerSpec] = []
    for name, table in settings.mcp_servers.items():
        if table.enabled:
            specs.append(_spec(name, table, f"{where}: mcp_servers.{name}"))
    return specs


def _spec(name: str, table: McpServerTable, where: str) -> McpServerSpec:
    source = "config"
    if table.url is not None:
        return McpServerSpec(
            name=name,
            source=source,
            url=_expand(table.url.strip(), f"{where}.url"),
            headers=_expanded(table.headers, f"{where}.headers"),
            confirm=table.confirm,
        )
    assert table.command is not None  # McpServerTable allows one or the other
    return McpServerSpec(
        name=name,
        source=source,
        argv=(
            table.command,
            *(_expand(arg, f"{where}.args[{index}]") for index, arg in enumerate(table.args)),
        ),
        env=_expanded(table.env, f"{where}.env"),
        confirm=table.confirm,
    )
