"""yoagent.providers: the Anthropic Messages and OpenAI Chat Completions wire protocols.

Both providers register under the ``yoagent.providers`` entry-point group, so
``Agent.from_config`` finds them; :mod:`yoagent.providers.models` holds vendor presets.
"""

from . import models
from .anthropic import AnthropicProvider
from .openai_completions import OpenAiCompletionsProvider

__all__ = ["AnthropicProvider", "OpenAiCompletionsProvider", "models"]
