"""Where an operation's requests go: the ``base_url`` override and the document's
``servers``, checked as absolute http(s) URLs, and each refusal worded so that it says what
to fix without showing a query or fragment (where keys travel). From the mutation triage:
each test pins a behaviour a surviving mutant changed."""

from __future__ import annotations

from typing import Any

import pytest

from yoagent.openapi import OpenApiConfig, OpenApiError, OpenApiToolAdapter


def _spec(servers: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "openapi": "3.1.0",
        "info": {"title": "Pets", "version": "1"},
        "paths": {"/pets": {"get": {"operationId": "listPets"}}},
    }
    if servers is not None:
        spec["servers"] = servers
    return spec


def _base_url(spec: dict[str, Any], base_url: str | None = None) -> str:
    adapter = OpenApiToolAdapter.from_spec(spec, config=OpenApiConfig(base_url=base_url))
    return adapter.tool("listPets").operation.base_url


def _refusal(spec: dict[str, Any], base_url: str | None = None) -> str:
    with pytest.raises(OpenApiError) as caught:
        _base_url(spec, base_url)
    return str(caught.value)


@pytest.mark.parametrize(
    ("base_url", "message"),
    [
        ("ftp://files.example/pub", "base_url must be an absolute http(s) URL, not 'ftp://files.example'"),
        ("http:///no-host", "base_url must be an absolute http(s) URL, not '<invalid URL>'"),
        ("https://", "base_url must be an absolute http(s) URL, not '<invalid URL>'"),
        ("https://u:s3cr3t@/v1", "base_url must be an absolute http(s) URL, not '<invalid URL>'"),
        ("api.example/v1", "base_url must be an absolute http(s) URL; it has no scheme"),
        ("k@api.example/v1?k=s3cr3t", "base_url must be an absolute http(s) URL; it has no scheme"),
    ],
)  # fmt: skip
def test_a_base_url_that_is_not_absolute_http_is_refused_by_name(
    base_url: str, message: str
) -> None:
    assert _refusal(_spec([{"url": "https://api.example"}]), base_url) == message


INVALID = (
    ": a port is a number up to 65535, and a user name or password must not hold an "
    "unencoded '/', '?' or '#'"
)


@pytest.mark.parametrize(
    ("base_url", "shown"),
    [
        ("http://127.0.0.1:70000/v1", "http://127.0.0.1:70000"),
        ("http://api.example:port/v1", "http://api.example:port"),
        ("http://user:pa/ss@api.example/v1", "http://[redacted]@api.example"),
    ],
)
def test_a_base_url_that_does_not_parse_is_refused_without_its_password(
    base_url: str, shown: str
) -> None:
    message = _refusal(_spec(), base_url)
    assert message == f"base_url is not a valid URL ({shown}){INVALID}"
    assert "pa/ss" not in message


@pytest.mark.parametrize(
    "base_url", ["https://api.example/v1?api_key=s3cr3t", "https://api.example/v1#s3cr3t"]
)
def test_a_base_url_with_a_query_or_fragment_is_refused_showing_its_origin_only(
    base_url: str,
) -> None:
    message = _refusal(_spec(), base_url)
    assert message == "base_url must not have a query or fragment (https://api.example)"


def test_a_server_url_is_refused_naming_the_operation() -> None:
    spec = _spec([{"url": "ftp://files.example/pub"}])
    assert _refusal(spec) == (
        "GET /pets: server URL must be an absolute http(s) URL, not 'ftp://files.example'"
    )
    spec = _spec([{"url": "https://api.example/v1?token=s3cr3t"}])
    assert (
        _refusal(spec)
        == "GET /pets: server URL must not have a query or fragment (https://api.example)"
    )


@pytest.mark.parametrize(
    ("base_url", "used"),
    [
        ("https://api.example/v1/", "https://api.example/v1"),
        ("https://api.example/v1//", "https://api.example/v1"),
        ("https://api.example/BOX", "https://api.example/BOX"),  # only slashes go
    ],
)
def test_the_base_url_wins_over_the_servers_and_loses_its_trailing_slashes(
    base_url: str, used: str
) -> None:
    assert _base_url(_spec([{"url": "ftp://never.used"}]), base_url) == used


@pytest.mark.parametrize("servers", [None, []])
def test_no_servers_means_slash_which_without_a_document_url_says_what_to_pass(
    servers: list[dict[str, Any]] | None,
) -> None:
    assert _refusal(_spec(servers)) == (
        "GET /pets: the server URL '/' is relative and the document was not loaded from a "
        "URL; pass OpenApiConfig(base_url=...)"
    )


def test_the_first_server_is_the_one_used() -> None:
    spec = _spec([{"url": "https://first.example/"}, {"url": "https://second.example"}])
    assert _base_url(spec) == "https://first.example"


def test_a_document_too_wrong_to_read_names_its_first_three_faults_by_place() -> None:
    spec = _spec([{"url": 1}, {"url": 2}, {"url": 3}, {"url": 4}])
    with pytest.raises(OpenApiError) as caught:
        OpenApiToolAdapter.from_spec(spec)
    fault = "Input should be a valid string"
    assert str(caught.value) == (
        f"the document: servers/0/url: {fault}; servers/1/url: {fault}; servers/2/url: {fault}"
    )


def test_a_fault_of_the_whole_value_is_named_as_such() -> None:
    spec = _spec([{"url": "https://api.example"}])
    spec["components"] = {"parameters": {"Limit": 5}}
    spec["paths"]["/pets"]["get"]["parameters"] = [{"$ref": "#/components/parameters/Limit"}]
    [skipped] = OpenApiToolAdapter.from_spec(spec).skipped
    assert skipped.reason == (
        "a parameter: (value): Input should be a valid dictionary or instance of Parameter"
    )
