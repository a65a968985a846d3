"""``served_models`` given a base URL ``urlopen`` refuses, or a server that does not answer
in HTTP: a problem named in words, never an exception out of start-up (``yoagent
--base-url 'http://exa mple/v1'`` crashed with a traceback) nor "the answer is not JSON"."""

from __future__ import annotations

import pytest
from loopback_answers import Serve

from yoagent.cli.served import ServedModels, served_models


@pytest.mark.parametrize(
    ("base", "shown"),
    [
        ("http://exa mple/v1", "http://exa mple/v1/models"),
        ("http://[::1/v1", "the server's model list"),
    ],
)
def test_a_base_url_urlopen_refuses_is_named_as_not_valid(base: str, shown: str) -> None:
    found = served_models(base)
    assert (found.ids, found.problem) == ((), "not a valid URL")
    assert found.url == shown


def test_a_server_that_does_not_speak_http_is_named(serve: Serve) -> None:
    not_http = serve(lambda connection: connection.sendall(b"SSH-2.0-OpenSSH_9.6\r\n"))
    assert served_models(not_http) == ServedModels(
        not_http + "/models", (), "the answer is not HTTP"
    )
