"""Model presets: one constructor per vendor, named presets, and where each key lives.

Vendors are data: each row of :data:`VENDORS` says which protocol a vendor speaks, its
real base URL, the environment variable holding its key, its default model and its
protocol quirks. ``vendor(provider, id)`` builds a config from a row alone; the
constructors below add what can be inferred from a model id.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import replace

from yoagent.core import (
    AnthropicCompat,
    ApiProtocol,
    GoogleCompat,
    ModelConfig,
    OpenAiCompat,
)
from yoagent.core.provider import FALLBACK_KEY_VARIABLES

from ._aws_credentials import SharedFiles, runtime_url
from ._azure import v1_base_url
from ._errors import ProvidersError
from ._vendors import (
    VENDORS,
    Vendor,
    detection_order,
    find_api_key,
    key_hint,
    key_variables_for,
    vendor_for_id,
)
from ._vertex_auth import adc_file

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


_GEMINI_VERSION = re.compile(r"^gemini-(\d+)")


def gemini_compat_for(id: str) -> GoogleCompat:
    """Quirks inferred from a Gemini id: ``thinkingLevel`` from Gemini 3, a budget before."""
    match = _GEMINI_VERSION.match(id.rsplit("/", 1)[-1].lower())
    return GoogleCompat(thinking_level_field=match is not None and int(match.group(1)) >= 3)


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
        key_variable=row.key_variable or "",
        reasoning=row.reasoning if reasoning is None else reasoning,
        compat=row.compat,
    )


def anthropic(id: str, *, name: str = "") -> ModelConfig:
    """A Claude model on Anthropic's API; quirks inferred from the id."""
    config = vendor("anthropic", id, name=name, reasoning=claude_version(id) is not None)
    return replace(config, compat=anthropic_compat_for(id))


def openai(id: str, *, name: str = "") -> ModelConfig:
    """An OpenAI model: reasoning models over the Responses API, older ones over Chat.

    Reasoning ids (``gpt-5*``, ``o*``; see :func:`openai_id_is_reasoning`) get reasoning
    summaries, encrypted-reasoning replay (opt-in) and ``prompt_cache_key``; GPT-3/GPT-4
    and ``*-chat*`` ids stay on Chat Completions.
    """
    if openai_id_is_reasoning(id):
        return openai_responses(id, name=name)
    return vendor("openai", id, name=name, reasoning=False)


def openai_responses(id: str, *, name: str = "", encrypted_reasoning: bool = False) -> ModelConfig:
    """An OpenAI model over the Responses API, whatever its id.

    ``encrypted_reasoning`` asks for the reasoning items and replays them on later turns
    (off by default: it needs a reasoning model and stateless use is opt-in).
    """
    config = vendor("openai", id, name=name, reasoning=openai_id_is_reasoning(id))
    return replace(
        config,
        api=ApiProtocol.OPENAI_RESPONSES,
        compat=OpenAiCompat(encrypted_reasoning=encrypted_reasoning),
    )


def azure(
    id: str,
    *,
    resource: str | None = None,
    base_url: str | None = None,
    name: str = "",
    encrypted_reasoning: bool = False,
) -> ModelConfig:
    """A deployment on Azure OpenAI (v1 Responses API); ``id`` is the deployment name.

    The endpoint is ``base_url``, else ``https://{resource}.openai.azure.com/openai/v1``
    from ``resource``, else from ``AZURE_OPENAI_BASE_URL``, ``AZURE_OPENAI_RESOURCE`` or
    ``AZURE_OPENAI_ENDPOINT``. A legacy ``…/openai/deployments/{deployment}`` URL works too:
    requests go to its host's v1 endpoint with that deployment as the model. The key comes
    from ``AZURE_OPENAI_API_KEY`` (``api-key`` header); an ``authorization`` header in
    ``ModelConfig.headers`` (Entra ID) replaces it.
    """
    config = vendor("azure", id, name=name, reasoning=openai_id_is_reasoning(id))
    return replace(
        config,
        base_url=azure_base_url(resource=resource, base_url=base_url),
        compat=OpenAiCompat(encrypted_reasoning=encrypted_reasoning),
    )


def azure_base_url(*, resource: str | None = None, base_url: str | None = None) -> str:
    """The Azure OpenAI v1 endpoint from the arguments or the environment (``""``: unknown)."""
    if base_url:
        return base_url.rstrip("/")
    resource = resource or os.environ.get("AZURE_OPENAI_RESOURCE", "").strip()
    if resource:
        return f"https://{resource}.openai.azure.com/openai/v1"
    explicit = os.environ.get("AZURE_OPENAI_BASE_URL", "").strip()
    if explicit:
        return explicit.rstrip("/")
    endpoint = os.environ.get("AZURE_OPENAI_ENDPOINT", "").strip()
    return v1_base_url(endpoint) if endpoint else ""


def gemini(id: str, *, name: str = "") -> ModelConfig:
    """A Gemini model on the Gemini API (key from ``GEMINI_API_KEY``)."""
    return replace(vendor("google", id, name=name), compat=gemini_compat_for(id))


def vertex(
    id: str, project: str | None = None, region: str | None = None, *, name: str = ""
) -> ModelConfig:
    """A Gemini model on Vertex AI in ``project`` and ``region``.

    ``project`` defaults to ``GOOGLE_CLOUD_PROJECT`` (or ``GCLOUD_PROJECT``), ``region``
    to ``GOOGLE_CLOUD_LOCATION``, else ``global``. Credentials are read per request: an
    OAuth access token from ``GOOGLE_CLOUD_ACCESS_TOKEN`` (or ``ModelConfig.api_key``),
    else Application Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS`` or gcloud's
    file), exchanged for a token and cached until it expires.
    """
    config = vendor("vertex", id, name=name)
    return replace(
        config,
        base_url=vertex_base_url(project, region),
        compat=gemini_compat_for(id),
    )


def vertex_base_url(project: str | None = None, region: str | None = None) -> str:
    """``https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}``.

    ``""`` when no project is given or set in the environment (the request then fails
    with an error saying so).
    """
    project = project or next(
        (v for name in ("GOOGLE_CLOUD_PROJECT", "GCLOUD_PROJECT") if (v := os.environ.get(name))),
        "",
    )
    region = region or os.environ.get("GOOGLE_CLOUD_LOCATION", "").strip() or "global"
    if not project:
        return ""
    host = (
        "aiplatform.googleapis.com" if region == "global" else f"{region}-aiplatform.googleapis.com"
    )
    return f"https://{host}/v1/projects/{project.strip()}/locations/{region}"


def bedrock(id: str, *, region: str | None = None, name: str = "") -> ModelConfig:
    """A model on Amazon Bedrock (ConverseStream), e.g. ``global.anthropic.claude-sonnet-4-5-…``.

    With ``region`` the endpoint is ``https://bedrock-runtime.{region}.amazonaws.com``;
    without, ``base_url`` stays empty and the region is chosen per request from
    ``AWS_REGION``, ``AWS_DEFAULT_REGION`` or the profile's ``region``. Credentials are read
    per request: ``AWS_BEARER_TOKEN_BEDROCK`` (a Bedrock API key), else
    ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` (/ ``AWS_SESSION_TOKEN``), else the
    profile in the shared AWS files (see ``docs/providers.md``). Claude ids reason.
    """
    config = vendor("bedrock", id, name=name, reasoning="claude" in id.lower())
    return replace(config, base_url=runtime_url(region)) if region else config


def xai(id: str, *, name: str = "") -> ModelConfig:
    """A Grok model on xAI."""
    return vendor("xai", id, name=name)


def groq(id: str, *, name: str = "", reasoning: bool = False) -> ModelConfig:
    """A model on Groq."""
    return vendor("groq", id, name=name, reasoning=reasoning)


def deepseek(id: str, *, name: str = "") -> ModelConfig:
    """A DeepSeek model."""
    return vendor("deepseek", id, name=name)


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
    return vendor("zai", id, name=name)


def minimax(id: str, *, name: str = "") -> ModelConfig:
    """A MiniMax model."""
    return vendor("minimax", id, name=name)


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
        return replace(
            vendor("opencode", id, name=name, reasoning=True),
            api=ApiProtocol.ANTHROPIC_MESSAGES,
            base_url=OPENCODE_ANTHROPIC_BASE_URL,
            compat=anthropic_compat_for(id),
        )
    return vendor("opencode", id, name=name)


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


_CONSTRUCTORS: dict[str, Callable[[str], ModelConfig]] = {
    "anthropic": anthropic,
    "openai": openai,
    "google": gemini,
    "vertex": vertex,
    "azure": azure,
    "bedrock": bedrock,
    "opencode": opencode,
}
"""Vendors whose constructor infers more than the row says (the others: :func:`vendor`)."""


def model_for(provider: str, id: str) -> ModelConfig:
    """The config of model ``id`` at ``provider``: its named preset if there is one, else
    :func:`generic`'s."""
    try:
        return preset(provider, id)
    except KeyError:
        return generic(provider, id)


def generic(provider: str, id: str) -> ModelConfig:
    """Model ``id`` at ``provider`` from its vendor's constructor (quirks inferred from the
    id: OpenAI reasoning ids over the Responses API), else the vendor row; never a named
    preset, so no name or limits beyond the row's. ``KeyError`` for an unknown provider."""
    constructor = _CONSTRUCTORS.get(provider)
    return constructor(id) if constructor is not None else vendor(provider, id)


_DECISION_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    # yoagent-decision's presets, by the backend they use (a root test pins these to
    # yoagent-decision's own constants: this package may not import it).
    "decision:typesafe": ("TYPESAFE_API_KEY",),  # DecisionModel.jev()
    "decision:opencode": ("OPENCODE_API_KEY",),  # jev_opencode(), jev_opencode_free()
    "decision:cloudflare": ("CLOUDFLARE_API_TOKEN", "CLOUDFLARE_AUTH_TOKEN"),  # clef*()
    "decision:openai": ("OPENAI_API_KEY",),  # gpt_6_luna()
}


def api_key_variables() -> dict[str, tuple[str, ...]]:
    """Every environment variable a yoagent key is read from, by who reads it, in order.

    Each vendor (a key of :data:`VENDORS`) → its own variables (``()``: it needs no key;
    Bedrock's bearer key, then its ``AWS_*`` key pair and session token); ``"fallback"`` →
    ``YOAGENT_API_KEY`` and ``API_KEY``, read after a vendor's own for every vendor but
    Vertex AI and Bedrock (:func:`key_variables_for` gives one vendor's full order); and
    ``"decision:typesafe"``, ``"decision:opencode"``, ``"decision:cloudflare"``,
    ``"decision:openai"`` → what yoagent-decision's presets read. For scrubbing these from an
    environment you hand on, or telling someone what to set.
    """
    table = {
        row.name: tuple(v for v in key_variables_for(row.name) if v not in FALLBACK_KEY_VARIABLES)
        for row in VENDORS.values()
    }
    table["fallback"] = FALLBACK_KEY_VARIABLES
    return table | _DECISION_KEY_VARIABLES


def credentials_origin(provider: str, env: Mapping[str, str] | None = None) -> str | None:
    """Where ``provider``'s credentials come from, or ``None`` when none are set.

    The variable :func:`find_api_key` finds; else, for a provider that reads its own
    credentials, the file it would read: Bedrock's profile in the shared AWS files,
    Vertex AI's Application Default Credentials file. Nothing is sent. A Bedrock
    profile that cannot be used (a role, SSO, a missing key) raises the ``AUTH``
    :class:`~yoagent.core.ProviderError` the request would.
    """
    found = find_api_key(provider, env)
    if found is not None:
        return found[0]
    row = VENDORS.get(provider)
    environ = os.environ if env is None else env
    if row is not None and row.api is ApiProtocol.BEDROCK_CONVERSE_STREAM:
        auth = SharedFiles(environ).credentials()
        return auth.origin if auth is not None else None
    if row is not None and row.api is ApiProtocol.GOOGLE_VERTEX:
        path = adc_file(environ)
        return str(path) if path is not None else None
    return None


# --- named presets -----------------------------------------------------------------------
# Context windows and output limits from models.dev (snapshot in the design references), else
# from the vendor's own model page. Every model whose price ships in yoagent-pricing's snapshot
# has one (tests/test_preset_prices.py).


def _sized(config: ModelConfig, name: str, context: int, output: int) -> ModelConfig:
    return replace(config, name=name, context_window=context, max_tokens=output)


_PRESETS: dict[tuple[str, str], Callable[[], ModelConfig]] = {
    ("anthropic", "claude-fable-5-1"): lambda: _sized(
        anthropic("claude-fable-5-1"), "Claude Fable 5.1", 1_000_000, 128_000
    ),
    ("anthropic", "claude-fable-5"): lambda: _sized(
        anthropic("claude-fable-5"), "Claude Fable 5", 1_000_000, 128_000
    ),
    ("anthropic", "claude-opus-5-5"): lambda: _sized(
        anthropic("claude-opus-5-5"), "Claude Opus 5.5", 1_000_000, 128_000
    ),
    ("anthropic", "claude-opus-5"): lambda: _sized(
        anthropic("claude-opus-5"), "Claude Opus 5", 1_000_000, 128_000
    ),
    ("anthropic", "claude-opus-4-8"): lambda: _sized(
        anthropic("claude-opus-4-8"), "Claude Opus 4.8", 1_000_000, 128_000
    ),
    ("anthropic", "claude-sonnet-5"): lambda: _sized(
        anthropic("claude-sonnet-5"), "Claude Sonnet 5", 1_000_000, 128_000
    ),
    ("anthropic", "claude-haiku-4-5"): lambda: _sized(
        anthropic("claude-haiku-4-5"), "Claude Haiku 4.5", 200_000, 64_000
    ),
    ("openai", "gpt-6-astra"): lambda: _sized(
        openai("gpt-6-astra"), "GPT-6 Astra", 1_050_000, 128_000
    ),
    ("openai", "gpt-6-sol"): lambda: _sized(openai("gpt-6-sol"), "GPT-6 Sol", 1_050_000, 128_000),
    ("openai", "gpt-6-luna"): lambda: _sized(
        openai("gpt-6-luna"), "GPT-6 Luna", 1_050_000, 128_000
    ),
    ("openai", "gpt-5.5"): lambda: _sized(openai("gpt-5.5"), "GPT-5.5", 1_050_000, 128_000),
    ("google", "gemini-2.5-pro"): lambda: _sized(
        gemini("gemini-2.5-pro"), "Gemini 2.5 Pro", 1_048_576, 65_536
    ),
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


class UnknownPresetError(ProvidersError, KeyError):
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
    "azure",
    "azure_base_url",
    "bedrock",
    "cerebras",
    "claude_version",
    "credentials_origin",
    "deepseek",
    "detection_order",
    "find_api_key",
    "fireworks",
    "gemini",
    "gemini_compat_for",
    "generic",
    "groq",
    "huggingface",
    "key_hint",
    "key_variables_for",
    "lmstudio",
    "minimax",
    "mistral",
    "model_for",
    "moonshot",
    "nvidia",
    "ollama",
    "openai",
    "openai_id_is_reasoning",
    "openai_responses",
    "opencode",
    "openrouter",
    "perplexity",
    "preset",
    "presets",
    "qwen",
    "together",
    "vendor",
    "vendor_for_id",
    "vertex",
    "vertex_base_url",
    "vllm",
    "xai",
    "zai",
]
