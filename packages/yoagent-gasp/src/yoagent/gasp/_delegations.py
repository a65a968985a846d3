"""A recorded run and the runs it delegated: sub-agents' events mapped as runs of their own.

A sub-agent's events reach the top-level stream as ``SubAgentEvent``s tagged with the
delegating call's id and the delegated run's depth. Each delegated run is recorded as a
GASP run by the same table as a top-level one (:class:`~._mapping.RunMapper`), except
that its ``run.started`` is caused by the delegating call's ``tool.called`` (not a root),
its run node is ``derived_from`` that ``tool_call`` (it does not ``serve`` the goal
itself) and carries its ``depth``; the whole tree is committed with the top-level run.

Events carry no run id, so a delegated run is known by ``(depth, delegating call id)``,
its parent by the one running run one level up with that call open. When that does not
name exactly one run (call ids repeated across parallel delegations, which providers do
not do but scripted ones may), the recorder cannot tell whose events they are: it
records none of that key's events (a run already open under it ends ``unattributed``)
and says so once.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field

from yoagent.core import AgentEvent, AgentStart, SubAgentEvent, ToolExecutionEnd

from ._json import as_object
from ._mapping import Delegation, Entry, OpenCall, RunMapper
from .summary import args_json

logger = logging.getLogger("yoagent.gasp")

UNATTRIBUTED = "unattributed"
"""The outcome of a delegated run whose events could no longer be told apart."""

_Key = tuple[int, str]


def delegated_task(call: OpenCall) -> str:
    """What a delegated run was asked: the call's ``task`` argument (a sub-agent tool's),
    else its whole arguments as JSON."""
    fields = as_object(call.arguments)
    task = fields.get("task") if fields is not None else None
    if isinstance(task, str):
        return task
    try:
        return args_json(call.arguments)
    except (TypeError, ValueError):  # arguments a tool could not have taken either
        return json.dumps(str(call.arguments))


@dataclass(slots=True)
class RunTree(RunMapper):
    """The mapper of a top-level run, which also maps the runs it delegated."""

    _children: dict[_Key, RunMapper] = field(default_factory=dict[_Key, RunMapper])
    _ambiguous: set[_Key] = field(default_factory=set[_Key])

    def take(self, event: AgentEvent, ts: int) -> list[Entry]:
        """The entries one event of the top-level stream adds."""
        if isinstance(event, SubAgentEvent):
            # Before the held-reply check: a delegated run's events say nothing about
            # whether this run's failed reply is being retried.
            if self.run is None or self.finished:
                return []
            return self._delegated(event, ts)
        entries: list[Entry] = []
        if isinstance(event, ToolExecutionEnd) and self.run is not None and not self.finished:
            entries += self._end_delegated(self, 1, event.result.tool_call_id, ts)
        return entries + RunMapper.take(self, event, ts)

    def finish(self, ts: int, metadata: object = None) -> list[Entry]:
        """Close the delegated runs still open (deepest first), then this run."""
        entries: list[Entry] = []
        if self.run is not None and not self.finished:
            open_children = [child for child in self._children.values() if not child.finished]
            for child in sorted(open_children, key=_depth, reverse=True):
                entries += child.finish(ts)
        return entries + RunMapper.finish(self, ts, metadata)

    def _delegated(self, event: SubAgentEvent, ts: int) -> list[Entry]:
        key: _Key = (event.depth, event.tool_call_id)
        inner = event.event
        if isinstance(inner, AgentStart):
            return self._start_delegated(key, event.tool_name, ts)
        if key in self._ambiguous:
            return []
        child = self._children.get(key)
        if child is None or child.finished:
            return []
        entries: list[Entry] = []
        if isinstance(inner, ToolExecutionEnd):
            entries += self._end_delegated(child, event.depth + 1, inner.result.tool_call_id, ts)
        return entries + child.take(inner, ts)

    def _start_delegated(self, key: _Key, tool_name: str, ts: int) -> list[Entry]:
        depth, call_id = key
        current = self._children.get(key)
        if key in self._ambiguous or (current is not None and not current.finished):
            return self._lose_track(key, current, ts)
        parents: list[RunMapper] = (
            [self]
            if depth == 1
            else [m for (d, _), m in self._children.items() if d == depth - 1 and not m.finished]
        )
        calls = [
            (parent, parent.open_calls[call_id])
            for parent in parents
            if call_id in parent.open_calls and parent.open_calls[call_id].tool == tool_name
        ]
        if len(calls) != 1:
            unmatched = None if calls else f"no open {tool_name!r} call has that id"
            return self._lose_track(key, None, ts, unmatched)
        parent, call = calls[0]
        assert parent.run is not None
        child = RunMapper(
            self.actor,
            self.goal_id,
            delegated_task(call),
            self.summarize,
            delegation=Delegation(parent.run.run_id, call, depth),
            price=self.price,
        )
        self._children[key] = child
        return child.take(AgentStart(), ts)

    def _lose_track(
        self, key: _Key, current: RunMapper | None, ts: int, unmatched: str | None = None
    ) -> list[Entry]:
        """Stop recording ``key``'s events: they can no longer be told apart, or (when
        ``unmatched`` says why) no open call delegated them."""
        if key not in self._ambiguous:
            self._ambiguous.add(key)
            if unmatched is None:
                logger.warning(
                    "GASP: the sub-agent runs delegated by call %r at depth %d cannot be told "
                    "apart (the call id repeats); their events are not recorded",
                    key[1],
                    key[0],
                )
            else:
                logger.warning(
                    "GASP: the sub-agent run delegated by call %r at depth %d is not recorded: %s",
                    key[1],
                    key[0],
                    unmatched,
                )
        if current is None or current.finished:
            return []
        current.outcome = UNATTRIBUTED
        return self._finish_subtree(current, ts)

    def _end_delegated(self, parent: RunMapper, depth: int, call_id: str, ts: int) -> list[Entry]:
        """The delegating call ``call_id`` of ``parent`` ended: close its run if still open
        (a delegated run normally ends first)."""
        child = self._children.get((depth, call_id))
        call = parent.open_calls.get(call_id)
        if child is None or child.finished or call is None or child.delegation is None:
            return []
        if child.delegation.call is not call:
            return []  # the key is another run's: not this call's delegation
        return self._finish_subtree(child, ts)

    def _finish_subtree(self, root: RunMapper, ts: int) -> list[Entry]:
        """Finish ``root``'s open delegated runs (deepest first), then ``root``."""
        assert root.run is not None
        entries: list[Entry] = []
        for child in self._children.values():
            delegation = child.delegation
            if (
                not child.finished
                and delegation is not None
                and delegation.parent_run_id == root.run.run_id
            ):
                entries += self._finish_subtree(child, ts)
        return entries + root.finish(ts)


def _depth(mapper: RunMapper) -> int:
    return 0 if mapper.delegation is None else mapper.delegation.depth
