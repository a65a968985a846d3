"""The older hook knobs as extensions: each tool middleware, input filter and turn hook is
one link of its hook point's chain, keeping its own documented contract inside itself.

``RunSettings.tool_middleware`` / ``input_filters`` / ``turn_hooks`` are shorthands: the
loop starts one of these per entry, the middleware and filters before every extension,
the turn hooks after them all (their notes come last). A knob never fails its run: a
middleware that raises is a denial carrying its error, a filter that raises rejects the
input, a turn hook that raises adds no notes (each logged).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import cast

from yoagent.core._logging import logger

from .basic import (
    Allow,
    Defer,
    Deny,
    FilterResult,
    InputFilter,
    MiddlewareLike,
    Modify,
    Pass,
    Reject,
    ToolCallRequest,
    ToolDecision,
    TurnContext,
    TurnHook,
    Warn,
    middleware_callable,
    resolve,
)
from .extension import Extension, ModelVerdict, Proceed, RunContext, RunHooks


class _Middleware(RunHooks):
    def __init__(
        self, call: Callable[[ToolCallRequest], ToolDecision | Awaitable[ToolDecision]]
    ) -> None:
        self._call = call

    async def before_tool(self, request: ToolCallRequest) -> ToolDecision:
        try:
            decision = await resolve(self._call(request))
        except Exception as error:  # a raising middleware is a denial, never a crash
            logger.exception("tool middleware failed on %s", request.tool_call_id)
            return Deny(f"middleware failed: {type(error).__name__}: {error}")
        # Anything but a decision lets the call run, as it always did.
        return decision if isinstance(cast(object, decision), Deny | Modify | Defer) else Allow()


class _InputFilter(RunHooks):
    def __init__(self, check: InputFilter) -> None:
        self._check = check

    async def on_input(self, text: str) -> FilterResult:
        try:
            verdict = await resolve(self._check(text))
        except Exception as error:  # it could not vouch for the input: refused
            logger.exception("input filter failed")
            return Reject(f"input filter failed: {type(error).__name__}: {error}")
        return verdict if isinstance(verdict, Reject | Warn) else Pass()  # anything else passes


class _TurnHook(RunHooks):
    def __init__(self, hook: TurnHook) -> None:
        self._hook = hook

    async def before_model(self, turn: TurnContext) -> ModelVerdict:
        try:
            return Proceed(notes=tuple(await resolve(self._hook(turn))))
        except Exception:  # a broken hook must not end the run; it adds nothing
            logger.exception("turn hook failed")
            return Proceed()


class KnobExtension(Extension):
    """One knob's entry as an extension. Its hooks contain their own failures and keep
    no state: every run it starts shares them."""

    def __init__(self, name: str, hooks: RunHooks) -> None:
        self.name = name
        self.hooks = hooks

    def start_run(self, run: RunContext) -> RunHooks:
        return self.hooks


def knob_extensions(
    tool_middleware: Sequence[MiddlewareLike],
    input_filters: Sequence[InputFilter],
    turn_hooks: Sequence[TurnHook],
) -> tuple[tuple[Extension, ...], tuple[Extension, ...]]:
    """The knobs' extensions: those that go before every extension (input filters, tool
    middleware), and those that go after them all (turn hooks)."""
    leading = (
        *(
            KnobExtension(f"input_filters[{i}]", _InputFilter(f))
            for i, f in enumerate(input_filters)
        ),
        *(
            KnobExtension(f"tool_middleware[{i}]", _Middleware(middleware_callable(m)))
            for i, m in enumerate(tool_middleware)
        ),
    )
    trailing = tuple(
        KnobExtension(f"turn_hooks[{i}]", _TurnHook(hook)) for i, hook in enumerate(turn_hooks)
    )
    return leading, trailing
