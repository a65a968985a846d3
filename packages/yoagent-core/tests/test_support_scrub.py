"""The floor's scrubber: one policy for values, fields, URL pieces, headers and key shapes,
the same for whole text and for text that arrives in pieces."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from yoagent.core.support import (
    MIN_SECRET_LENGTH,
    REDACTED,
    SECRET_VARIABLE_PATTERNS,
    Scrubber,
    header_secrets,
    is_secret_variable,
    looks_like_key,
)
from yoagent.core.support import is_credential_name as is_credential_header

KEY = "sk-planted-0123456789abcdef"
PASSWORD = "hunter2-long"
SCRUBBER = Scrubber(
    [KEY, PASSWORD],
    fields=[("api_key", "=", "ab")],
    urls=["https://u:pw-0123456789@h.example/v1?token=zz"],
)
# Pieces that make secrets, near-misses and field leads when joined at random.
PIECES = [
    KEY,
    PASSWORD,
    KEY[:9],
    PASSWORD[:5],
    "api_key=ab",
    "api_key=",
    "Bearer abcdefghijk",
    "bearer ",
    "sk-ant-",
    "sk-",
    "AKIAABCDEFGHIJKLMNOP",
    "token=zz",
    "pw-0123456789",
    "a",
    "b",
    " ",
    "=",
    "-",
    "0123456789",
    "\n",
]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


# --- whole text ---------------------------------------------------------------------------


def test_the_minimum_length_is_eight_and_a_long_field_value_goes_everywhere() -> None:
    assert MIN_SECRET_LENGTH == 8
    scrubber = Scrubber(fields=[("api_key", "=", "long-enough-value")])
    assert scrubber.scrub("echo long-enough-value") == "echo [redacted]"


def test_the_longest_secret_starting_first_wins() -> None:
    scrubber = Scrubber(["abcdefgh", "abcdefgh-longer"])
    assert scrubber.scrub("x abcdefgh-longer y abcdefgh") == "x [redacted] y [redacted]"


def test_key_shapes_go_even_unnamed_and_a_bearer_keeps_its_scheme() -> None:
    text = (
        "keys sk-ant-abcdefghijk, sk-0123456789abcdefXY, gsk_0123456789abcdefXY, "
        "xai-0123456789abcdefXY, AKIAABCDEFGHIJKLMNOP; Authorization: Bearer eyJ0.eyJz.sig_1"
    )
    assert Scrubber().scrub(text) == (
        "keys [redacted], [redacted], [redacted], [redacted], [redacted]; "
        "Authorization: Bearer [redacted]"
    )
    assert Scrubber().scrub("sk-learn and task-0123456789abcdefgh and AKIA1") == (
        "sk-learn and task-0123456789abcdefgh and AKIA1"
    )
    assert Scrubber(key_shapes=False).scrub(text) == text


def test_the_marker_can_be_a_callers_own() -> None:
    scrubber = Scrubber([KEY], marker="[REDACTED]", key_shapes=False)
    assert scrubber.marker == "[REDACTED]"
    assert scrubber.scrub(f"key {KEY}") == "key [REDACTED]"


def test_a_short_credential_query_value_goes_in_its_field_and_percent_decoded() -> None:
    scrubber = Scrubber(urls=["https://h/x?token=s3cret&sig=a%2Bb%2Bc%2Bd%2Be"])
    assert scrubber.scrub("retry /x?token=s3cret") == "retry /x?token=[redacted]"
    assert scrubber.scrub("sig a+b+c+d+e and s3cret alone") == "sig [redacted] and s3cret alone"


def test_a_short_credential_header_value_goes_where_it_stands_as_its_field() -> None:
    short = Scrubber(headers={"Authorization": "Bearer k1", "x-api-key": "k2"})
    assert short.scrub("sent: Bearer k1, bearer k1, x-api-key: k2; k1 k2 stay") == (
        "sent: [redacted], bearer [redacted], x-api-key: [redacted]; k1 k2 stay"
    )


@pytest.mark.parametrize(
    ("piece", "keyish"),
    [
        ("v1", False),
        ("api.json", False),
        ("gpt-4o-mini", False),
        ("completions", False),
        ("2024-06-01", False),
        ("sk-abcdef123456", True),
        ("k3y-0987654321", True),
        ("AbCdEfGhIjKlMnOpQr", True),
        ("sk-ant-abcdefghijk", True),
    ],
)
def test_what_looks_like_a_key(piece: str, keyish: bool) -> None:
    assert looks_like_key(piece) is keyish


def test_json_is_scrubbed_in_keys_and_values_and_numbers_stay_numbers() -> None:
    scrubber = Scrubber(["abcdefgh", "12345678"])
    assert scrubber.json({"abcdefgh": ["x abcdefgh y", 1, None], "n": 12345678}) == {
        REDACTED: [f"x {REDACTED} y", 1, None],
        "n": 12345678,
    }


def test_extended_adds_secrets_and_returns_itself_when_nothing_is_new() -> None:
    base = Scrubber([KEY], key_shapes=False, marker="#")
    assert base.extended([KEY, "short"]) is base
    grown = base.extended([PASSWORD], urls=["https://h/x?token=zz"])
    assert grown.scrub(f"{KEY} {PASSWORD} token=zz") == "# # token=#"
    assert base.scrub(PASSWORD) == PASSWORD


def test_a_scrubber_knowing_nothing_is_false_and_changes_nothing_but_shapes() -> None:
    assert not Scrubber()
    assert not Scrubber(["short", None, ""])
    assert Scrubber([KEY])
    assert Scrubber(key_shapes=False).scrub(f"{KEY} text") == f"{KEY} text"
    assert KEY not in repr(Scrubber([KEY]))


@given(texts)
def test_no_value_survives_scrubbing(text: str) -> None:
    """Invariant: no configured value of the minimum length or more is left in the output."""
    out = SCRUBBER.scrub(text)
    assert KEY not in out and PASSWORD not in out and "pw-0123456789" not in out


def test_overlapping_secrets_are_replaced_as_one() -> None:
    """Scanning from the end of one secret would let out the tail of a secret overlapping it."""
    assert Scrubber(["abcdefgh12", "gh12345678"]).scrub("x abcdefgh12345678 y") == (
        "x [redacted] y"
    )
    value = "prefix-value-sk-"  # a known value running into a key shape
    assert Scrubber([value]).scrub(f"{value}abcdefghijklmnopqrstuvwxyz!") == "[redacted]!"
    # one starting inside a kept lead is replaced from its own start
    assert Scrubber(["rer token-1234"]).scrub("Bearer token-12345678 x") == "Bea[redacted] x"
    # one that merely touches the next stays its own
    assert Scrubber(["abcdefgh", "12345678"]).scrub("abcdefgh12345678") == ("[redacted][redacted]")


def _covered(text: str, values: list[str]) -> str:
    """The oracle: ``text`` with each run of overlapping occurrences of ``values`` as one
    marker."""
    spans = sorted(
        (start, start + len(value))
        for value in values
        for start in range(len(text))
        if text.startswith(value, start)
    )
    merged: list[list[int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out, position = [], 0
    for start, end in merged:
        out += [text[position:start], REDACTED]
        position = end
    return "".join([*out, text[position:]])


@settings(max_examples=300)
@given(
    st.text("ab1", min_size=8, max_size=60),
    st.lists(st.tuples(st.integers(0, 60), st.integers(8, 20)), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=60), max_size=6),
)
def test_every_character_of_every_secret_is_replaced_whole_or_in_pieces(
    text: str, picks: list[tuple[int, int]], cuts: list[int]
) -> None:
    """Invariant: however the secrets overlap, no character of any occurrence is let out:
    each run of overlapping occurrences becomes one marker, in whole text and in pieces."""
    values = [text[start : start + length] for start, length in picks]
    values = [value for value in values if len(value) >= MIN_SECRET_LENGTH]
    scrubber = Scrubber(values, key_shapes=False)
    whole = scrubber.scrub(text)
    assert whole == _covered(text, values)
    points = sorted(min(cut, len(text)) for cut in cuts)
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert _streamed(scrubber, pieces) == whole
    assert "".join(scrubber.scrub_pieces(pieces)) == whole


# Moved from yoagent-openapi's and yoagent-mcp's tests with their copies of the scrubber.


def test_only_credential_named_headers_hold_secrets() -> None:
    headers = {
        "X-Api-Version": "2",
        "Accept": "application/json",
        "User-Agent": "pets-client/1.0",
        "Authorization": "Token tok-0123456789",
        "X-Api-Key": "key-0123456789",
        "Cookie": "sid=sess-0123456789; theme=dark",
    }

    assert [name for name in headers if is_credential_header(name)] == [
        "Authorization",
        "X-Api-Key",
        "Cookie",
    ]
    assert sorted(header_secrets(headers)) == sorted(
        [
            "Token tok-0123456789",
            "tok-0123456789",
            "key-0123456789",
            "sid=sess-0123456789; theme=dark",
            "sess-0123456789",
            "dark",
        ]
    )


def test_a_short_value_is_scrubbed_only_where_it_stands_as_its_field() -> None:
    secrets = Scrubber(["ab"], fields=[("api_key", "=", "ab"), ("Bearer", " ", "ab")])

    text = "HTTP 200 ab ?api_key=ab&x=1 api_key=abc x-api_key=ab bearer ab Bearer abc"
    assert secrets.scrub(text) == (
        "HTTP 200 ab ?api_key=[redacted]&x=1 api_key=abc x-api_key=ab bearer [redacted] Bearer abc"
    )


def test_a_long_value_is_scrubbed_everywhere_in_every_encoding() -> None:
    secrets = Scrubber(["pk/with+plus 12"])

    text = "pk/with+plus 12 | pk%2Fwith%2Bplus%2012 | pk%2Fwith%2Bplus+12"
    assert secrets.scrub(text) == "[redacted] | [redacted] | [redacted]"
    assert Scrubber(["1234567"]).scrub("id 1234567") == "id 1234567"  # 7 characters: kept


def test_every_long_piece_of_the_url_is_scrubbed_and_a_key_free_path_stays_readable() -> None:
    url = "https://alice:hunter2hunter2@h.example/v1/sk-abcdef123456/mcp?api_key=k3y-0987654321&x=1"
    secrets = Scrubber(urls=[url])
    text = f"POST {url} failed; key sk-abcdef123456; q k3y-0987654321; pw hunter2hunter2"
    scrubbed = secrets.scrub(text)
    for secret in ("sk-abcdef123456", "k3y-0987654321", "hunter2hunter2", "api_key=k3y"):
        assert secret not in scrubbed
    assert scrubbed.startswith("POST [redacted] failed; key [redacted]")
    plain = Scrubber(urls=["http://127.0.0.1:8000/mcp"])
    assert not plain
    assert plain.scrub("POST http://127.0.0.1:8000/mcp failed") == (
        "POST http://127.0.0.1:8000/mcp failed"
    )


def test_a_percent_encoded_key_is_scrubbed_as_written_and_decoded() -> None:
    secrets = Scrubber(urls=["https://h/mcp?token=a%2Bb%2Bc%2Bd%2Be"])
    assert "a+b+c+d+e" not in secrets.scrub("token a+b+c+d+e")
    assert "a%2Bb%2Bc%2Bd%2Be" not in secrets.scrub("token=a%2Bb%2Bc%2Bd%2Be")


# --- text in pieces ------------------------------------------------------------------------


def _streamed(scrubber: Scrubber, pieces: list[str]) -> str:
    stream = scrubber.stream()
    return "".join(stream.feed(piece) for piece in pieces) + stream.flush()


@settings(max_examples=300)
@given(texts)
def test_a_text_split_at_every_point_scrubs_as_the_whole(text: str) -> None:
    """Invariant: for every split point, what the stream emits joins to ``scrub(text)``."""
    whole = SCRUBBER.scrub(text)
    for cut in range(len(text) + 1):
        assert _streamed(SCRUBBER, [text[:cut], text[cut:]]) == whole


@settings(max_examples=300)
@given(texts, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_a_text_split_many_ways_scrubs_as_the_whole(text: str, cuts: list[int]) -> None:
    """Invariant: any multi-way split (empty pieces included) emits ``scrub(text)``."""
    points = sorted(min(cut, len(text)) for cut in cuts)
    pieces = [
        text[start:end] for start, end in zip([0, *points], [*points, len(text)], strict=True)
    ]
    assert _streamed(SCRUBBER, pieces) == SCRUBBER.scrub(text)
    assert _streamed(Scrubber([KEY], key_shapes=False), pieces) == Scrubber(
        [KEY], key_shapes=False
    ).scrub(text)


@settings(max_examples=300)
@given(texts, texts)
def test_the_stream_never_emits_what_a_later_piece_could_turn_into_a_secret(
    head: str, rest: str
) -> None:
    """Invariant: after any prefix, what was emitted is a prefix of the scrubbed whole,
    whatever follows: no start of a secret is let out before it is known not to be one."""
    stream = SCRUBBER.stream()
    emitted = stream.feed(head)
    assert SCRUBBER.scrub(head + rest).startswith(emitted)


@settings(max_examples=300)
@given(texts, st.lists(st.integers(min_value=0, max_value=400), max_size=8))
def test_pieces_known_in_full_scrub_as_the_whole_and_keep_their_boundaries(
    text: str, cuts: list[int]
) -> None:
    """Invariant: joined, the scrubbed pieces are ``scrub(text)``; each prefix of them is a
    prefix of it (no piece holds the start of a secret a later piece completes); and
    without a secret the pieces come back as they were."""
    points = sorted(min(cut, len(text)) for cut in cuts)
    pieces = [
        text[start:end] for start, end in zip([0, *points], [*points, len(text)], strict=True)
    ]
    whole = SCRUBBER.scrub(text)
    out = SCRUBBER.scrub_pieces(pieces)
    assert len(out) == len(pieces)
    assert "".join(out) == whole
    for count in range(len(out)):
        assert whole.startswith("".join(out[:count]))
    if whole == text:
        assert out == pieces


def test_a_secret_across_pieces_goes_where_it_starts_and_other_pieces_stay() -> None:
    scrubber = Scrubber([KEY])
    pieces = ["intro ", "key sk-planted-012", "3456789abc", "def end", " outro"]
    assert scrubber.scrub_pieces(pieces) == ["intro ", "key [redacted]", "", " end", " outro"]
    assert scrubber.scrub_pieces(["no ", "secret"]) == ["no ", "secret"]


def test_a_key_split_in_two_is_held_back_then_replaced() -> None:
    stream = Scrubber([KEY]).stream()
    first = stream.feed(f"your key is {KEY[:10]}")
    assert KEY[:3] not in first
    assert stream.held > 0
    second = stream.feed(f"{KEY[10:]} and more text after it that is plainly not a key at all.")
    assert first + second + stream.flush() == (
        "your key is [redacted] and more text after it that is plainly not a key at all."
    )


def test_a_key_shaped_token_is_held_until_it_ends() -> None:
    stream = Scrubber().stream()
    out = stream.feed("token sk-" + "a" * 500)
    assert "sk-" not in out
    out += stream.feed("b" * 500)
    assert "sk-" not in out
    assert out + stream.feed(" done") + stream.flush() == "token [redacted] done"


def test_a_long_growing_token_is_followed_by_its_end_alone() -> None:
    """A hex dump after ``sk-`` is one key-shaped token for as long as it runs: the stream
    follows its growth, keeping only its two ends (it was quadratic, re-matching the whole
    token on every piece). 200k characters in 20-character pieces take ≈ 0.1 s."""
    text = "a hex dump follows: sk-" + "0123456789abcdef" * 12_500 + " done"
    stream = Scrubber(["some-known-secret-value"]).stream()
    started = time.monotonic()
    out, held = [], 0
    for start in range(0, len(text), 20):
        out.append(stream.feed(text[start : start + 20]))
        held = max(held, stream.held)
    out.append(stream.flush())
    assert "".join(out) == "a hex dump follows: [redacted] done"
    assert held < 200  # its two ends, not the 200k characters
    assert time.monotonic() - started < 20  # a hang guard; linear, it takes ≈ 0.1 s


LONG_PIECES = [
    *PIECES,
    "sk-" + "a1" * 120,
    "Bearer " + "t/" * 100,
    "-" * 150,
    "abcdefgh" * 30,
]
long_texts = st.lists(st.sampled_from(LONG_PIECES), max_size=10).map("".join)


@settings(max_examples=200)
@given(long_texts, st.lists(st.integers(min_value=0, max_value=1200), max_size=12))
def test_a_stream_that_holds_only_a_tokens_ends_scrubs_as_the_whole(
    text: str, cuts: list[int]
) -> None:
    """Invariant: however long tokens, values running into them and fields after them are
    split, what the stream emits joins to ``scrub(text)``, and every prefix of it is a
    prefix of that (it drops a growing token's middle, never a character it must show)."""
    points = sorted(min(cut, len(text)) for cut in cuts)
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    overlapping = Scrubber(["a1a1a1a1a1a1 ", "t/t/t/t/t/ a", "abcdefghabcdefgh"])
    for scrubber in (SCRUBBER, overlapping, Scrubber()):
        whole = scrubber.scrub(text)
        stream = scrubber.stream()
        emitted = ""
        for piece in pieces:
            emitted += stream.feed(piece)
            assert whole.startswith(emitted)
        assert emitted + stream.flush() == whole


@settings(max_examples=200)
@given(
    st.sampled_from([("sk-", "ab12-_"), ("Bearer ", "ab12/.+=")]),
    st.data(),
    st.integers(min_value=6, max_value=30),
    st.lists(st.integers(min_value=0, max_value=400), max_size=40),
)
def test_a_value_running_past_the_end_of_a_long_token_is_replaced_with_it(
    shape: tuple[str, str], data: st.DataObject, overlap: int, cuts: list[int]
) -> None:
    """Invariant: a known value that starts inside a long key-shaped token and runs past
    its end is replaced with it, in whole text and however the stream is split (the
    stream keeps only the token's ends: the end it keeps must hold that value's start)."""
    lead, alphabet = shape
    token = data.draw(st.text(alphabet, min_size=150, max_size=300))
    value = token[-overlap:] + " t"  # ends past the token: a space ends its run
    text = f"x {lead}{token} tail"
    scrubber = Scrubber([value])
    whole = scrubber.scrub(text)
    kept = "Bearer " if lead == "Bearer " else ""  # a bearer token keeps its scheme
    assert whole == f"x {kept}[redacted]ail"
    points = sorted(min(cut, len(text)) for cut in cuts)
    pieces = [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]
    assert _streamed(scrubber, pieces) == whole


def test_a_stream_without_secrets_lets_everything_through_at_once() -> None:
    stream = Scrubber(key_shapes=False).stream()
    assert stream.feed("all of it") == "all of it"
    assert stream.flush() == ""


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("caf\udce9-password-123", "caf%E9-password-123"),  # an undecodable OS byte
        ("lone-\ud800-surrogate", "lone-%ED%A0%80-surrogate"),  # a JSON \ud800 escape
    ],
)
def test_a_value_holding_a_lone_surrogate_is_scrubbed_as_written_and_encoded(
    value: str, encoded: str
) -> None:
    """An environment value that was not UTF-8 holds one (``surrogateescape``): the
    scrubber is built all the same, and its percent-encoded form is the original bytes'."""
    scrubber = Scrubber([value], urls=[f"https://h/x?token={value}"])
    assert scrubber.scrub(f"a {value} b {encoded} c") == "a [redacted] b [redacted] c"


@pytest.mark.parametrize(
    "name",
    [
        "ANTHROPIC_API_KEY",
        "api_key",
        "OPENAI_APIKEY",
        "HF_TOKEN",
        "GITHUB_TOKEN",
        "AWS_BEARER_TOKEN_BEDROCK",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "GOOGLE_CLOUD_ACCESS_TOKEN",
        "PGPASSWORD",
        "MY_SERVICE_PASSWORD",
        "DB_PASSWD",
        "SERVICE_CREDENTIALS",
        "KEY",
        "GPG_KEY",
    ],
)
def test_a_variable_named_like_a_credential_is_secret(name: str) -> None:
    """One rule for the bash tool's environment and a cassette's secrets."""
    assert is_secret_variable(name)


@pytest.mark.parametrize(
    "name", ["PATH", "HOME", "PLAIN_SETTING", "TOKENIZERS_PARALLELISM", "KEYBOARD", "MONKEY_ID"]
)
def test_a_setting_is_not_a_secret_variable(name: str) -> None:
    """``KEY`` and ``TOKEN`` count as words, so a setting that only contains them passes."""
    assert not is_secret_variable(name)
    assert all(pattern == pattern.upper() for pattern in SECRET_VARIABLE_PATTERNS)
