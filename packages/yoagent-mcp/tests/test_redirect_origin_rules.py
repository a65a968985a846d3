"""Which redirects a client follows, rule by rule: the endpoint's own origin, its https
upgrade on the default ports and nothing else under ``same-origin``; http and https only."""

from __future__ import annotations

import httpx2
import pytest

from yoagent.mcp._http_client import _refusal, _within  # pyright: ignore[reportPrivateUsage]


@pytest.mark.parametrize(
    ("first", "target", "within"),
    [
        ("http://h/mcp", "http://h/elsewhere", True),
        ("https://h:8443/mcp", "https://h:8443/x", True),
        ("http://h/mcp", "https://h/mcp", True),  # the https upgrade
        ("http://h:80/mcp", "https://h:443/mcp", True),  # the default ports, written out
        ("https://h/mcp", "http://h/mcp", False),  # a downgrade
        ("http://h:8080/mcp", "https://h/mcp", False),  # an upgrade from another port
        ("http://h/mcp", "https://h:8443/mcp", False),  # an upgrade to another port
        ("http://h:8080/mcp", "https://h:8080/mcp", False),
        ("http://h/mcp", "https://other/mcp", False),
        ("http://h/mcp", "http://other/mcp", False),
        ("http://h/mcp", "ws://h/mcp", False),
        ("http://h:8080/mcp", "http://h:8081/mcp", False),
    ],
)
def test_within_the_origin_or_its_https_upgrade(first: str, target: str, within: bool) -> None:
    assert _within(httpx2.URL(first), httpx2.URL(target)) is within


def refusal(policy: str, first: str, target: str, method: str = "POST") -> str | None:
    request = httpx2.Request("POST", first)
    following = httpx2.Request(method, target)
    return _refusal(policy, httpx2.URL(first), request, following, 307)  # type: ignore[arg-type]


@pytest.mark.parametrize("policy", ["same-origin", "any"])
def test_a_redirect_to_the_https_upgrade_is_followed(policy: str) -> None:
    assert refusal(policy, "http://h/mcp", "https://h/mcp") is None


def test_any_follows_an_https_redirect_to_another_origin() -> None:
    assert refusal("any", "https://h/mcp", "https://other:8443/mcp") is None


@pytest.mark.parametrize("policy", ["same-origin", "any"])
def test_a_redirect_to_a_scheme_other_than_http_or_https_is_refused(policy: str) -> None:
    assert refusal(policy, "http://h/mcp", "ftp://h/mcp") == (
        "the server redirected to ftp://h (HTTP 307), which is not http or https"
    )


def test_a_refusal_names_origins_only() -> None:
    said = refusal("same-origin", "http://h/sk-live-0123456789abcdef/mcp", "https://o/k/mcp?t=1")
    assert said == (
        "the server redirected to https://o (HTTP 307), another origin; "
        "redirects='same-origin' follows only redirects within http://h "
        "(pass redirects='any' to follow it)"
    )
