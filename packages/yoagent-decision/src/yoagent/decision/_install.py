"""One call each to install the gate, the guard and the advisor on an ``Agent`` or a
``SubAgentTool`` (anything with core's ``with_extension`` / ``with_tree_extension``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

from yoagent.core import Extension

from ._advisor import Advisor, Described
from ._gate import ToolGate
from ._guard import InputGuard
from ._model import DecisionModel


class _ExtensionHost(Protocol):
    def with_extension(self, extension: Extension) -> object: ...

    def with_tree_extension(self, extension: Extension) -> object: ...


_Host = TypeVar("_Host", bound=_ExtensionHost)


def _install(target: _Host, extension: Extension, tree: bool) -> _Host:
    if tree:
        target.with_tree_extension(extension)
    else:
        target.with_extension(extension)
    return target


def with_tool_gate(target: _Host, gate: ToolGate, *, tree: bool = False) -> _Host:
    """Judge every tool call of ``target``'s runs with ``gate`` (an ``Agent`` or a
    ``SubAgentTool``; returns it). The gate runs after ``target``'s other extensions,
    whenever they were installed; with ``tree=True`` it also judges the calls of every run
    they delegate, at any depth."""
    return _install(target, gate, tree)


def with_input_guard(target: _Host, guard: InputGuard, *, tree: bool = False) -> _Host:
    """Screen the prompt of each of ``target``'s runs with ``guard`` (returns ``target``).
    Raises ``ValueError`` for a guard with no checks, which would reject everything; with
    ``tree=True`` delegated runs' tasks are screened too."""
    guard.assert_has_checks()
    return _install(target, guard, tree)


def with_decision_model(
    target: _Host,
    model: DecisionModel,
    *,
    skills: Sequence[Described] = (),
    tree: bool = False,
) -> _Host:
    """Add an :class:`Advisor` on ``model`` to ``target``'s runs (returns ``target``): a
    skill hint among ``skills`` and, with 40 tools or more, a tool hint, noted on the
    model's requests. Advisory: it never blocks. It runs after ``target``'s other
    extensions. For other settings install ``Advisor(...)`` with ``with_extension``."""
    return _install(target, Advisor(model=model, skills=skills), tree)
