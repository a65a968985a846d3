"""Model configuration: which API, which model, and each protocol's quirks as data."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import pairwise
from typing import Literal


class ApiProtocol(StrEnum):
    """The wire protocols yoagent speaks. The value is the entry-point name of its provider."""

    ANTHROPIC_MESSAGES = "anthropic_messages"
    OPENAI_COMPLETIONS = "openai_completions"
    OPENAI_RESPONSES = "openai_responses"
    AZURE_OPENAI_RESPONSES = "azure_openai_responses"
    GOOGLE_GENERATIVE_AI = "google_generative_ai"
    GOOGLE_VERTEX = "google_vertex"
    BEDROCK_CONVERSE_STREAM = "bedrock_converse_stream"


class ThinkingLevel(StrEnum):
    """How hard the model should think. ``OFF`` sends no thinking or effort field at all."""

    OFF = "off"
    MINIMAL = "minimal"
    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


def _check_rates(owner: str, rates: dict[str, float]) -> None:
    for name, value in rates.items():
        if not math.isfinite(value) or value < 0:
            raise ValueError(f"{owner}.{name} is {value!r}; rates must be finite and non-negative")


@dataclass(slots=True, kw_only=True, frozen=True)
class ContextTier:
    """Higher rates for a request whose prompt is above ``above_prompt_tokens``.

    The prompt is ``input + cache_read + cache_write`` (output never counts), and the tier
    prices the whole request, output included. A cache rate of 0 bills at this tier's own
    ``input`` rate, never at a lower band's cache rate.
    """

    above_prompt_tokens: int
    input: float
    output: float
    cache_read: float = 0.0
    cache_write: float = 0.0

    def __post_init__(self) -> None:
        if isinstance(self.above_prompt_tokens, bool) or self.above_prompt_tokens < 1:
            raise ValueError(
                f"ContextTier.above_prompt_tokens is {self.above_prompt_tokens!r}; a tier "
                "starts above at least 1 prompt token (set the base rates for every request)"
            )
        _check_rates("ContextTier", _rates(self))


@dataclass(slots=True, kw_only=True, frozen=True)
class CostConfig:
    """Prices in US dollars per million tokens.

    A cache rate of 0 means "not separately priced": those tokens bill at the input rate of
    the band that applies, so a vendor without a cache discount or write premium is priced
    right without repeating its input rate, and a missing rate never bills tokens as free.
    ``tiers`` are context bands, strictly ascending; the highest one the request's prompt is
    above prices the whole request. Rates must be finite and non-negative.
    """

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    tiers: tuple[ContextTier, ...] = ()

    def __post_init__(self) -> None:
        _check_rates("CostConfig", _rates(self))
        object.__setattr__(self, "tiers", tuple(self.tiers))  # a list would be shared
        thresholds = [tier.above_prompt_tokens for tier in self.tiers]
        if any(low >= high for low, high in pairwise(thresholds)):
            raise ValueError(
                f"CostConfig.tiers must ascend strictly by above_prompt_tokens, got {thresholds}"
            )

    def band(self, prompt_tokens: int) -> CostConfig | ContextTier:
        """The rates a request with ``prompt_tokens`` of prompt pays: a tier, or these."""
        chosen: CostConfig | ContextTier = self
        for tier in self.tiers:
            if prompt_tokens > tier.above_prompt_tokens:
                chosen = tier
        return chosen


def _rates(band: CostConfig | ContextTier) -> dict[str, float]:
    return {
        "input": band.input,
        "output": band.output,
        "cache_read": band.cache_read,
        "cache_write": band.cache_write,
    }


@dataclass(slots=True, kw_only=True, frozen=True)
class CacheConfig:
    """Prompt-caching hints. ``session_key`` groups requests that share a prefix."""

    enabled: bool = True
    session_key: str | None = None


@dataclass(slots=True, kw_only=True, frozen=True)
class OpenAiCompat:
    """Quirks of OpenAI-compatible Chat Completions servers, one field per quirk."""

    # OpenAI's reasoning models reject `max_tokens`; most other vendors only know it.
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_completion_tokens"
    # Where the vendor streams reasoning text: DeepSeek/Qwen/Moonshot `reasoning_content`,
    # OpenRouter/Groq `reasoning` (+ `reasoning_details`), OpenAI none.
    reasoning_field: Literal["none", "reasoning_content", "reasoning"] = "none"
    # DeepSeek and Moonshot require earlier reasoning to be sent back with tool calls.
    replay_reasoning: bool = False
    # `reasoning_effort` is OpenAI's; several vendors reject the field outright.
    supports_reasoning_effort: bool = True
    # The highest effort the vendor accepts (e.g. some stop at "medium").
    max_reasoning_effort: ThinkingLevel = ThinkingLevel.HIGH
    # `stream_options.include_usage` asks for the usage chunk; older local servers reject it.
    supports_usage_in_streaming: bool = True
    # OpenAI reasoning models want the system prompt as a `developer` message.
    supports_developer_role: bool = False
    # `response_format: json_schema` for structured output.
    supports_structured_output: bool = True
    # `strict` in tool definitions; several vendors reject the field.
    supports_strict_tools: bool = False
    # DeepSeek's own toggle: `thinking: {type: enabled|disabled}`.
    thinking_toggle: bool = False
    # Responses API: send `include: ["reasoning.encrypted_content"]` and replay reasoning items.
    encrypted_reasoning: bool = False


@dataclass(slots=True, kw_only=True, frozen=True)
class AnthropicCompat:
    """Quirks of Anthropic Messages servers."""

    # Claude 4.6+ take `thinking: {type: "adaptive"}` + effort; older ones a token budget.
    adaptive_thinking: bool = False
    # Some gateways want `Authorization: Bearer` instead of `x-api-key`.
    bearer_auth: bool = False
    # Claude 4.5+ accept `output_config.format`; older models need a forced tool instead.
    native_structured_output: bool = False


@dataclass(slots=True, kw_only=True, frozen=True)
class GoogleCompat:
    """Quirks of Gemini and Vertex."""

    # Gemini 3 takes `thinkingLevel`; 2.5 takes `thinkingBudget`.
    thinking_level_field: bool = False


Compat = OpenAiCompat | AnthropicCompat | GoogleCompat


@dataclass(slots=True, kw_only=True)
class ModelConfig:
    """Everything needed to reach one model: protocol, vendor, id, endpoint, key, limits.

    ``base_url`` follows the vendor SDK's convention (Anthropic: the host; OpenAI-compatible:
    including ``/v1``). An empty ``api_key`` means "read it from the environment":
    ``key_variable`` (e.g. ``ANTHROPIC_API_KEY``, set by the presets), then
    ``YOAGENT_API_KEY`` / ``API_KEY``. ``cost`` prices usage; when ``None``, the
    process-wide price resolver is asked (see :func:`yoagent.core.provider.set_price_resolver`),
    which is off by default.
    """

    api: ApiProtocol
    provider: str
    id: str
    name: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    key_variable: str = ""
    """The environment variable this model's key lives in (empty: none of its own)."""
    headers: dict[str, str] = field(default_factory=dict[str, str], repr=False)
    context_window: int = 200_000
    max_tokens: int = 8_192
    reasoning: bool = False
    cost: CostConfig | None = None
    compat: Compat | None = None

    @classmethod
    def mock(cls, id: str = "mock-model") -> ModelConfig:
        """A config for tests with :class:`~yoagent.core.MockProvider`."""
        return cls(api=ApiProtocol.ANTHROPIC_MESSAGES, provider="mock", id=id)
