"""What ``referencing``'s ``$id`` crawl of an OpenAPI 3.1 document costs, counted before it runs.

``Registry.crawl`` visits a schema once for every path that leads to it. JSON has one
path per schema, but a YAML alias puts one schema in many places: a 1.4 KB document whose
``components/schemas`` nest aliases two wide took the crawl 12.7 s, four times more per
two levels, and an alias that holds itself sent it round forever. This survey walks the
same subresources the crawl walks (the specification's own ``subresources_of`` and
``$schema`` detection), but each distinct schema once, so it costs what the text costs;
it counts the paths, finds a loop, and says which schemas hold an identifier at all. The
crawl then runs only over those, and only when aliases do not make it walk more than
:data:`MAX_ALIAS_VISITS` places beyond the distinct schemas it covers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from referencing import Specification

from ._errors import OpenApiError

MAX_ALIAS_VISITS: Final = 100_000
"""How many visits YAML aliases may add to the ``$id`` crawl (≈ 0.7 s of crawling)."""

_CAP: Final = 4 * MAX_ALIAS_VISITS  # counts stop growing here: past it the answer is known

_Key = tuple[int, int]
_Child = tuple[Any, "Specification[Any]"]


@dataclass(slots=True)
class _Node:
    visits: int
    """Places the crawl visits below and at this schema (one per path), up to ``_CAP``."""
    identified: bool
    """This schema or one below it has a ``$id``, ``$anchor`` or ``$dynamicAnchor``."""


_AROUND: Final = _Node(_CAP, identified=False)
"""What a schema's way back into itself counts: endless visits; its identifiers are
counted where the loop starts."""


class Survey:
    """The crawl's walk over some schemas, each distinct schema (and dialect) seen once."""

    def __init__(self, roots: Iterable[tuple[Any, Specification[Any]]]) -> None:
        self._nodes: dict[_Key, _Node] = {}
        self._roots: list[_Key] = []
        self.cyclic = False
        """Some schema holds itself: the crawl of it would never end."""
        for contents, specification in roots:
            self._roots.append(self._walk(contents, specification))

    def identified(self, index: int) -> bool:
        """Whether the ``index``-th root holds an identifier the crawl would register."""
        return self._nodes[self._roots[index]].identified

    @property
    def visits(self) -> int:
        """Places the crawl visits from all the roots (up to a cap far past the bound)."""
        return min(_CAP, sum(self._nodes[root].visits for root in self._roots))

    @property
    def distinct(self) -> int:
        """Distinct schemas (per dialect) the crawl reaches."""
        return len(self._nodes)

    def _walk(self, contents: Any, specification: Specification[Any]) -> _Key:
        """Survey the schemas from ``contents`` on, depth first without recursion."""
        root: _Key = (id(contents), id(specification))
        on_path: set[_Key] = set()
        # (schema, its dialect, its children once they are being surveyed)
        pending: list[tuple[Any, Specification[Any], list[_Child] | None]] = [
            (contents, specification, None)
        ]
        while pending:
            node, spec, children = pending.pop()
            key: _Key = (id(node), id(spec))
            if children is not None:
                on_path.discard(key)
                self._nodes[key] = self._summary(node, spec, children)
                continue
            if key in self._nodes:
                continue
            if key in on_path:  # a schema inside itself: only a recursive YAML alias does that
                self.cyclic = True
                continue
            on_path.add(key)
            children = [(child, spec.detect(child)) for child in spec.subresources_of(node)]
            pending.append((node, spec, children))
            pending.extend((child, child_spec, None) for child, child_spec in children)
        return root

    def _summary(self, node: Any, spec: Specification[Any], children: list[_Child]) -> _Node:
        visits = 1
        identified = spec.id_of(node) is not None or any(True for _ in spec.anchors_in(node))
        for child, child_spec in children:
            below = self._nodes.get((id(child), id(child_spec)), _AROUND)
            visits = min(_CAP, visits + below.visits)
            identified = identified or below.identified
        return _Node(visits, identified)


def check_crawl(survey: Survey) -> None:
    """Refuse a crawl that would never end, or that aliases would make visit more than
    :data:`MAX_ALIAS_VISITS` places beyond the distinct schemas it covers."""
    if survey.cyclic:
        raise OpenApiError(
            "the document: a schema holds itself (a recursive YAML alias), which JSON "
            "cannot express"
        )
    if survey.visits - survey.distinct > MAX_ALIAS_VISITS:
        raise OpenApiError(
            f"the document: YAML aliases make the $id crawl visit more than "
            f"{MAX_ALIAS_VISITS} schemas beyond its {survey.distinct} distinct ones "
            "(write a shared schema once and $ref it)"
        )
