"""The vendor table: one row per vendor, everything yoagent knows about reaching it.

A row says which protocol the vendor speaks, its real base URL, the environment variable
holding its key (and, for Bedrock, the AWS key variables it signs with), the model used
when none is named, where it ranks when a key is detected, whether its models reason by
default, which model ids look like its own, and its protocol quirks. Adding a vendor is
adding a row; everything else (constructors' defaults, the key variables, the CLI's
detection) reads the rows.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from yoagent.core import ApiProtocol, OpenAiCompat
from yoagent.core.provider import FALLBACK_KEY_VARIABLES, SELF_AUTHENTICATING, Compat


@dataclass(frozen=True, slots=True, kw_only=True)
class Vendor:
    """One vendor and how to reach it."""

    name: str
    """The provider name (``ModelConfig.provider``)."""
    label: str
    api: ApiProtocol
    base_url: str
    """The vendor's endpoint in its SDK's convention (empty: built per account, see the
    vendor's constructor)."""
    key_variable: str | None
    """The environment variable holding its key (``None``: it needs none)."""
    signing_key_variables: tuple[str, str, str] | None = None
    """The access key id, secret and (optional) session token variables it signs requests
    with when ``key_variable`` is unset (Bedrock's SigV4)."""
    compat: Compat | None = None
    default_model: str | None = None
    """The model used when none is named (``None``: ask the server, or name one)."""
    detect: int | None = None
    """Rank when the vendor is picked by which key is set (lower first; ``None``: never)."""
    reasoning: bool = False
    """Whether its models reason unless the constructor knows better."""
    id_prefixes: tuple[str, ...] = ()
    """Model ids starting with one of these look like this vendor's."""


_CHAT = ApiProtocol.OPENAI_COMPLETIONS

_ROWS = (
    Vendor(
        name="anthropic",
        label="Anthropic",
        api=ApiProtocol.ANTHROPIC_MESSAGES,
        base_url="https://api.anthropic.com",
        key_variable="ANTHROPIC_API_KEY",
        default_model="claude-sonnet-5",
        detect=0,
        id_prefixes=("claude-",),
    ),
    Vendor(
        name="openai",
        label="OpenAI",
        # Reasoning ids go over the Responses API instead (see `models.openai`).
        api=_CHAT,
        base_url="https://api.openai.com/v1",
        key_variable="OPENAI_API_KEY",
        compat=OpenAiCompat(supports_strict_tools=True),
        default_model="gpt-5.5",
        detect=1,
        id_prefixes=("gpt-", "o1", "o3", "o4"),
    ),
    Vendor(
        name="google",
        label="Google Gemini",
        api=ApiProtocol.GOOGLE_GENERATIVE_AI,
        base_url="https://generativelanguage.googleapis.com",
        key_variable="GEMINI_API_KEY",
        default_model="gemini-2.5-pro",
        detect=2,
        reasoning=True,
        id_prefixes=("gemini-",),
    ),
    Vendor(
        name="vertex",
        label="Google Vertex AI",
        api=ApiProtocol.GOOGLE_VERTEX,
        # https://{region}-aiplatform.googleapis.com/v1/projects/{project}/locations/{region}
        base_url="",
        # An OAuth access token; without one, the ADC file (see `yoagent.providers.vertex`).
        key_variable="GOOGLE_CLOUD_ACCESS_TOKEN",
        default_model="gemini-2.5-pro",
        reasoning=True,
    ),
    Vendor(
        name="azure",
        label="Azure OpenAI",
        api=ApiProtocol.AZURE_OPENAI_RESPONSES,
        # https://{resource}.openai.azure.com/openai/v1; the model id is the deployment.
        base_url="",
        key_variable="AZURE_OPENAI_API_KEY",
        reasoning=True,
    ),
    Vendor(
        name="bedrock",
        label="Amazon Bedrock",
        api=ApiProtocol.BEDROCK_CONVERSE_STREAM,
        # https://bedrock-runtime.{region}.amazonaws.com; empty: the region is chosen per
        # request (AWS_REGION, AWS_DEFAULT_REGION, the profile's), see `models.bedrock`.
        base_url="",
        # A Bedrock API key; else the AWS key pair, else the shared AWS files' profile.
        key_variable="AWS_BEARER_TOKEN_BEDROCK",
        signing_key_variables=("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
        # A global cross-region inference profile: served from any commercial region.
        default_model="global.anthropic.claude-sonnet-4-5-20250929-v1:0",
        reasoning=True,
    ),
    Vendor(
        name="openrouter",
        label="OpenRouter",
        api=_CHAT,
        base_url="https://openrouter.ai/api/v1",
        key_variable="OPENROUTER_API_KEY",
        compat=OpenAiCompat(max_tokens_field="max_tokens", reasoning_field="reasoning"),
        default_model="anthropic/claude-sonnet-4.5",
        detect=3,
    ),
    Vendor(
        name="deepseek",
        label="DeepSeek",
        api=_CHAT,
        base_url="https://api.deepseek.com",
        key_variable="DEEPSEEK_API_KEY",
        # Own thinking toggle, reasoning replayed with tool calls, json_object only.
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            replay_reasoning=True,
            supports_reasoning_effort=False,
            supports_structured_output=False,
            thinking_toggle=True,
        ),
        default_model="deepseek-flash",
        detect=4,
        reasoning=True,
        id_prefixes=("deepseek-",),
    ),
    Vendor(
        name="xai",
        label="xAI",
        api=_CHAT,
        base_url="https://api.x.ai/v1",
        key_variable="XAI_API_KEY",
        # Grok 4 rejects `reasoning_effort`; reasoning streams as `reasoning_content`.
        compat=OpenAiCompat(reasoning_field="reasoning_content", supports_reasoning_effort=False),
        default_model="grok-4",
        detect=5,
        reasoning=True,
        id_prefixes=("grok-",),
    ),
    Vendor(
        name="groq",
        label="Groq",
        api=_CHAT,
        base_url="https://api.groq.com/openai/v1",
        key_variable="GROQ_API_KEY",
        compat=OpenAiCompat(reasoning_field="reasoning"),
        default_model="openai/gpt-oss-120b",
        detect=6,
    ),
    Vendor(
        name="mistral",
        label="Mistral",
        api=_CHAT,
        base_url="https://api.mistral.ai/v1",
        key_variable="MISTRAL_API_KEY",
        # Rejects unknown fields such as `stream_options`; usage comes anyway.
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            supports_reasoning_effort=False,
            supports_usage_in_streaming=False,
        ),
        default_model="mistral-large-latest",
        detect=7,
        id_prefixes=("mistral-",),
    ),
    Vendor(
        name="qwen",
        label="Qwen (Alibaba DashScope)",
        api=_CHAT,
        base_url="https://dashscope-intl.aliyuncs.com/compatible-mode/v1",
        key_variable="DASHSCOPE_API_KEY",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            supports_reasoning_effort=False,
            supports_structured_output=False,
        ),
        default_model="qwen-flash",
        detect=8,
        id_prefixes=("qwen",),
    ),
    Vendor(
        name="moonshot",
        label="Moonshot (Kimi)",
        api=_CHAT,
        base_url="https://api.moonshot.ai/v1",
        key_variable="MOONSHOT_API_KEY",
        # Kimi's thinking models require earlier reasoning back with tool calls.
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            replay_reasoning=True,
            supports_reasoning_effort=False,
            supports_structured_output=False,
        ),
        default_model="kimi-k2-0905-preview",
        detect=9,
        id_prefixes=("kimi-",),
    ),
    Vendor(
        name="zai",
        label="Z.ai (GLM)",
        api=_CHAT,
        base_url="https://api.z.ai/api/paas/v4",
        key_variable="ZAI_API_KEY",
        # GLM takes the same `thinking: {type}` toggle as DeepSeek.
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            supports_reasoning_effort=False,
            supports_structured_output=False,
            thinking_toggle=True,
        ),
        default_model="glm-4.6",
        detect=10,
        reasoning=True,
        id_prefixes=("glm-",),
    ),
    Vendor(
        name="minimax",
        label="MiniMax",
        api=_CHAT,
        base_url="https://api.minimax.io/v1",
        key_variable="MINIMAX_API_KEY",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning",
            supports_reasoning_effort=False,
            supports_structured_output=False,
        ),
        default_model="MiniMax-M2",
        detect=11,
        reasoning=True,
    ),
    Vendor(
        name="together",
        label="Together AI",
        api=_CHAT,
        base_url="https://api.together.xyz/v1",
        key_variable="TOGETHER_API_KEY",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning",
            supports_reasoning_effort=False,
        ),
        default_model="openai/gpt-oss-120b",
        detect=12,
    ),
    Vendor(
        name="fireworks",
        label="Fireworks AI",
        api=_CHAT,
        base_url="https://api.fireworks.ai/inference/v1",
        key_variable="FIREWORKS_API_KEY",
        compat=OpenAiCompat(max_tokens_field="max_tokens", reasoning_field="reasoning_content"),
        default_model="accounts/fireworks/models/gpt-oss-120b",
        detect=13,
    ),
    Vendor(
        name="cerebras",
        label="Cerebras",
        api=_CHAT,
        base_url="https://api.cerebras.ai/v1",
        key_variable="CEREBRAS_API_KEY",
        compat=OpenAiCompat(reasoning_field="reasoning", supports_strict_tools=True),
        default_model="gpt-oss-120b",
        detect=14,
    ),
    Vendor(
        name="opencode",
        label="OpenCode Zen",
        api=_CHAT,
        base_url="https://opencode.ai/zen/v1",
        key_variable="OPENCODE_API_KEY",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            supports_reasoning_effort=False,
            supports_structured_output=False,
        ),
        default_model="claude-sonnet-4-5",
        detect=15,
    ),
    Vendor(
        name="perplexity",
        label="Perplexity",
        api=_CHAT,
        base_url="https://api.perplexity.ai",
        key_variable="PERPLEXITY_API_KEY",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            supports_reasoning_effort=False,
            supports_usage_in_streaming=False,
        ),
        default_model="sonar-pro",
        detect=16,
    ),
    Vendor(
        name="huggingface",
        label="Hugging Face Inference Providers",
        api=_CHAT,
        base_url="https://router.huggingface.co/v1",
        key_variable="HF_TOKEN",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            supports_reasoning_effort=False,
        ),
        default_model="openai/gpt-oss-120b",
        detect=17,
    ),
    Vendor(
        name="nvidia",
        label="NVIDIA NIM",
        api=_CHAT,
        base_url="https://integrate.api.nvidia.com/v1",
        key_variable="NVIDIA_API_KEY",
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            supports_reasoning_effort=False,
        ),
        default_model="openai/gpt-oss-120b",
        detect=18,
    ),
    Vendor(
        name="ollama",
        label="Ollama (local)",
        api=_CHAT,
        base_url="http://localhost:11434/v1",
        key_variable=None,
        compat=OpenAiCompat(max_tokens_field="max_tokens", reasoning_field="reasoning"),
        default_model="llama3.2",
    ),
    Vendor(
        name="lmstudio",
        label="LM Studio (local)",
        api=_CHAT,
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
        api=_CHAT,
        base_url="http://localhost:8000/v1",
        key_variable=None,
        compat=OpenAiCompat(
            max_tokens_field="max_tokens",
            reasoning_field="reasoning_content",
            supports_reasoning_effort=False,
        ),
    ),
)

VENDORS: MappingProxyType[str, Vendor] = MappingProxyType({row.name: row for row in _ROWS})
"""Every vendor this package knows, by provider name."""


def key_variables_for(provider: str) -> tuple[str, ...]:
    """Every environment variable a key for ``provider`` is read from, in order.

    The row's own variable, then the variables it signs with (Bedrock's access key id,
    secret and session token), then ``YOAGENT_API_KEY`` and ``API_KEY``, except for a
    vendor whose provider reads its own credentials (Bedrock, Vertex AI): a generic key
    is never sent there. Empty for a vendor that needs no key; only the fallbacks for a
    provider the table does not know.
    """
    row = VENDORS.get(provider)
    if row is None:
        return FALLBACK_KEY_VARIABLES
    if row.key_variable is None:
        return ()
    own = (row.key_variable, *(row.signing_key_variables or ()))
    return own if row.api in SELF_AUTHENTICATING else own + FALLBACK_KEY_VARIABLES


def find_api_key(provider: str, env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``(variable, key)`` for ``provider`` from ``env`` (default ``os.environ``), else ``None``.

    The first set variable of :func:`key_variables_for`; a signing vendor's access key id
    counts only with its secret, and gives ``access:secret[:token]`` (the form
    ``ModelConfig.api_key`` takes for SigV4). So ``find_api_key("bedrock")`` prefers
    ``AWS_BEARER_TOKEN_BEDROCK`` and never returns ``API_KEY``. A value is trimmed; a
    blank one counts as unset.
    """
    environ = os.environ if env is None else env
    row = VENDORS.get(provider)
    signing = row.signing_key_variables if row is not None else None
    for variable in key_variables_for(provider):
        if signing is not None and variable == signing[0]:
            access, secret, token = (environ.get(name, "").strip() for name in signing)
            if access and secret:
                return variable, ":".join(part for part in (access, secret, token) if part)
        elif signing is None or variable not in signing:
            value = environ.get(variable, "").strip()
            if value:
                return variable, value
    return None


def key_hint(provider: str) -> str:
    """What to set for ``provider``'s key, for messages (``""``: it needs none)."""
    row = VENDORS.get(provider)
    if row is None or row.signing_key_variables is None:
        return " or ".join(key_variables_for(provider))
    access, secret, token = row.signing_key_variables
    return (
        f"{row.key_variable}, or {access} and {secret} (with {token} for temporary "
        "credentials), or a profile in the shared AWS files"
    )


def detection_order() -> tuple[str, ...]:
    """Vendors that can be picked by which key is set, first choice first."""
    ranked = [row for row in _ROWS if row.detect is not None]
    return tuple(row.name for row in sorted(ranked, key=lambda row: row.detect or 0))


def vendor_for_id(model_id: str) -> str | None:
    """The vendor whose ids look like ``model_id`` (``claude-…`` → ``anthropic``), if any."""
    lowered = model_id.lower()
    for row in _ROWS:
        if any(lowered.startswith(prefix) for prefix in row.id_prefixes):
            return row.name
    return None


__all__ = [
    "VENDORS",
    "Vendor",
    "detection_order",
    "find_api_key",
    "key_hint",
    "key_variables_for",
    "vendor_for_id",
]
