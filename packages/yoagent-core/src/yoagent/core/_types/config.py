"""Model configuration: which API, which model, and each protocol's quirks as data."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
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


@dataclass(slots=True, kw_only=True, frozen=True)
class CostConfig:
    """Prices in US dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


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
    including ``/v1``). An empty ``api_key`` means "read it from the provider's environment
    variable". ``cost`` prices usage; when ``None``, the process-wide price resolver is asked
    (see :mod:`yoagent.core.pricing`), which is off by default.
    """

    api: ApiProtocol
    provider: str
    id: str
    name: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
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
