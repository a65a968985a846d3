"""The secret rules' exact edges: the key-likeness bounds, which pieces of a URL are
secrets (a ``:`` in a password, ``=`` in a query value, ``+`` in a query but not a path),
where a URL's user information ends, and the scrubber's piece boundaries. (Added from
mutation testing: each pins a behaviour a surviving mutant changed.)"""

from __future__ import annotations

import pytest

from yoagent.core.support import REDACTED, Scrubber, header_secrets, looks_like_key, split_url

# -- looks_like_key's bounds -----------------------------------------------------------------


def test_eight_characters_with_two_digits_and_two_letters_look_like_a_key() -> None:
    assert looks_like_key("abcdef12")  # exactly MIN_SECRET_LENGTH
    assert looks_like_key("ab12cdef")
    assert not looks_like_key("abcdefg1")  # one digit is a name with a number
    assert not looks_like_key("abcd12")  # too short


def test_sixteen_mixed_case_letters_look_like_a_key_fifteen_do_not() -> None:
    assert looks_like_key("AbcdefghIjklmnop")
    assert not looks_like_key("AbcdefghIjklmno")


# -- the secret pieces of a URL --------------------------------------------------------------


def test_a_password_runs_to_the_at_sign_colons_included() -> None:
    scrubber = Scrubber(urls=["https://username:password1:password2@host/"], key_shapes=False)
    assert scrubber.scrub("u=username") == "u=[redacted]"
    assert scrubber.scrub("p=password1:password2") == "p=[redacted]"
    assert scrubber.scrub("a part: password1") == "a part: password1"


def test_a_query_value_holding_an_equals_sign_is_one_value() -> None:
    scrubber = Scrubber(urls=["https://h/x?token=a=b"], key_shapes=False)
    assert scrubber.scrub("token=a=b") == "token=[redacted]"


def test_an_empty_query_value_does_not_end_the_search() -> None:
    scrubber = Scrubber(urls=["https://h/x?a=&token=zz"], key_shapes=False)
    assert scrubber.scrub("token=zz") == "token=[redacted]"


def test_a_plus_is_a_space_in_a_query_value_and_itself_in_a_path() -> None:
    # "Bearer+%41bcdefgh" is a bearer token only once "+" reads as a space
    query = Scrubber(urls=["https://h/x?q=Bearer+%41bcdefgh"], key_shapes=False)
    assert query.scrub("q=Bearer+Abcdefgh") == "q=[redacted]"
    path = Scrubber(urls=["https://h/Bearer+%41bcdefgh"], key_shapes=False)
    assert not path  # no secret found: the path segment is a name


def test_a_path_segment_that_is_a_key_once_decoded_is_a_secret() -> None:
    scrubber = Scrubber(urls=["https://h/%41bcdef12"], key_shapes=False)
    assert scrubber.scrub("id Abcdef12") == "id [redacted]"


def test_a_key_like_fragment_is_a_secret() -> None:
    scrubber = Scrubber(urls=["https://h/p#abcdef123456"], key_shapes=False)
    assert scrubber.scrub("frag abcdef123456") == "frag [redacted]"


def test_the_path_and_query_that_carry_a_secret_go_whole() -> None:
    no_query = Scrubber(urls=["https://h/p/abcdef123456"], key_shapes=False)
    assert no_query.scrub("GET /p/abcdef123456 HTTP/1.1") == "GET [redacted] HTTP/1.1"
    with_query = Scrubber(urls=["https://h/p?token=abcdefgh1"], key_shapes=False)
    assert with_query.scrub("GET /p?token=abcdefgh1 HTTP/1.1") == "GET [redacted] HTTP/1.1"


# -- split_url: where the user information ends -----------------------------------------------


def test_tabs_newlines_and_leading_controls_are_dropped_as_urlsplit_does() -> None:
    assert split_url("https://us\ter:p\nw@host/").userinfo == "user:pw"
    assert split_url("\x00\x01 https://user:pw@host/").userinfo == "user:pw"


def test_a_url_without_a_scheme_still_has_user_information() -> None:
    parts = split_url("//user:pw@host/x")
    assert (parts.userinfo, parts.parts.netloc, parts.parts.path) == ("user:pw", "host", "/x")


def test_no_user_information_is_not_a_guess() -> None:
    assert split_url("https://host/p").guessed is False
    empty = split_url("file:///a@b/c")  # an empty authority: the @ is in the path
    assert (empty.userinfo, empty.parts.path, empty.guessed) == ("", "/a@b/c", False)


@pytest.mark.parametrize(
    ("url", "userinfo", "netloc", "path", "guessed"),
    [
        # an @ only inside the authority, before a port that is not digits: no guess
        ("https://user:pw@host:http/x", "user:pw", "host:http", "/x", False),
        # an @ deeper in a path, with no user-and-password ':' before it: a path
        ("https://host/a@b", "", "host", "/a@b", False),
        # an @ in the next piece after a host:port: a password holding '/'
        ("https://u:80/x@host/p", "u:80/x", "host", "/p", True),
        # an @ further than the next piece, after a host:port or an IPv6 host: a path
        ("https://u:80//x@host/p", "", "u:80", "//x@host/p", False),
        ("https://u:p@[::1]/a/b@c", "u:p", "[::1]", "/a/b@c", False),
        ("https://u:p@host/a/b@c", "u:p", "host", "/a/b@c", False),
        ("https://u:p@host:/a/b@c", "u:p", "host:", "/a/b@c", False),
        # ... but after a 'port' that is not digits: the password holds the '/'s
        ("https://user:pa/s/s@host/p", "user:pa/s/s", "host", "/p", True),
        # the user information runs to the last @ before the host, not past it
        ("https://user:pa/ss@host/p@q", "user:pa/ss", "host", "/p@q", True),
        ("https://u:pa/s@s@host/p", "u:pa/s@s", "host", "/p", True),
    ],
)
def test_where_the_user_information_ends(
    url: str, userinfo: str, netloc: str, path: str, guessed: bool
) -> None:
    parts = split_url(url)
    assert (parts.userinfo, parts.parts.netloc, parts.parts.path) == (userinfo, netloc, path)
    assert parts.guessed is guessed


# -- the scrubber ----------------------------------------------------------------------------


def test_the_repr_counts_values_and_fields_and_says_whether_shapes_are_on() -> None:
    assert repr(Scrubber(["abcdefgh12"])) == "<Scrubber: 1 values, 0 fields, key shapes>"
    plain = Scrubber(fields=[("token", "=", "ab")], key_shapes=False)
    assert repr(plain) == "<Scrubber: 0 values, 1 fields>"


def test_extended_with_a_value_alone_scrubs_it_and_keeps_the_settings() -> None:
    base = Scrubber(fields=[("token", "=", "ab")], key_shapes=False, marker="***")
    grown = base.extended(["newsecret123"])
    assert grown is not base
    assert grown.scrub("newsecret123 token=ab") == "*** token=***"
    # key shapes stay as the base had them: off here, on by default
    assert grown.scrub("sk-ant-abcdefghijkl") == "sk-ant-abcdefghijkl"
    shaped = Scrubber(["abcdefgh12"]).extended(["newsecret123"])
    assert shaped.scrub("sk-ant-abcdefghijkl newsecret123") == "[redacted] [redacted]"


def test_a_secret_starting_at_a_piece_boundary_goes_in_the_next_piece() -> None:
    scrubber = Scrubber(["secretvalue1"])
    assert scrubber.scrub_pieces(["abc ", "secretvalue1 x"]) == ["abc ", "[redacted] x"]


# -- the stream, split at every pair of points ------------------------------------------------

_SPLIT_CASES = [
    # without key shapes the hold is the longest value or field itself, to the character
    (Scrubber(["secretvalue1"], key_shapes=False), "a secretvalue1 secretvalu secretvalue12 b"),
    (Scrubber(fields=[("token", "=", "ab")], key_shapes=False), "token=ab token=abc token=a x"),
    (Scrubber(fields=[("api_key", ": ", "xy")], key_shapes=False), "api_key: xy api_key: xyz"),
    # a short field whose end is decided by the character after it, and a long value
    (
        Scrubber(["secretvalue1"], fields=[("token", "=", "ab")]),
        "token=ab token=abc secretvalue12 x",
    ),
    # overlapping values: one starting inside another and running past it
    (Scrubber(["abcdefgh12", "gh12ijklmn"], key_shapes=False), "x abcdefgh12ijklmn y abcdefgh12 z"),
    # a key shape still growing, a bearer token, a value inside a token
    (Scrubber(["0123456789ab"]), "k sk-ant-0123456789abcdef; Bearer tok.en/abc= x 0123456789ab"),
    # cookies and a header's last word, from headers
    (
        Scrubber(
            headers=[("Cookie", "sid=abc; theme=dark"), ("Authorization", "Basic dXNlcjpwYXNz")]
        ),
        "Cookie: sid=abc; theme=dark Basic dXNlcjpwYXNz sid=abcd",
    ),
]


@pytest.mark.parametrize(("scrubber", "text"), _SPLIT_CASES)
def test_every_two_cut_split_of_the_stream_scrubs_as_the_whole(
    scrubber: Scrubber, text: str
) -> None:
    whole = scrubber.scrub(text)
    for first in range(len(text) + 1):
        for second in range(first, len(text) + 1):
            stream = scrubber.stream()
            emitted = ""
            for piece in (text[:first], text[first:second], text[second:]):
                emitted += stream.feed(piece)
                assert whole.startswith(emitted), (first, second)
            assert emitted + stream.flush() == whole, (first, second)
    stream = scrubber.stream()
    one_by_one = "".join(stream.feed(char) for char in text) + stream.flush()
    assert one_by_one == whole


# -- headers and fields ----------------------------------------------------------------------


def test_a_credential_header_after_another_header_is_found() -> None:
    scrubber = Scrubber(headers=[("Accept", "text/plain"), ("X-Api-Key", "ab")])
    assert scrubber.scrub("X-Api-Key: ab") == "X-Api-Key: [redacted]"


def test_each_cookie_is_a_field_and_its_value_runs_to_the_end() -> None:
    cookies = Scrubber(headers=[("Cookie", "sid=ab; theme=dark")], key_shapes=False)
    assert cookies.scrub("sid=ab and theme=dark") == "sid=[redacted] and theme=[redacted]"
    with_equals = Scrubber(headers=[("Cookie", "sid=abcd=efgh1")], key_shapes=False)
    assert with_equals.scrub("x abcd=efgh1") == "x [redacted]"


def test_a_scheme_keeps_its_name_and_the_last_word_is_the_secret() -> None:
    three = Scrubber(headers=[("Authorization", "Scheme first12345 last123456")])
    assert three.scrub("last123456") == "[redacted]"
    short = Scrubber(headers=[("Authorization", "Scheme first short")], key_shapes=False)
    assert short.scrub("Scheme short") == "Scheme [redacted]"
    one_word = Scrubber(headers=[("X-Api-Key", "abc")], key_shapes=False)
    assert one_word.scrub("abc abc") == "abc abc"  # no scheme: only `X-Api-Key: abc`
    assert one_word.scrub("X-Api-Key: abc") == "X-Api-Key: [redacted]"


def test_header_secrets_are_the_whole_value_its_last_word_and_each_cookie() -> None:
    assert header_secrets([("Cookie", "sid=abcd=efgh1")]) == ["sid=abcd=efgh1", "abcd=efgh1"]
    assert header_secrets({"Authorization": "Scheme a b"}) == ["Scheme a b", "a b", "b"]
    assert header_secrets({"Authorization": "Bearer  tok "}) == ["Bearer  tok ", "tok"]
    assert header_secrets([("Accept", "text/plain")]) == []


def test_a_token_with_spaces_is_scrubbed_whole_not_by_its_last_word() -> None:
    token = "first-part second-part third-part"
    scrubber = Scrubber(headers={"Authorization": f"Bearer {token}"})
    shown = scrubber.scrub(f"the server says: key {token} is not valid")
    assert "first-part" not in shown and "second-part" not in shown and "third" not in shown
    assert shown == f"the server says: key {REDACTED} is not valid"


def test_given_fields_and_url_fields_both_count() -> None:
    scrubber = Scrubber(fields=[("token", "=", "ab")], urls=["https://h/x?key=cd"])
    assert scrubber.scrub("token=ab key=cd") == "token=[redacted] key=[redacted]"


def test_a_field_value_of_one_character_counts_an_empty_one_does_not() -> None:
    assert Scrubber(fields=[("pin", "=", "7")]).scrub("pin=7") == "pin=[redacted]"
    assert not Scrubber(fields=[("token", "=", "")])
    # eight characters or more: a value replaced everywhere, not a field
    long = Scrubber(fields=[("token", "=", "abcdefgh")])
    assert repr(long) == "<Scrubber: 1 values, 0 fields, key shapes>"


def test_a_decided_secret_is_let_out_at_once() -> None:
    """The stream holds back only the last characters a secret could still span: a
    secret that ended before them goes out replaced, with the text after it."""
    scrubber = Scrubber(["secretvalue1"], key_shapes=False)  # holds 13 characters
    stream = scrubber.stream()
    assert stream.feed("secretvalue1" + " " * 30) == "[redacted]" + " " * 17
    exactly = scrubber.stream()  # the secret ends where the held characters begin
    assert exactly.feed("secretvalue1" + " " * 13) == "[redacted]"
    assert exactly.held == 13
    # a field's hold is its name, separator and value, and the character deciding its end
    field = Scrubber(fields=[("token", "=", "ab")], key_shapes=False).stream()
    assert field.feed("x" * 20) == "x" * 11
    assert field.held == len("token=ab") + 1


@pytest.mark.parametrize(
    ("values", "text"),
    [
        # a secret starting one character into another and running past it
        (["abcdefgh12", "bcdefgh12XYZ"], "abcdefgh12XYZ"),
        # a chain: each starts one character into the one before and runs further
        (["abcdefgh12", "bcdefgh12X", "cdefgh12XYZW"], "abcdefgh12XYZW"),
    ],
)
def test_secrets_overlapping_one_character_apart_go_as_one(values: list[str], text: str) -> None:
    scrubber = Scrubber(values, key_shapes=False)
    assert scrubber.scrub(f"<{text}>") == "<[redacted]>"
    stream = scrubber.stream()
    assert "".join(stream.feed(char) for char in f"<{text}>") + stream.flush() == "<[redacted]>"


def test_each_part_of_a_password_a_parser_would_cut_is_secret() -> None:
    # A password holding an unencoded `?`: httpx reads "first-part" as the port and says so.
    url = "http://user:first-part?tail-part#end-part@host.example/v1"
    scrubber = Scrubber(urls=[url])
    assert scrubber.scrub("Invalid port: 'first-part'") == f"Invalid port: '{REDACTED}'"
    shown = scrubber.scrub("query tail-part, fragment end-part")
    assert shown == f"query {REDACTED}, fragment {REDACTED}"
    # Without an unencoded delimiter the password stays one value: its parts are not taken.
    whole = Scrubber(urls=["http://user:first-part%3Ftail-part@host.example/v1"])
    assert whole.scrub("first-part") == "first-part"
