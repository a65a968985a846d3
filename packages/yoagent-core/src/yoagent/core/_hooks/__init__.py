"""Hooks into a run: tool middleware, input filters, turn hooks."""
