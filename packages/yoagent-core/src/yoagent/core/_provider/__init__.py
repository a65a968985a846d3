"""Reaching a model: the provider protocol, the registry, keys, prices, the mock."""
