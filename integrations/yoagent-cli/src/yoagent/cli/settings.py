"""The config file: defaults for the flags, in TOML, at user level and project level.

Two files are read, when present: the user's ``config.toml`` in the user config folder
(``~/.config/yoagent/config.toml`` on Linux, honouring ``XDG_CONFIG_HOME``), then the
project's ``.yoagent/config.toml`` in the working folder or the nearest parent that has
one, up to the repository root (see :mod:`.project`: never a shared parent such as
``/tmp``). A key in the project file wins over the user file, and a flag wins over both.

Some keys are read from the user file only (:data:`USER_ONLY`): a project file comes with
the code you cloned, and must not be able to point your API key at another server
(``base_url``), run commands without asking (``approvals``), open more folders to the
file tools (``allow_paths``), decide how long your sessions are kept (``[sessions]``),
start programs or send headers (``[mcp_servers]``: a server's ``command`` runs at
start-up, its ``env`` and ``headers`` carry keys) or fetch prices from a URL of its
choosing (``prices_url``) or have your sessions written where it likes (``record``). In
a project file they are reported and ignored. A project file may turn the tool gate on
with a preset, but not off, at a URL, or over the user file's (``tool_gate``, see
:mod:`.tool_gate`), and make the command sandbox stricter but not looser (``sandbox``;
``sandbox_network`` is the user file's alone, see :mod:`.sandbox`).

The file is validated with a pydantic model (:class:`Settings`): a wrong type or value is
an error (exit code 2) naming the file and the key; an unknown key is a warning, so a
newer config still works with an older yoagent. A new key (``tool_gate``, ``record``) is a
field of :class:`Settings` (a table as a model of its own, like :class:`SessionLimits`, a
table of named tables like :class:`McpServerTable`), and :data:`USER_ONLY` when a cloned
project must not set it; nothing else here changes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from yoagent.core import ThinkingLevel
from yoagent.tools import SandboxPolicy

from ._errors import CliError
from .prices import PricingMode
from .problems import base_url_problem
from .project import project_folders
from .sandbox import DEFAULT as DEFAULT_SANDBOX
from .sandbox import project_refusal as sandbox_refusal
from .tool_gate import parse_tool_gate, project_refusal

CONFIG_NAME = "config.toml"
PROJECT_FOLDER = ".yoagent"

USER_ONLY: frozenset[str] = frozenset(
    {
        "base_url",
        "approvals",
        "allow_paths",
        "sessions",
        "mcp_servers",
        "prices_url",
        "record",
        "sandbox_network",
    }
)
"""Keys a project file may not set (see the module docstring)."""


class SettingsError(CliError):
    """A config file cannot be read or holds a bad value (exit code 2)."""


class _Table(BaseModel):
    # Unknown keys are kept (model_extra) and reported as warnings, not refused.
    model_config = ConfigDict(extra="allow", frozen=True)


class SessionLimits(_Table):
    """``[sessions]``: how many saved sessions are kept, and how long."""

    max_age_days: int = Field(default=90, ge=0)
    """Sessions not touched for this many days are deleted at start-up (0: never)."""
    max_total_mb: int = Field(default=1024, ge=0)
    """Past this total size the oldest sessions are deleted at start-up (0: no cap)."""


SERVER_NAME = re.compile(r"[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*")
"""An MCP server's name: it prefixes its tools (``NAME__tool``), so it holds no ``__``."""
SERVER_NAME_LIMIT = 32


def http_url_problem(url: str) -> str | None:
    """Why ``url`` is not an http(s) URL; never quotes it (it may hold a key)."""
    scheme, _, rest = url.strip().partition("://")
    if scheme.lower() not in ("http", "https") or not rest:
        return "the URL must start with http:// or https://"
    return None


class McpServerTable(_Table):
    """``[mcp_servers.<name>]``: one MCP server, started (``command``, ``args``, ``env``) or
    reached over Streamable HTTP (``url``, ``headers``). ``${VAR}`` in ``args``, ``env``,
    ``url`` or ``headers`` is the variable's value from yoagent's environment (see
    :mod:`.mcp_config`)."""

    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list[str])
    env: dict[str, str] = Field(default_factory=dict[str, str])
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict[str, str])
    confirm: bool = True
    """Ask before each call of its tools (``false``: they run without asking)."""
    enabled: bool = True
    """``false`` keeps the entry but does not start the server."""

    @model_validator(mode="after")
    def _one_transport(self) -> McpServerTable:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a program to start) or url (an HTTP server)")
        if self.url is not None:
            if self.args or self.env:
                raise ValueError("args and env go with command, not url")
            if problem := http_url_problem(self.url):
                raise ValueError(problem)
        elif self.headers:
            raise ValueError("headers go with url, not command")
        return self


class Settings(_Table):
    """Everything a config file may set; each key defaults to what the flags default to."""

    provider: str | None = None
    model: str | None = None
    base_url: str | None = None
    thinking: ThinkingLevel | None = None
    max_turns: int | None = Field(default=None, ge=1)
    approvals: Literal["ask", "never-ask"] | None = None
    """``never-ask`` is ``--yes``: writes, edits and commands run without a question."""
    allow_paths: list[Path] = Field(default_factory=list[Path])
    skills: list[Path] = Field(default_factory=list[Path])
    show_thinking: bool | None = None
    project_instructions: bool = True
    """Read AGENTS.md and CLAUDE.md into the system prompt."""
    sessions: SessionLimits = Field(default_factory=SessionLimits)
    pricing: PricingMode | None = None
    """``bundled`` (the default), ``live`` or ``off``: see :mod:`.prices`."""
    prices_url: str | None = None
    """With ``pricing = "live"``: a price file (yoagent-pricing's format) instead of
    models.dev."""
    mcp_servers: dict[str, McpServerTable] = Field(default_factory=dict[str, McpServerTable])
    tool_gate: str | None = None
    """``--tool-gate``: a preset, a SystemOne server's URL, or ``off``."""

    @field_validator("tool_gate")
    @classmethod
    def _check_tool_gate(cls, value: str | None) -> str | None:
        return None if value is None else parse_tool_gate(value)

    record: Path | None = None
    """``--record``: the GASP agent repository every run of a session is recorded into."""
    sandbox: SandboxPolicy | None = None
    """``--sandbox``: ``read-only``, ``workspace-write`` (the default) or ``full-access``."""
    sandbox_network: bool | None = None
    """``--sandbox-network``: sandboxed commands may use the network (user file only)."""

    @field_validator("base_url")
    @classmethod
    def _check_base_url(cls, value: str | None) -> str | None:
        if value is not None and (problem := base_url_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("prices_url")
    @classmethod
    def _check_prices_url(cls, value: str | None) -> str | None:
        if value is not None and (problem := http_url_problem(value)):
            raise ValueError(problem)
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _check_server_names(cls, value: dict[str, McpServerTable]) -> dict[str, McpServerTable]:
        for name in value:
            if len(name) > SERVER_NAME_LIMIT or not SERVER_NAME.fullmatch(name):
                raise ValueError(
                    f"{name!r}: a server's name is up to {SERVER_NAME_LIMIT} letters, digits, "
                    "'-' and single '_' (it prefixes its tools: NAME__tool)"
                )
        return value


@dataclass(slots=True)
class LoadedSettings:
    """The merged settings, the files they came from, and what to warn about."""

    settings: Settings = field(default_factory=Settings)
    files: list[Path] = field(default_factory=list[Path])
    user_file: Path | None = None
    """The user file, when there is one (the only file user-only keys come from)."""
    warnings: list[str] = field(default_factory=list[str])


def user_config_file() -> Path:
    """``<user config folder>/yoagent/config.toml``."""
    return Path(platformdirs.user_config_dir("yoagent", appauthor=False)) / CONFIG_NAME


def project_config_file(cwd: Path) -> Path | None:
    """``.yoagent/config.toml`` in ``cwd`` or its nearest parent that has one, among the
    :func:`~.project.project_folders`."""
    for folder in project_folders(cwd):
        candidate = folder / PROJECT_FOLDER / CONFIG_NAME
        if candidate.is_file():
            return candidate
    return None


def _read(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as error:
        raise SettingsError(f"cannot read {path}: {error.strerror}") from None
    except tomllib.TOMLDecodeError as error:
        raise SettingsError(f"{path}: not valid TOML ({error})") from None


def _validate(path: Path, raw: dict[str, Any]) -> Settings:
    try:
        return Settings.model_validate(raw)
    except ValidationError as error:
        first = error.errors()[0]
        key = ".".join(str(part) for part in first["loc"]) or "(the file)"
        message = str(first["msg"]).removeprefix("Value error, ")
        raise SettingsError(f"{path}: {key}: {message}") from None


def _unknown(settings: BaseModel, prefix: str = "") -> list[str]:
    found = [f"{prefix}{key}" for key in settings.model_extra or {}]
    for name in type(settings).model_fields:
        value = getattr(settings, name)
        if isinstance(value, BaseModel):
            found += _unknown(value, f"{prefix}{name}.")
        elif isinstance(value, dict):
            for key, item in value.items():  # pyright: ignore[reportUnknownVariableType]
                if isinstance(item, BaseModel):
                    found += _unknown(item, f"{prefix}{name}.{key}.")
    return found


def _anchor(paths: list[Path], folder: Path) -> list[Path]:
    """Relative paths in a file are relative to ``folder``; ``~`` is the home folder."""
    anchored = [path.expanduser() for path in paths]
    return [path if path.is_absolute() else folder / path for path in anchored]


def load_settings(cwd: Path, user_file: Path | None = None) -> LoadedSettings:
    """The user file, then the project file over it (see the module docstring).

    Raises :class:`SettingsError` for a file that cannot be read, is not TOML, or holds a
    bad value.
    """
    loaded = LoadedSettings()
    merged: dict[str, Any] = {}
    user = user_file if user_file is not None else user_config_file()
    sources: list[tuple[Path, bool]] = []
    if user.is_file():
        sources.append((user, True))
    project = project_config_file(cwd)
    if project is not None and project.resolve() != user.resolve():
        sources.append((project, False))
    for path, is_user in sources:
        if is_user:
            loaded.user_file = path
        raw = _read(path)
        settings = _validate(path, raw)  # each file valid on its own: errors name it
        loaded.files.append(path)
        for key in _unknown(settings):
            loaded.warnings.append(f"{path}: unknown key {key!r} (ignored)")
        given = settings.model_dump(exclude_unset=True)
        if not is_user:
            for key in sorted(USER_ONLY & set(given)):
                loaded.warnings.append(
                    f"{path}: {key!r} is only read from the user config ({user}); ignored here"
                )
                del given[key]
            gate = given.get("tool_gate")
            if gate is not None and (refusal := project_refusal(gate, "tool_gate" in merged)):
                loaded.warnings.append(f"{path}: 'tool_gate' ignored: {refusal}")
                del given["tool_gate"]
            policy = settings.sandbox
            if policy is not None and "sandbox" in given:
                current = merged.get("sandbox") or DEFAULT_SANDBOX
                if refusal := sandbox_refusal(policy, SandboxPolicy(current)):
                    loaded.warnings.append(f"{path}: 'sandbox' ignored: {refusal}")
                    del given["sandbox"]
        base = path.parent if is_user else path.parent.parent
        for key in ("allow_paths", "skills"):
            if key in given:
                given[key] = _anchor(getattr(settings, key), base)
        if settings.record is not None and "record" in given:
            given["record"] = _anchor([settings.record], base)[0]
        for key in [k for k in given if k not in Settings.model_fields]:
            del given[key]
        merged.update(given)
    loaded.settings = Settings.model_validate(merged)
    return loaded
