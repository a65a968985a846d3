"""yoagent.providers: the Anthropic Messages, OpenAI Chat Completions and Bedrock protocols.

Every provider registers under the ``yoagent.providers`` entry-point group, so
``Agent.from_config`` finds them; :mod:`yoagent.providers.models` holds vendor presets.
"""

from . import models
from .anthropic import AnthropicProvider
from .bedrock import BedrockProvider
from .openai_completions import OpenAiCompletionsProvider

__all__ = ["AnthropicProvider", "BedrockProvider", "OpenAiCompletionsProvider", "models"]
