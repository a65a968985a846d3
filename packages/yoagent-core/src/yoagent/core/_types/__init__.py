"""Plain data: model configs, content, messages, events, errors, spend, limits."""
