"""``--tool-gate``: a decision model judges each shell command, file write and file edit,
and denies what looks destructive and was not asked for (yoagent-decision's ``ToolGate``).

The value is a preset (:data:`PRESETS`), the http(s) URL of a self-hosted SystemOne
server (JevK5, …; no key), or ``off``. Keys are read from the environment at each call,
never stored; only Cloudflare's account id is read at start-up, since it is part of the
URL. The gate fails closed: when the decision model cannot answer (no key, a timeout, an
error) the call is denied and the model is told why.

The config file's ``tool_gate`` key takes the same values. A project file (which comes
with the code you cloned) may turn a gate on with a preset, but never turn one off, point
it at a URL of its choosing, or replace the user file's (:func:`project_refusal`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from yoagent.decision import DecisionModel, ToolGate

OFF = "off"
GATED_TOOLS = frozenset({"bash", "write_file", "edit_file"})
"""The calls the CLI's gate judges: commands and changes to files (reads are not gated)."""
CLOUDFLARE_ACCOUNT = "CLOUDFLARE_ACCOUNT_ID"


@dataclass(slots=True, frozen=True)
class Preset:
    """A decision model the CLI knows by name, and the variables its key comes from."""

    build: Callable[[Mapping[str, str]], DecisionModel]
    key_variables: tuple[str, ...]


def _cloudflare(flash: bool) -> Callable[[Mapping[str, str]], DecisionModel]:
    def build(env: Mapping[str, str]) -> DecisionModel:
        account = env.get(CLOUDFLARE_ACCOUNT, "").strip()
        if not account:
            raise ValueError(f"needs {CLOUDFLARE_ACCOUNT} (the Workers AI account id)")
        return DecisionModel.clef_flash(account) if flash else DecisionModel.clef(account)

    return build


_CLOUDFLARE_KEYS = ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_AUTH_TOKEN")
PRESETS: Mapping[str, Preset] = {
    "jev": Preset(lambda env: DecisionModel.jev(), ("TYPESAFE_API_KEY",)),
    "jev-opencode": Preset(lambda env: DecisionModel.jev_opencode(), ("OPENCODE_API_KEY",)),
    "jev-opencode-free": Preset(
        lambda env: DecisionModel.jev_opencode_free(), ("OPENCODE_API_KEY",)
    ),
    "clef": Preset(_cloudflare(flash=False), _CLOUDFLARE_KEYS),
    "clef-flash": Preset(_cloudflare(flash=True), _CLOUDFLARE_KEYS),
    "gpt-6-luna": Preset(lambda env: DecisionModel.gpt_6_luna(), ("OPENAI_API_KEY",)),
}
"""``--tool-gate`` names: TypeSafe's Jev (direct, or through OpenCode Zen), Cloudflare's
Clef, OpenAI's Decisions API."""

CHOICES = f"{', '.join(PRESETS)}, an http(s) URL of a SystemOne server, or {OFF}"


def is_url(value: str) -> bool:
    """True for an ``http://`` or ``https://`` URL with something after the scheme."""
    scheme, _, rest = value.partition("://")
    return scheme.lower() in ("http", "https") and bool(rest.strip())


def parse_tool_gate(value: str) -> str:
    """``value`` as the CLI keeps it: a preset name or ``off`` (lower-cased), or a URL.
    Raises ``ValueError`` otherwise (never quoting ``value``: a URL may carry a key)."""
    text = value.strip()
    if text.lower() in PRESETS or text.lower() == OFF:
        return text.lower()
    if is_url(text):
        return text
    raise ValueError(f"a tool gate is {CHOICES}")


def project_refusal(value: str, user_set: bool) -> str | None:
    """Why a project config file's ``tool_gate`` is ignored, or ``None`` when it is used
    (a preset, and the user file sets none)."""
    if value == OFF:
        return "a project config cannot turn the tool gate off"
    if is_url(value):
        return "a project config cannot point the tool gate at a URL (only a preset)"
    if user_set:
        return "the user config's tool_gate is kept"
    return None


def build_tool_gate(value: str, env: Mapping[str, str] = os.environ) -> ToolGate:
    """The gate for a parsed ``value`` (not ``off``). Raises ``ValueError`` for a preset
    that cannot be built (Clef without an account id)."""
    preset = PRESETS.get(value)
    model = DecisionModel.local(value) if preset is None else preset.build(env)
    return ToolGate(model=model, tools=GATED_TOOLS)


def missing_key_warning(value: str, env: Mapping[str, str] = os.environ) -> str | None:
    """A start-up warning when a preset's key is not set now (the gate would deny every
    gated call until it is; it is read again at each call)."""
    preset = PRESETS.get(value)
    if preset is None or any(env.get(name, "").strip() for name in preset.key_variables):
        return None
    return (
        f"--tool-gate {value}: {' or '.join(preset.key_variables)} is not set; every command, "
        "write and edit will be denied until it is"
    )
