"""SigV4: both published test suites reproduced exactly; botocore agrees on random requests."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from unittest import mock
from urllib.parse import quote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from provider_helpers import REPO

from yoagent.providers._sigv4 import (
    AwsCredentials,
    canonical_query,
    canonical_uri,
    sign,
)

SIGV4 = REPO.parent / "shared" / "corpus" / "sigv4"
CLASSIC = SIGV4 / "classic-aws4_testsuite"
C_AUTH = SIGV4 / "aws-c-auth" / "v4"
SUITE_KEY = AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
SUITE_TIME = datetime(2015, 8, 30, 12, 36, tzinfo=UTC)
# The classic suite's get-vanilla-with-session-token signs with this token (its inputs are
# documented with the suite; the .req file itself does not carry it).
CLASSIC_SESSION_TOKEN = "6e86291e8372ff2a2260956d9b8aae1d763fbf315fa00fa31553b73ebf194267"


@dataclass
class RawRequest:
    method: str
    path: str
    query: str
    headers: list[tuple[str, str]]
    body: bytes


def parse_request(raw: bytes) -> RawRequest:
    """A suite's raw HTTP request: the target may hold spaces; folded lines continue values."""
    head, _, body = raw.partition(b"\n\n")
    lines = head.decode().split("\n")
    method, _, rest = lines[0].partition(" ")
    target = rest.rsplit(" HTTP/", 1)[0]
    path, _, query = target.partition("?")
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        if line[:1] in (" ", "\t") and headers:
            name, value = headers[-1]
            headers[-1] = (name, value + "\n" + line)
        elif line:
            name, _, value = line.partition(":")
            headers.append((name, value))
    return RawRequest(method, path, query, headers, body)


def cases(folder: Path, marker: str) -> list[Any]:
    found = sorted(p.parent for p in folder.rglob(marker)) if folder.is_dir() else []
    if not found:
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"suite not found at {folder}"))]
    return [pytest.param(p, id=str(p.relative_to(folder))) for p in found]


@pytest.mark.parametrize("case", cases(CLASSIC, "*.req"))
def test_every_classic_suite_case_is_reproduced(case: Path) -> None:
    name = case.name
    request = parse_request((case / f"{name}.req").read_bytes())
    # The suite's X-Amz-Date is its signing time; the signer adds that header itself.
    headers = [(n, v) for n, v in request.headers if n.lower() != "x-amz-date"]
    token = CLASSIC_SESSION_TOKEN if name == "get-vanilla-with-session-token" else None
    signed = sign(
        method=request.method,
        path=request.path,
        query=request.query,
        headers=headers,
        payload_sha256=hashlib.sha256(request.body).hexdigest(),
        credentials=AwsCredentials(SUITE_KEY.access_key, SUITE_KEY.secret_key, token),
        region="us-east-1",
        service="service",
        when=SUITE_TIME,
    )
    assert signed.canonical_request == (case / f"{name}.creq").read_text()
    assert signed.string_to_sign == (case / f"{name}.sts").read_text()
    assert signed.authorization == (case / f"{name}.authz").read_text()


@pytest.mark.parametrize("case", cases(C_AUTH, "context.json"))
def test_every_aws_c_auth_v4_case_is_reproduced(case: Path) -> None:
    context = json.loads((case / "context.json").read_text())
    request = parse_request((case / "request.txt").read_bytes())
    payload_hash = hashlib.sha256(request.body).hexdigest()
    headers = list(request.headers)
    if context["sign_body"]:
        headers.append(("x-amz-content-sha256", payload_hash))
    creds = context["credentials"]
    signed = sign(
        method=request.method,
        path=request.path,
        query=request.query,
        headers=headers,
        payload_sha256=payload_hash,
        credentials=AwsCredentials(
            creds["access_key_id"], creds["secret_access_key"], creds.get("token")
        ),
        region=context["region"],
        service=context["service"],
        when=datetime.fromisoformat(context["timestamp"]),
        normalize_path=context["normalize"],
        sign_session_token=not context.get("omit_session_token", False),
    )
    assert signed.canonical_request == (case / "header-canonical-request.txt").read_text()
    assert signed.string_to_sign == (case / "header-string-to-sign.txt").read_text()
    assert signed.signature == (case / "header-signature.txt").read_text().strip()
    authorization = next(
        line.partition(":")[2]
        for line in (case / "header-signed-request.txt").read_text().splitlines()
        if line.startswith("Authorization:")
    )
    assert signed.authorization == authorization
    if creds.get("token"):
        assert signed.headers["x-amz-security-token"] == creds["token"]


@pytest.mark.parametrize(
    ("path", "normalized", "raw"),
    [
        ("/model/us.anthropic.claude-v1%3A0/converse-stream", None, None),
        ("", "/", "/"),
        ("/a/./b/../c/", "/a/c/", "/a/./b/../c/"),
        ("/a//b", "/a/b", "/a//b"),
        ("/../..", "/", "/../.."),
        ("/caf\u00e9 x", "/caf%C3%A9%20x", "/caf%C3%A9%20x"),
    ],
)
def test_canonical_uri_normalizes_then_encodes_each_segment_again(
    path: str, normalized: str | None, raw: str | None
) -> None:
    if normalized is None:
        assert canonical_uri(path) == "/model/us.anthropic.claude-v1%253A0/converse-stream"
        return
    assert canonical_uri(path) == normalized
    assert canonical_uri(path, normalize=False) == raw


def test_canonical_query_reencodes_strictly_and_sorts_repeated_keys_by_value() -> None:
    assert canonical_query("b=2&a=z&a=y&c&d=%7e+x") == "a=y&a=z&b=2&c=&d=~%2Bx"


def test_credentials_never_show_their_secrets() -> None:
    creds = AwsCredentials("AKIDEXAMPLE", "topsecretvalue", "sessiontokenvalue")
    assert "topsecretvalue" not in repr(creds)
    assert "sessiontokenvalue" not in repr(creds)
    assert creds.secrets == ("topsecretvalue", "sessiontokenvalue")


# --- random requests against botocore's signer ------------------------------------------

SUB_DELIMS = ":@!$&'()*+,;="
SEGMENTS = st.one_of(
    st.sampled_from([".", "..", "", "a:b", "%", "%41", "x y", "~user", "caf\u00e9", "\u1234"]),
    st.text(
        st.one_of(st.characters(codec="utf-8"), st.sampled_from("/?#%:@!$&'()*+,;= ")),
        max_size=12,
    ),
)
QUERY_TEXT = st.text(st.characters(codec="utf-8"), max_size=10)
HEADER_NAME = st.from_regex(r"[A-Za-z][A-Za-z0-9-]{0,15}", fullmatch=True).filter(
    lambda n: (
        n.lower()
        not in {
            "host",
            "authorization",
            "x-amz-date",
            "x-amz-security-token",
            "user-agent",
            "expect",
            "x-amzn-trace-id",
            "transfer-encoding",
        }
    )
)
WHITESPACE = st.sampled_from(["", " ", "  ", "\t", " \t ", "   "])
HEADER_VALUE = st.builds(
    lambda lead, words, gaps, tail: (
        lead + "".join(w + g for w, g in zip(words, gaps, strict=False)) + tail
    ),
    WHITESPACE,
    st.lists(st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=6)),
    st.lists(WHITESPACE),
    WHITESPACE,
)
KEY_TEXT = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=40)


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    segments = draw(st.lists(SEGMENTS, max_size=5))
    path = "/" + "/".join(quote(s, safe=SUB_DELIMS) for s in segments)
    pairs = draw(st.lists(st.tuples(QUERY_TEXT, QUERY_TEXT), max_size=5))
    if pairs and draw(st.booleans()):
        pairs.append((pairs[0][0], draw(QUERY_TEXT)))  # a repeated key
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
    names = draw(st.lists(HEADER_NAME, max_size=5, unique_by=str.lower))
    headers = [(n, draw(HEADER_VALUE)) for n in names]
    return {
        "method": draw(st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD"])),
        "path": path,
        "query": query,
        "headers": headers,
        "body": draw(st.binary(max_size=64)),
        "credentials": AwsCredentials(
            draw(KEY_TEXT), draw(KEY_TEXT), draw(st.one_of(st.none(), KEY_TEXT))
        ),
        "region": draw(st.sampled_from(["us-east-1", "eu-central-1", "us-gov-west-1"])),
        "service": draw(st.sampled_from(["bedrock", "service", "s3-outposts"])),
        "when": draw(
            st.datetimes(datetime(1990, 1, 1), datetime(2090, 1, 1)).map(
                lambda d: d.replace(microsecond=0, tzinfo=UTC)
            )
        ),
    }


@settings(max_examples=300, deadline=None)
@given(request=requests())
def test_random_requests_are_signed_exactly_as_botocore_signs_them(
    request: dict[str, Any],
) -> None:
    pytest.importorskip("botocore", reason="botocore is the oracle (dev dependency only)")
    from botocore.auth import SIGNED_HEADERS_BLACKLIST, SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    # `sign` signs every header it is given (the provider gives it three); botocore leaves
    # out the hop-by-hop and tracing headers on its list (which grows between releases).
    unsigned = set(SIGNED_HEADERS_BLACKLIST)
    request["headers"] = [(n, v) for n, v in request["headers"] if n.lower() not in unsigned]
    host = "bedrock-runtime.us-east-1.amazonaws.com"
    url = f"https://{host}{request['path']}" + (f"?{request['query']}" if request["query"] else "")
    creds: AwsCredentials = request["credentials"]
    ours = sign(
        method=request["method"],
        path=request["path"],
        query=request["query"],
        headers=[("host", host), *request["headers"]],
        payload_sha256=hashlib.sha256(request["body"]).hexdigest(),
        credentials=creds,
        region=request["region"],
        service=request["service"],
        when=request["when"],
    )
    theirs = AWSRequest(
        method=request["method"],
        url=url,
        headers={"host": host, **dict(request["headers"])},
        data=request["body"],
    )
    signer = SigV4Auth(
        Credentials(creds.access_key, creds.secret_key, creds.session_token),
        request["service"],
        request["region"],
    )
    naive = request["when"].replace(tzinfo=None)
    with mock.patch("botocore.auth.get_current_datetime", return_value=naive):
        signer.add_auth(theirs)
    authorization = theirs.headers["Authorization"]
    del theirs.headers["Authorization"]
    assert ours.canonical_request == signer.canonical_request(theirs)
    assert ours.authorization == authorization
