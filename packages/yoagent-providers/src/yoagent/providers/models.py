"""Model presets: one constructor per vendor, named presets, and where each key lives.

Vendors are data. Each row of :data:`VENDORS` says which protocol a vendor speaks, its
real base URL, the environment variable holding its key and its protocol quirks; adding
a vendor is adding a row (and a one-line constructor).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import MappingProxyType

from yoagent.core import (
    PROVIDER_KEY_VARIABLES,
    AnthropicCompat,
    ApiProtocol,
    ModelConfig,
    OpenAiCompat,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Vendor:
    """One vendor: its protocol, endpoint, key variable (``None``: no key) and quirks."""

    name: str
    label: str
    api: ApiProtocol
    base_url: str
    key_variable: str | None
    compat: OpenAiCompat | AnthropicCompat | None = None


def _key(provider: str) -> str:
    return PROVIDER_KEY_VARIABLES[provider]


_OPENAI_LIKE = ApiProtocol.OPENAI_COMPLETIONS

VENDORS: MappingProxyType[str, Vendor] = MappingProxyType(
    {
        v.name: v
        for v in (
            Vendor(
                name="anthropic",
                label="Anthropic",
                api=ApiProtocol.ANTHROPIC_MESSAGES,
                base_url="https://api.anthropic.com",
                key_variable=_key("anthropic"),
            ),
            Vendor(
                name="openai",
                label="OpenAI",
                api=_OPENAI_LIKE,
                base_url="https://api.openai.com/v1",
                key_variable=_key("openai"),
                compat=OpenAiCompat(supports_strict_tools=True),
            ),
            Vendor(
                name="xai",
                label="xAI",
                api=_OPENAI_LIKE,
                base_url="https://api.x.ai/v1",
                key_variable=_key("xai"),
                # Grok 4 rejects `reasoning_effort`; reasoning streams as `reasoning_content`.
                compat=OpenAiCompat(
                    reasoning_field="reasoning_content", supports_reasoning_effort=False
                ),
            ),
            Vendor(
                name="groq",
                label="Groq",
                api=_OPENAI_LIKE,
                base_url="https://api.groq.com/openai/v1",
                key_variable=_key("groq"),
                compat=OpenAiCompat(reasoning_field="reasoning"),
            ),
            Vendor(
                name="deepseek",
                label="DeepSeek",
                api=_OPENAI_LIKE,
                base_url="https://api.deepseek.com",
                key_variable=_key("deepseek"),
                # Own thinking toggle, reasoning replayed with tool calls, json_object only.
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    replay_reasoning=True,
                    supports_reasoning_effort=False,
                    supports_structured_output=False,
                    thinking_toggle=True,
                ),
            ),
            Vendor(
                name="mistral",
                label="Mistral",
                api=_OPENAI_LIKE,
                base_url="https://api.mistral.ai/v1",
                key_variable=_key("mistral"),
                # Rejects unknown fields such as `stream_options`; usage comes anyway.
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    supports_reasoning_effort=False,
                    supports_usage_in_streaming=False,
                ),
            ),
            Vendor(
                name="together",
                label="Together AI",
                api=_OPENAI_LIKE,
                base_url="https://api.together.xyz/v1",
                key_variable=_key("together"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning",
                    supports_reasoning_effort=False,
                ),
            ),
            Vendor(
                name="fireworks",
                label="Fireworks AI",
                api=_OPENAI_LIKE,
                base_url="https://api.fireworks.ai/inference/v1",
                key_variable=_key("fireworks"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens", reasoning_field="reasoning_content"
                ),
            ),
            Vendor(
                name="openrouter",
                label="OpenRouter",
                api=_OPENAI_LIKE,
                base_url="https://openrouter.ai/api/v1",
                key_variable=_key("openrouter"),
                compat=OpenAiCompat(max_tokens_field="max_tokens", reasoning_field="reasoning"),
            ),
            Vendor(
                name="cerebras",
                label="Cerebras",
                api=_OPENAI_LIKE,
                base_url="https://api.cerebras.ai/v1",
                key_variable=_key("cerebras"),
                compat=OpenAiCompat(reasoning_field="reasoning", supports_strict_tools=True),
            ),
            Vendor(
                name="zai",
                label="Z.ai (GLM)",
                api=_OPENAI_LIKE,
                base_url="https://api.z.ai/api/paas/v4",
                key_variable=_key("zai"),
                # GLM takes the same `thinking: {type}` toggle as DeepSeek.
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                    supports_structured_output=False,
                    thinking_toggle=True,
                ),
            ),
            Vendor(
                name="minimax",
                label="MiniMax",
                api=_OPENAI_LIKE,
                base_url="https://api.minimax.io/v1",
                key_variable=_key("minimax"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning",
                    supports_reasoning_effort=False,
                    supports_structured_output=False,
                ),
            ),
            Vendor(
                name="qwen",
                label="Qwen (Alibaba DashScope)",
                api=_OPENAI_LIKE,
                base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
                key_variable=_key("qwen"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                    supports_structured_output=False,
                ),
            ),
            Vendor(
                name="moonshot",
                label="Moonshot (Kimi)",
                api=_OPENAI_LIKE,
                base_url="https://api.moonshot.ai/v1",
                key_variable=_key("moonshot"),
                # Kimi's thinking models require earlier reasoning back with tool calls.
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    replay_reasoning=True,
                    supports_reasoning_effort=False,
                    supports_structured_output=False,
                ),
            ),
            Vendor(
                name="perplexity",
                label="Perplexity",
                api=_OPENAI_LIKE,
                base_url="https://api.perplexity.ai",
                key_variable=_key("perplexity"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    supports_reasoning_effort=False,
                    supports_usage_in_streaming=False,
                ),
            ),
            Vendor(
                name="huggingface",
                label="Hugging Face Inference Providers",
                api=_OPENAI_LIKE,
                base_url="https://router.huggingface.co/v1",
                key_variable=_key("huggingface"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                ),
            ),
            Vendor(
                name="nvidia",
                label="NVIDIA NIM",
                api=_OPENAI_LIKE,
                base_url="https://integrate.api.nvidia.com/v1",
                key_variable=_key("nvidia"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                ),
            ),
            Vendor(
                name="opencode",
                label="OpenCode Zen",
                api=_OPENAI_LIKE,
                base_url="https://opencode.ai/zen/v1",
                key_variable=_key("opencode"),
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                    supports_structured_output=False,
                ),
            ),
            Vendor(
                name="bedrock",
                label="Amazon Bedrock",
                api=ApiProtocol.BEDROCK_CONVERSE_STREAM,
                # Per region; empty: from the region variables at request time.
                base_url="",
                key_variable=_key("bedrock"),
            ),
            Vendor(
                name="ollama",
                label="Ollama (local)",
                api=_OPENAI_LIKE,
                base_url="http://localhost:11434/v1",
                key_variable=None,
                compat=OpenAiCompat(max_tokens_field="max_tokens", reasoning_field="reasoning"),
            ),
            Vendor(
                name="lmstudio",
                label="LM Studio (local)",
                api=_OPENAI_LIKE,
                base_url="http://localhost:1234/v1",
                key_variable=None,
                # Older builds reject `stream_options`.
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                    supports_usage_in_streaming=False,
                ),
            ),
            Vendor(
                name="vllm",
                label="vLLM (local)",
                api=_OPENAI_LIKE,
                base_url="http://localhost:8000/v1",
                key_variable=None,
                compat=OpenAiCompat(
                    max_tokens_field="max_tokens",
                    reasoning_field="reasoning_content",
                    supports_reasoning_effort=False,
                ),
            ),
        )
    }
)
"""Every vendor this package knows, by provider name."""

OPENCODE_ANTHROPIC_BASE_URL = "https://opencode.ai/zen"
"""OpenCode Zen serves Claude models over the Anthropic Messages protocol."""

_CLAUDE_VERSION = re.compile(
    r"^claude-(?:(?:opus|sonnet|haiku|fable)-(\d+)(?:-(\d{1,2}))?(?:-\d{8})?$"
    r"|(\d+)(?:-(\d{1,2}))?-(?:opus|sonnet|haiku)(?:-\d{8}|-latest)?$)"
)
_OPENAI_NON_REASONING = re.compile(r"^(?:gpt-3|gpt-4|chatgpt-)|-chat")


def claude_version(id: str) -> tuple[int, int] | None:
    """``(major, minor)`` of a Claude model id (``claude-sonnet-4-5`` → ``(4, 5)``)."""
    match = _CLAUDE_VERSION.match(id)
    if match is None:
        return None
    major, minor, old_major, old_minor = match.groups()
    if major is not None:
        return int(major), int(minor or 0)
    return int(old_major), int(old_minor or 0)


def anthropic_compat_for(id: str) -> AnthropicCompat | None:
    """Quirks inferred from a Claude id: native JSON output from 4.5, adaptive thinking from 4.6.

    ``None`` for an id that is not a recognisable Claude id.
    """
    version = claude_version(id)
    if version is None:
        return None
    return AnthropicCompat(
        adaptive_thinking=version >= (4, 6), native_structured_output=version >= (4, 5)
    )


def openai_id_is_reasoning(id: str) -> bool:
    """False for GPT-3/GPT-4/ChatGPT/``*-chat*`` ids, True for OpenAI's reasoning models."""
    return _OPENAI_NON_REASONING.search(id) is None


def vendor(provider: str, id: str, *, name: str = "", reasoning: bool | None = None) -> ModelConfig:
    """A :class:`ModelConfig` for model ``id`` at ``provider`` (a key of :data:`VENDORS`)."""
    row = VENDORS.get(provider)
    if row is None:
        known = ", ".join(sorted(VENDORS))
        raise KeyError(f"unknown provider {provider!r}; known providers: {known}")
    return ModelConfig(
        api=row.api,
        provider=row.name,
        id=id,
        name=name or id,
        base_url=row.base_url,
        reasoning=bool(reasoning),
        compat=row.compat,
    )


def anthropic(id: str, *, name: str = "") -> ModelConfig:
    """A Claude model on Anthropic's API; quirks inferred from the id."""
    config = vendor("anthropic", id, name=name, reasoning=claude_version(id) is not None)
    return replace(config, compat=anthropic_compat_for(id))


def openai(id: str, *, name: str = "") -> ModelConfig:
    """An OpenAI model over Chat Completions; reasoning models get ``developer`` + effort."""
    reasoning = openai_id_is_reasoning(id)
    config = vendor("openai", id, name=name, reasoning=reasoning)
    compat = VENDORS["openai"].compat
    assert isinstance(compat, OpenAiCompat)
    return replace(config, compat=replace(compat, supports_developer_role=reasoning))


def xai(id: str, *, name: str = "") -> ModelConfig:
    """A Grok model on xAI."""
    return vendor("xai", id, name=name, reasoning=True)


def groq(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A model on Groq."""
    return vendor("groq", id, name=name, reasoning=reasoning)


def deepseek(id: str, *, name: str = "") -> ModelConfig:
    """A DeepSeek model."""
    return vendor("deepseek", id, name=name, reasoning=True)


def mistral(id: str, *, name: str = "") -> ModelConfig:
    """A Mistral model."""
    return vendor("mistral", id, name=name)


def together(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A model on Together AI."""
    return vendor("together", id, name=name, reasoning=reasoning)


def fireworks(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A model on Fireworks AI (ids like ``accounts/fireworks/models/...``)."""
    return vendor("fireworks", id, name=name, reasoning=reasoning)


def openrouter(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A model through OpenRouter (ids like ``anthropic/claude-sonnet-4.5``)."""
    return vendor("openrouter", id, name=name, reasoning=reasoning)


def cerebras(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A model on Cerebras."""
    return vendor("cerebras", id, name=name, reasoning=reasoning)


def zai(id: str, *, name: str = "") -> ModelConfig:
    """A GLM model on Z.ai."""
    return vendor("zai", id, name=name, reasoning=True)


def minimax(id: str, *, name: str = "") -> ModelConfig:
    """A MiniMax model."""
    return vendor("minimax", id, name=name, reasoning=True)


def qwen(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A Qwen model on Alibaba DashScope (international endpoint)."""
    return vendor("qwen", id, name=name, reasoning=reasoning)


def moonshot(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A Kimi model on Moonshot."""
    return vendor("moonshot", id, name=name, reasoning=reasoning)


def perplexity(id: str, *, name: str = "") -> ModelConfig:
    """A Sonar model on Perplexity."""
    return vendor("perplexity", id, name=name)


def huggingface(id: str, *, name: str = "") -> ModelConfig:
    """A model through Hugging Face Inference Providers."""
    return vendor("huggingface", id, name=name)


def nvidia(id: str, *, name: str = "") -> ModelConfig:
    """A model on NVIDIA NIM."""
    return vendor("nvidia", id, name=name)


def opencode(id: str, *, name: str = "") -> ModelConfig:
    """A model on OpenCode Zen: Claude ids over Anthropic Messages, others over Chat."""
    if id.startswith("claude-"):
        return ModelConfig(
            api=ApiProtocol.ANTHROPIC_MESSAGES,
            provider="opencode",
            id=id,
            name=name or id,
            base_url=OPENCODE_ANTHROPIC_BASE_URL,
            reasoning=True,
            compat=anthropic_compat_for(id),
        )
    return vendor("opencode", id, name=name)


def bedrock(id: str, *, region: str | None = None, name: str = "") -> ModelConfig:
    """A model on Amazon Bedrock (ConverseStream), e.g. ``us.anthropic.claude-sonnet-4-5-…``.

    With ``region`` the endpoint is ``https://bedrock-runtime.<region>.amazonaws.com``;
    without, the region comes from ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` / the profile at
    request time. Credentials: ``AWS_BEARER_TOKEN_BEDROCK``, the ``AWS_ACCESS_KEY_ID`` pair
    or the shared AWS files (see docs/providers.md).
    """
    config = vendor("bedrock", id, name=name, reasoning="claude" in id.lower())
    if region:
        config = replace(config, base_url=f"https://bedrock-runtime.{region}.amazonaws.com")
    return config


def ollama(id: str, *, name: str = "", base_url: str = "") -> ModelConfig:
    """A model served by a local Ollama (no key)."""
    return _local("ollama", id, name, base_url)


def lmstudio(id: str, *, name: str = "", base_url: str = "") -> ModelConfig:
    """A model served by a local LM Studio (no key)."""
    return _local("lmstudio", id, name, base_url)


def vllm(id: str, *, name: str = "", base_url: str = "") -> ModelConfig:
    """A model served by a local vLLM (no key)."""
    return _local("vllm", id, name, base_url)


def _local(provider: str, id: str, name: str, base_url: str) -> ModelConfig:
    config = vendor(provider, id, name=name)
    return replace(config, base_url=base_url) if base_url else config


def api_key_variables() -> dict[str, str | None]:
    """Provider name → the environment variable its key lives in (``None``: needs no key).

    Core's table (:data:`yoagent.core.PROVIDER_KEY_VARIABLES`) plus this package's
    vendors; ``YOAGENT_API_KEY`` and ``API_KEY`` are read as fallbacks for any provider but
    Bedrock, which reads ``AWS_BEARER_TOKEN_BEDROCK`` or the access key pair
    (:data:`yoagent.core.AWS_KEY_VARIABLES`) and the shared AWS files.
    """
    table: dict[str, str | None] = dict(PROVIDER_KEY_VARIABLES)
    for row in VENDORS.values():
        table[row.name] = row.key_variable
    return table


# --- named presets -----------------------------------------------------------------------
# Context windows and output limits from models.dev (snapshot in the design references).


def _sized(config: ModelConfig, name: str, context: int, output: int) -> ModelConfig:
    return replace(config, name=name, context_window=context, max_tokens=output)


_PRESETS: dict[tuple[str, str], Callable[[], ModelConfig]] = {
    ("anthropic", "claude-opus-5-5"): lambda: _sized(
        anthropic("claude-opus-5-5"), "Claude Opus 5.5", 1_000_000, 128_000
    ),
    ("anthropic", "claude-sonnet-5"): lambda: _sized(
        anthropic("claude-sonnet-5"), "Claude Sonnet 5", 1_000_000, 128_000
    ),
    ("anthropic", "claude-haiku-4-5"): lambda: _sized(
        anthropic("claude-haiku-4-5"), "Claude Haiku 4.5", 200_000, 64_000
    ),
    ("openai", "gpt-5.5"): lambda: _sized(openai("gpt-5.5"), "GPT-5.5", 1_050_000, 128_000),
    ("deepseek", "deepseek-flash"): lambda: _sized(
        deepseek("deepseek-flash"), "DeepSeek V4.1 Flash", 1_000_000, 393_216
    ),
    ("deepseek", "deepseek-v4-pro"): lambda: _sized(
        deepseek("deepseek-v4-pro"), "DeepSeek V4 Pro", 1_000_000, 393_216
    ),
    ("qwen", "qwen-flash"): lambda: _sized(
        qwen("qwen-flash", reasoning=True), "Qwen Flash", 1_000_000, 32_768
    ),
    ("openrouter", "perplexity/sonar-deep-research"): lambda: _sized(
        openrouter("perplexity/sonar-deep-research", reasoning=True),
        "Sonar Deep Research",
        128_000,
        115_200,
    ),
}


class UnknownPresetError(KeyError):
    """No preset has that provider and id."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown preset"


def preset(provider: str, id: str) -> ModelConfig:
    """A fresh copy of the named preset (exact provider and id), or UnknownPresetError."""
    make = _PRESETS.get((provider, id))
    if make is None:
        ids = sorted(model for (p, model) in _PRESETS if p == provider)
        hint = f"presets for {provider}: {', '.join(ids)}" if ids else "no presets for it"
        raise UnknownPresetError(f"no preset {provider}/{id} ({hint}); use models.vendor()")
    return make()


def presets() -> list[ModelConfig]:
    """Fresh copies of every named preset."""
    return [make() for make in _PRESETS.values()]


__all__ = [
    "OPENCODE_ANTHROPIC_BASE_URL",
    "VENDORS",
    "UnknownPresetError",
    "Vendor",
    "anthropic",
    "anthropic_compat_for",
    "api_key_variables",
    "bedrock",
    "cerebras",
    "claude_version",
    "deepseek",
    "fireworks",
    "groq",
    "huggingface",
    "lmstudio",
    "minimax",
    "mistral",
    "moonshot",
    "nvidia",
    "ollama",
    "openai",
    "openai_id_is_reasoning",
    "opencode",
    "openrouter",
    "perplexity",
    "preset",
    "presets",
    "qwen",
    "together",
    "vendor",
    "vllm",
    "xai",
    "zai",
]
