"""Removing secrets from text: the one scrubber, for whole text and for text in pieces.

A :class:`Scrubber` knows values (a key, a password), fields (where a short value shows
as one: ``api_key=ab``), URLs and headers (their secret pieces, :mod:`.secrets`) and the
key shapes. It replaces, scanning left to right, the longest secret starting at the
earliest place any starts, with every secret overlapping it, as one marker; a field or a
``Bearer`` token keeps what names it. A
:class:`StreamScrubber` does the same to text that arrives in pieces: it holds back only
what a secret still arriving could be part of, so what it emits, joined, is exactly
``scrub`` of the whole text, and never a prefix of a secret.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Final, NamedTuple, cast
from urllib.parse import quote, quote_plus

from .secrets import (
    KEY_SHAPES,
    MIN_SECRET_LENGTH,
    REDACTED,
    Headers,
    SecretField,
    header_fields,
    header_pairs,
    header_secrets,
    url_secrets,
)

# Around a field's value: what may not come right before the field's name, and what may
# not follow the value (it would be a longer value, not this one).
_NOT_BEFORE: Final = r"(?<![\w.~%-])"
_NOT_AFTER: Final = r"(?![\w.~%+/=:@!$*-])"
_CONTEXT: Final = 1
"""Characters before a scan's start that its patterns look at (``\\b``, ``_NOT_BEFORE``)."""
_SHAPE_START: Final = 32
"""The longest a key shape's bounded start can be: ``bearer``, 16 spaces, 8 characters."""


def _forms(value: str) -> set[str]:
    """``value`` as written and percent-encoded (a key in a query string)."""
    encoded = _utf8(value)
    return {value, quote(encoded, safe=""), quote_plus(encoded)}


def _utf8(value: str) -> bytes:
    """``value``'s bytes, a lone surrogate included: an undecodable OS byte (an environment
    value that was not UTF-8) as that byte, any other as UTF-8 would write it."""
    try:
        return value.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return value.encode("utf-8", "surrogatepass")


def _either(forms: Iterable[str]) -> str:
    return "|".join(re.escape(form) for form in sorted(forms, key=lambda f: (-len(f), f)))


def _collect(
    values: Iterable[str | None],
    fields: Iterable[SecretField],
    urls: Iterable[str],
    headers: Headers,
) -> tuple[frozenset[str], frozenset[SecretField]]:
    """The values to replace everywhere and the fields of shorter ones, from every source."""
    found = [value for value in values if value]
    field_list = list(fields)
    for url in urls:
        url_values, url_fields = url_secrets(url)
        found += url_values
        field_list += url_fields
    pairs = header_pairs(headers)
    found += header_secrets(pairs)
    field_list += header_fields(pairs)
    found += [value for _, _, value in field_list]  # a long one goes everywhere
    long_values = frozenset(
        stripped for value in found if len(stripped := value.strip()) >= MIN_SECRET_LENGTH
    )
    # A longer value is replaced wherever it occurs, its field included.
    short_fields = frozenset(field for field in field_list if 0 < len(field[2]) < MIN_SECRET_LENGTH)
    return long_values, short_fields


class _Rule:
    """One pattern: a kept ``lead``, then the secret it replaces, and the characters a
    secret that reaches the end of the text so far runs on with (``None``: it may change
    in any way with more text, as a value still arriving or a lookahead may)."""

    __slots__ = ("pattern", "run", "source")

    def __init__(self, lead: str, secret: str, run: str = "") -> None:
        self.source = f"(?:{lead})(?:{secret})"
        self.pattern = re.compile(f"(?P<lead>{lead})(?:{secret})")
        self.run = re.compile(f"{run}*") if run else None


Runs = tuple[re.Pattern[str], ...] | None
"""How a secret that may not have ended yet goes on: ``()`` it ended before the end of
the text; runs: it reaches that end and grows over any of them; ``None``: it reaches that
end and may change in any way."""


class _Held(NamedTuple):
    """A secret a stream holds back, found at the start of what it holds: where its
    replaced part starts and how far it is known to run (offsets from its start), and how
    it may still grow. Only one whose start and extent nothing still to come can undo."""

    secret: int
    end: int
    runs: tuple[re.Pattern[str], ...]


class Scrubber:
    """Known secrets, and the text with every one of them replaced by the marker.

    ``values`` are replaced wherever they occur (those of :data:`MIN_SECRET_LENGTH`+
    characters, as written and percent-encoded); each of ``fields`` where its value
    follows its name and separator and ends there, whatever its length. ``urls`` add
    their user name and password, each path segment and query value that looks like a
    key (:func:`looks_like_key`), each credential-named query parameter, and the whole
    URL when it holds one of these; ``headers`` add the values of credential headers
    (:func:`header_secrets`), each in its field too. With ``key_shapes`` (the default),
    any token shaped like a well-known key goes as well.
    ``key_shapes=False`` is for text that is read back and compared, such as a test
    cassette: a shape matched there would differ from the request replayed against it.

    A scrubber is immutable and safe to share between threads; :meth:`extended` makes a
    larger one. It is true when it knows a value or a field (the shapes aside).
    """

    __slots__ = (
        "_any",
        "_fields",
        "_hold",
        "_key_shapes",
        "_marker",
        "_rules",
        "_values",
    )

    def __init__(
        self,
        values: Iterable[str | None] = (),
        *,
        fields: Iterable[SecretField] = (),
        urls: Iterable[str] = (),
        headers: Headers = (),
        key_shapes: bool = True,
        marker: str = REDACTED,
    ) -> None:
        self._values, self._fields = _collect(values, fields, urls, headers)
        self._key_shapes = key_shapes
        self._marker = marker
        rules: list[_Rule] = []
        longest = 0
        if self._values:
            forms = {form for value in self._values for form in _forms(value)}
            rules.append(_Rule("", _either(forms)))
            longest = max(len(form) for form in forms)
        for name, separator, value in sorted(self._fields):
            names, shown = _forms(name), _forms(value)
            lead = _either(form + separator for form in names)
            rules.append(_Rule(f"{_NOT_BEFORE}(?i:{lead})", f"(?:{_either(shown)}){_NOT_AFTER}"))
            span = max(map(len, names)) + len(separator) + max(map(len, shown))
            longest = max(longest, span)
        if key_shapes:
            rules.extend(_Rule(lead, secret, run) for lead, secret, run in KEY_SHAPES)
            longest = max(longest, _SHAPE_START)
        self._rules = tuple(rules)
        self._any = re.compile("|".join(rule.source for rule in rules)) if rules else None
        # A match starting this far from the end of the text seen so far is final (its
        # lookahead included), unless it reaches that end (a key shape still growing); a
        # secret overlapping the end of another starts within this distance of that end.
        self._hold = longest + 1

    def __bool__(self) -> bool:
        return bool(self._values or self._fields)

    def __repr__(self) -> str:
        shapes = ", key shapes" if self._key_shapes else ""
        return f"<Scrubber: {len(self._values)} values, {len(self._fields)} fields{shapes}>"

    @property
    def marker(self) -> str:
        """What replaces a secret."""
        return self._marker

    def extended(
        self,
        values: Iterable[str | None] = (),
        *,
        fields: Iterable[SecretField] = (),
        urls: Iterable[str] = (),
        headers: Headers = (),
    ) -> Scrubber:
        """A scrubber that also knows these secrets (``self`` when they add nothing new)."""
        more_values, more_fields = _collect(values, fields, urls, headers)
        if more_values <= self._values and more_fields <= self._fields:
            return self
        return Scrubber(
            self._values | more_values,
            fields=self._fields | more_fields,
            key_shapes=self._key_shapes,
            marker=self._marker,
        )

    def scrub(self, text: str) -> str:
        """``text`` with every secret replaced by the marker."""
        if self._any is None:
            return text
        spans, _, _ = self._spans(text, 0, final=True)
        return self._render(text, 0, len(text), spans)

    def scrub_pieces(self, pieces: Sequence[str]) -> list[str]:
        """``pieces`` of one text, scrubbed as that text and kept as its pieces.

        For a text that has arrived in full (a recorded stream's deltas): joined, the
        result is ``scrub`` of the joined pieces. Each piece keeps its boundaries where no
        secret crosses them; a secret goes, as the marker, in the piece it starts in, and
        its rest from the pieces it continues into. Pieces that hold no secret come back
        unchanged.
        """
        if self._any is None:
            return list(pieces)
        text = "".join(pieces)
        spans, _, _ = self._spans(text, 0, final=True)
        if not spans:
            return list(pieces)
        out: list[str] = []
        start = done = 0  # where this piece starts; how much of the text is given out
        remaining = iter(spans)
        span = next(remaining, None)
        for piece in pieces:
            end = start + len(piece)
            taken: list[tuple[int, int]] = []
            while span is not None and span[0] < end:
                taken.append(span)
                span = next(remaining, None)
            stop = max(end, taken[-1][1]) if taken else end
            out.append(self._render(text, max(done, start), max(stop, done), taken))
            done = max(done, stop)
            start = end
        return out

    def json(self, value: Any) -> Any:
        """A copy of the JSON value ``value`` with every string scrubbed, keys included."""
        if self._any is None:
            return value
        return self._walk(value)

    def stream(self) -> StreamScrubber:
        """A scrubber for one text that arrives in pieces."""
        return StreamScrubber(self)

    def _walk(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, dict):
            items = cast(dict[str, Any], value).items()
            return {self.scrub(key): self._walk(item) for key, item in items}
        if isinstance(value, list):
            return [self._walk(item) for item in cast(list[Any], value)]
        return value

    def _spans(
        self, text: str, start: int, *, final: bool, held: _Held | None = None
    ) -> tuple[list[tuple[int, int]], int, _Held | None]:
        """The spans of ``text`` from ``start`` to replace, as far as it is decided, where
        that ends, and the secret held back there, when it is known how it goes on.

        A span runs from the longest secret starting at the earliest place any starts,
        over every secret overlapping it. With ``final``, all of the text is decided.
        Otherwise a span is taken only when nothing still to come can change it: it starts
        before the last ``_hold`` characters and ends before them; the text up to the
        first place a secret could still begin is decided plain. ``held`` is what an
        earlier call held back at ``start``: it is taken up where it was left, not
        matched again (a long key-shaped token would make that quadratic).
        """
        pattern = self._any
        assert pattern is not None
        spans: list[tuple[int, int]] = []
        position = start
        limit = len(text) if final else len(text) - self._hold
        while position < len(text):
            if held is not None:  # decided when it was held back
                begin, secret, end, runs = start, start + held.secret, start + held.end, held.runs
                decided, held = True, None
            else:
                found = pattern.search(text, position)
                if found is None or found.start() >= limit:
                    break
                begin = found.start()
                end, secret, runs = self._longest(text, begin)
                decided = begin < limit  # nothing still to come can start earlier or be longer
            secret, end, sure_end, sure_runs = self._merged(text, begin, secret, end, runs)
            if not final and end > limit:
                keep = _Held(secret - begin, sure_end - begin, sure_runs) if decided else None
                return spans, begin, keep
            spans.append((secret, end))
            position = end
        return spans, len(text) if final else max(position, limit), None

    def _render(self, text: str, start: int, stop: int, spans: list[tuple[int, int]]) -> str:
        """``text[start:stop]`` with each span (inside it, or starting inside it) replaced."""
        out: list[str] = []
        position = start
        for secret, end in spans:
            out.append(text[position:secret])
            out.append(self._marker)
            position = end
        out.append(text[position:stop])
        return "".join(out)

    def _longest(self, text: str, begin: int) -> tuple[int, int, Runs]:
        """Where the longest secret starting at ``begin`` ends, where the part to replace
        starts (after the shortest kept lead of those starting there: a value that holds
        ``Bearer`` goes whole), and how it may go on (:data:`Runs`)."""
        end, secret = begin, len(text)
        reaching: list[re.Pattern[str] | None] = []
        for rule in self._rules:
            match = rule.pattern.match(text, begin)
            if match is None:
                continue
            end, secret = max(end, match.end()), min(secret, match.end("lead"))
            if match.end() == len(text):
                reaching.append(rule.run)
        return end, secret, _runs(reaching) if end == len(text) else ()

    def _merged(
        self, text: str, begin: int, secret: int, end: int, runs: Runs
    ) -> tuple[int, int, int, tuple[re.Pattern[str], ...]]:
        """Where the part to replace of the secret at ``begin`` starts and where it ends
        once it has grown over its runs and taken in every secret overlapping it (one
        starting in its kept lead replaces from its own start); and how far it surely
        runs, whatever text follows, with the runs it grows by from there.

        A secret that overlaps the span's end starts within ``_hold`` characters of it
        (a value or a field is shorter; a key shape's run never outlasts another's), and
        a lead is shorter too, so only that much is searched: a long token costs no more
        than a short one.
        """
        pattern = self._any
        assert pattern is not None
        position = begin + 1
        sure: tuple[int, tuple[re.Pattern[str], ...]] = (end, runs or ())
        while True:
            if runs:
                grown = [(run, _grown(run, text, end)) for run in runs]
                end = max(stop for _, stop in grown)
                runs = tuple(run for run, stop in grown if stop == len(text))
            if runs is not None:  # nothing still to come can undo it
                sure = (end, runs)
            found = pattern.search(
                text, position if position < secret else max(position, end - self._hold)
            )
            if found is None or found.start() >= end:
                return secret, end, *sure
            inner_end, inner_secret, inner_runs = self._longest(text, found.start())
            secret = min(secret, inner_secret)
            if inner_end > end:
                end, runs = inner_end, inner_runs
            elif inner_end == end == len(text):
                runs = None if runs is None or inner_runs is None else runs + inner_runs
            position = found.start() + 1


def _grown(run: re.Pattern[str], text: str, end: int) -> int:
    """Where a secret ending at ``end`` ends once it has grown over ``run``."""
    match = run.match(text, end)  # a starred class: it matches, if only nothing
    return end if match is None else match.end()


def _runs(reaching: list[re.Pattern[str] | None]) -> Runs:
    """How secrets reaching the end of the text go on: over their runs, or, if any has
    none, in a way only more text will tell."""
    found: list[re.Pattern[str]] = []
    for run in reaching:
        if run is None:
            return None
        found.append(run)
    return tuple(found)


class StreamScrubber:
    """Scrubs one text that arrives in pieces: :meth:`feed` each piece, then :meth:`flush`.

    What it gives out never holds a prefix of a secret it may still complete: it holds
    back the last characters a secret could span (the longest value or field, or a
    key-shaped token until it ends). Joined, what :meth:`feed` and :meth:`flush` return
    equals :meth:`Scrubber.scrub` of the joined pieces.

    A growing key-shaped token is followed by its run alone and held as its lead and last
    characters: linear in the text (a 200k-character token in 20-character pieces takes
    ≈ 0.1 s).
    """

    __slots__ = ("_context", "_held", "_pending", "_scrubber")

    def __init__(self, scrubber: Scrubber) -> None:
        self._scrubber = scrubber
        self._pending = ""
        self._context = ""
        self._held: _Held | None = None

    @property
    def held(self) -> int:
        """How many characters are held back, waiting for more text."""
        return len(self._pending)

    def feed(self, piece: str) -> str:
        """The scrubbed text that ``piece`` lets out (possibly empty)."""
        if self._scrubber._any is None:  # pyright: ignore[reportPrivateUsage]
            return piece
        return self._take(self._pending + piece, final=False)

    def flush(self) -> str:
        """The rest, scrubbed: the text has ended."""
        if not self._pending:
            return ""
        return self._take(self._pending, final=True)

    def _take(self, pending: str, *, final: bool) -> str:
        text = self._context + pending
        scrubber, start = self._scrubber, len(self._context)
        spans, stop, held = scrubber._spans(  # pyright: ignore[reportPrivateUsage]
            text, start, final=final, held=self._held
        )
        self._context = text[max(0, stop - _CONTEXT) : stop]
        self._pending = text[stop:]
        self._held = held
        if held is not None and held.runs:
            # A token still growing is replaced from its secret on, whatever follows: keep
            # its lead, and its end, where a secret overlapping it would start.
            keep = scrubber._hold  # pyright: ignore[reportPrivateUsage]
            rest = len(self._pending) - keep
            if rest - held.secret > keep:
                self._pending = self._pending[: held.secret] + self._pending[rest:]
                self._held = held._replace(end=held.end - (rest - held.secret))
        return scrubber._render(text, start, stop, spans)  # pyright: ignore[reportPrivateUsage]
