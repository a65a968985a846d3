"""Vertex AI credentials pinned exactly: which ADC file is found on each platform, the
headers and key source each way of authenticating gives, the token cache's edges, and
every refusal word for word (a token endpoint of ``httpx.MockTransport``, no network)."""

from __future__ import annotations

import base64
import gzip
import json
import os
import types
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import anyio
import httpx
import pytest

from yoagent.core import ApiProtocol, ErrorKind, GoogleCompat, ModelConfig, ProviderError
from yoagent.providers import _vertex_auth
from yoagent.providers._http_errors import KeySource
from yoagent.providers._vertex_auth import adc_file, clear_token_cache, vertex_credentials

REFRESH = "1//refresh-token-SECRET-0123456789"
CLIENT_SECRET = "client-secret-SECRET-abcdef"
TOKEN_URI = "https://oauth2.example.test/token"
Handler = Callable[[httpx.Request], httpx.Response]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("GOOGLE_CLOUD_ACCESS_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "MY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud-empty"))
    clear_token_cache()
    yield
    clear_token_cache()


def model(**changes: Any) -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.GOOGLE_VERTEX,
        provider="vertex",
        id="gemini-2.5-pro",
        base_url="https://vertex.example.test/v1/projects/p/locations/us-central1",
        compat=GoogleCompat(),
        **changes,
    )


def adc(folder: Path, **info: str) -> Path:
    fields = {
        "type": "authorized_user",
        "client_id": "client-1",
        "client_secret": CLIENT_SECRET,
        "refresh_token": REFRESH,
        "token_uri": TOKEN_URI,
    }
    fields.update(info)
    path = folder / "adc.json"
    path.write_text(json.dumps({k: v for k, v in fields.items() if v != "-"}))
    return path


def replying(*responses: httpx.Response) -> tuple[list[httpx.Request], Handler]:
    seen: list[httpx.Request] = []
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return queue.pop(0)

    return seen, handler


class Body(httpx.AsyncByteStream):
    """A body streamed as a server's is (``content=`` is read at once: no raw stream)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self.data


def reply(status: int, body: bytes, **headers: str) -> httpx.Response:
    return httpx.Response(status, headers=headers, stream=Body(body))


def token(value: str = "ya29.token-1", expires_in: object = 3600) -> httpx.Response:
    return reply(200, json.dumps({"access_token": value, "expires_in": expires_in}).encode())


async def credentials(
    config: ModelConfig, handler: Handler | None = None
) -> tuple[dict[str, str], KeySource]:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise AssertionError(f"no request was expected: {request.url}")

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler or refuse)) as client:
        return await vertex_credentials(config, lambda _url: client)


async def refusal(config: ModelConfig, handler: Handler | None = None) -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await credentials(config, handler)
    return caught.value


# --- adc_file -------------------------------------------------------------------------


def fake_os(name: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(name=name, environ=os.environ)


def gcloud_file(folder: Path) -> Path:
    folder.mkdir(parents=True)
    found = folder / "application_default_credentials.json"
    found.write_text("{}")
    return found


def test_without_cloudsdk_config_gclouds_file_is_read_from_the_home_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    found = gcloud_file(tmp_path / ".config" / "gcloud")
    assert adc_file({}) == found
    # APPDATA is Windows' only: elsewhere it is not looked at.
    assert adc_file({"APPDATA": str(tmp_path / "appdata")}) == found
    assert adc_file({"CLOUDSDK_CONFIG": "  "}) == found


def test_on_windows_gclouds_file_is_read_under_appdata(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(_vertex_auth, "os", fake_os("nt"))
    found = gcloud_file(tmp_path / "roaming" / "gcloud")
    assert adc_file({"APPDATA": str(tmp_path / "roaming")}) == found
    # Without APPDATA, Windows too falls back to the home folder.
    assert adc_file({}) is None
    home = gcloud_file(tmp_path / "home" / ".config" / "gcloud")
    assert adc_file({"appdata": str(tmp_path / "roaming")}) == home


def test_cloudsdk_config_and_an_explicit_file_win_over_the_defaults(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    gcloud_file(tmp_path / ".config" / "gcloud")
    custom = gcloud_file(tmp_path / "custom")
    assert adc_file({"CLOUDSDK_CONFIG": f" {tmp_path / 'custom'} "}) == custom
    assert adc_file({"GOOGLE_APPLICATION_CREDENTIALS": " ~/x.json "}) == tmp_path / "x.json"


# --- vertex_credentials ---------------------------------------------------------------


@pytest.mark.parametrize("name", ["Authorization", "X-Goog-Api-Key"])
async def test_a_credential_header_of_the_config_is_sent_as_it_is(name: str) -> None:
    config = model(headers={name: "Bearer user-secret", "x-trace": "t"}, api_key="ignored")
    assert await credentials(config) == (
        {},
        KeySource(
            origin=f"the {name} header",
            hint="GOOGLE_CLOUD_ACCESS_TOKEN",
            secrets=("Bearer user-secret", "user-secret"),
        ),
    )


async def test_an_api_key_is_sent_as_bearer_with_its_exact_source() -> None:
    config = model(api_key=" ya29.key ", headers={"x-trace": "t"}, key_variable="MY_TOKEN")
    assert await credentials(config) == (
        {"authorization": "Bearer ya29.key"},
        KeySource(origin="ModelConfig.api_key", hint="MY_TOKEN", secrets=("ya29.key",)),
    )


async def test_a_token_from_the_models_own_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_TOKEN", "ya29.mine")
    monkeypatch.setenv("GOOGLE_CLOUD_ACCESS_TOKEN", "ya29.default")
    assert await credentials(model(key_variable="MY_TOKEN")) == (
        {"authorization": "Bearer ya29.mine"},
        KeySource(origin="MY_TOKEN", hint="MY_TOKEN", secrets=("ya29.mine",)),
    )
    assert await credentials(model()) == (
        {"authorization": "Bearer ya29.default"},
        KeySource(
            origin="GOOGLE_CLOUD_ACCESS_TOKEN",
            hint="GOOGLE_CLOUD_ACCESS_TOKEN",
            secrets=("ya29.default",),
        ),
    )


async def test_an_unsendable_token_is_refused_naming_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    unsendable = "the key from {} cannot be sent: it holds"
    error = await refusal(model(api_key="ya29\nbad"))
    assert error.message.startswith(unsendable.format("ModelConfig.api_key"))
    monkeypatch.setenv("GOOGLE_CLOUD_ACCESS_TOKEN", "ya29\nbad")
    error = await refusal(model())
    assert error.message.startswith(unsendable.format("GOOGLE_CLOUD_ACCESS_TOKEN"))
    monkeypatch.delenv("GOOGLE_CLOUD_ACCESS_TOKEN")
    path = adc(tmp_path)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    error = await refusal(model(), replying(token("ya29\nbad"))[1])
    assert error.message.startswith(unsendable.format(path))


async def test_no_credentials_is_refused_word_for_word() -> None:
    error = await refusal(model(key_variable="MY_TOKEN"))
    assert error.kind is ErrorKind.AUTH
    assert error.message == (
        "no Google Cloud credentials for Vertex AI: set MY_TOKEN to an access token, "
        "or GOOGLE_APPLICATION_CREDENTIALS to a credentials file, or run "
        "`gcloud auth application-default login`"
    )


async def test_an_adc_token_comes_with_the_files_secrets_and_the_headers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = adc(tmp_path)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    seen, handler = replying(token())
    config = model(headers={"x-api-key": "header-secret"})
    assert await credentials(config, handler) == (
        {"authorization": "Bearer ya29.token-1"},
        KeySource(
            origin=str(path),
            hint="GOOGLE_CLOUD_ACCESS_TOKEN",
            secrets=("ya29.token-1", REFRESH, CLIENT_SECRET, "header-secret"),
        ),
    )
    (request,) = seen
    assert str(request.url) == TOKEN_URI
    assert request.method == "POST"
    assert request.headers["accept-encoding"] == "gzip, deflate"
    assert request.extensions["timeout"] == httpx.Timeout(30.0).as_dict()
    assert parse_qs(request.content.decode()) == {
        "grant_type": ["refresh_token"],
        "client_id": ["client-1"],
        "client_secret": [CLIENT_SECRET],
        "refresh_token": [REFRESH],
    }


async def test_a_service_accounts_key_and_key_id_are_secrets_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_vertex_auth, "_rs256", lambda pem, message, path: b"signature")
    path = adc(
        tmp_path,
        type="service_account",
        client_email="agent@p.iam.gserviceaccount.com",
        private_key="PEM-SECRET",
        private_key_id="kid-SECRET",
        client_id="-",
        client_secret="-",
        refresh_token="-",
        token_uri="-",
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    seen, handler = replying(token("ya29.sa"))
    _, source = await credentials(model(), handler)
    assert source.secrets == ("ya29.sa", "PEM-SECRET", "kid-SECRET")
    assert str(seen[0].url) == "https://oauth2.googleapis.com/token"


# --- the file and the cache -----------------------------------------------------------


async def test_a_missing_or_unreadable_file_is_refused_with_the_reason(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    missing = tmp_path / "missing.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(missing))
    error = await refusal(model())
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"cannot read the credentials file {missing}: No such file or directory",
    )
    folder = tmp_path / "folder.json"
    folder.mkdir()
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(folder))
    error = await refusal(model())
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"cannot read the credentials file {folder}: Is a directory",
    )


async def test_a_file_that_is_not_json_or_of_another_type_is_refused_word_for_word(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "c.json"
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    path.write_text("{not json")
    error = await refusal(model())
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"the credentials file {path} is not JSON",
    )
    takes = "; Vertex AI here takes 'authorized_user' or 'service_account' (or an access token)"
    path.write_text(json.dumps({"type": "external_account"}))
    error = await refusal(model())
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"the credentials file {path} has type 'external_account'{takes}",
    )
    path.write_text("{}")
    error = await refusal(model())
    assert error.message == f"the credentials file {path} has type 'none'{takes}"


async def test_missing_fields_are_named_together_in_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = adc(tmp_path, client_secret="-", refresh_token="")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    error = await refusal(model())
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"the credentials file {path} lacks client_secret, refresh_token",
    )


async def test_a_changed_file_is_exchanged_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = adc(tmp_path)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    seen, handler = replying(token("ya29.first"), token("ya29.second"))
    assert (await credentials(model(), handler))[0] == {"authorization": "Bearer ya29.first"}
    assert (await credentials(model(), handler))[0] == {"authorization": "Bearer ya29.first"}
    os.utime(path, ns=(2_000_000_000, 2_000_000_000))
    assert (await credentials(model(), handler))[0] == {"authorization": "Bearer ya29.second"}
    assert len(seen) == 2


@pytest.mark.parametrize(("expires_in", "exchanges"), [(301, 1), (300, 2), (None, 1)])
async def test_a_token_is_reused_until_five_minutes_before_it_expires(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, expires_in: int | None, exchanges: int
) -> None:
    # A still clock: a token living 301 s is still good for one more second; one living
    # 300 s is due for renewal at once; no lifetime means an hour.
    monkeypatch.setattr(_vertex_auth, "time", types.SimpleNamespace(time=lambda: 1e9))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc(tmp_path)))
    seen, handler = replying(token(expires_in=expires_in), token(expires_in=expires_in))
    await credentials(model(), handler)
    await credentials(model(), handler)
    assert len(seen) == exchanges


async def test_two_files_exchange_at_the_same_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # One lock per file: the first file's exchange waiting does not hold up the second's.
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = adc(tmp_path / "a"), adc(tmp_path / "b")
    second_started = anyio.Event()
    started: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        if b"client_id=first" in request.content:
            started.append("first")
            await second_started.wait()
        else:
            started.append("second")
            second_started.set()
        return token()

    first.write_text(first.read_text().replace("client-1", "first"))
    transport = httpx.MockTransport(handler)
    async with httpx.AsyncClient(transport=transport) as client:

        async def one(path: Path) -> None:
            monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
            await vertex_credentials(model(), lambda _url: client)

        with anyio.fail_after(5):
            async with anyio.create_task_group() as group:
                group.start_soon(one, first)
                await anyio.wait_all_tasks_blocked()
                group.start_soon(one, second)
    assert started == ["first", "second"]  # the first one was waiting when the second began


# --- the token endpoint's answers -----------------------------------------------------


async def exchange_refusal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, handler: Handler, **info: str
) -> tuple[Path, ProviderError]:
    path = adc(tmp_path, **info)
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    return path, await refusal(model(), handler)


@pytest.mark.parametrize(
    ("status", "body", "said"),
    [
        (401, {"error": "invalid_grant", "error_description": "Bad Request"}, "Bad Request"),
        (403, {"error": "unauthorized_client"}, "unauthorized_client"),
        (400, {"error": {"nested": True}}, "status 400"),
        (400, None, "status 400"),
    ],
)
async def test_a_refused_exchange_says_what_the_endpoint_said(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    status: int,
    body: dict[str, object] | None,
    said: str,
) -> None:
    raw = b"<html>nope</html>" if body is None else json.dumps(body).encode()
    path, error = await exchange_refusal(monkeypatch, tmp_path, replying(reply(status, raw))[1])
    assert (error.kind, error.status, error.message) == (
        ErrorKind.AUTH,
        status,
        f"the token endpoint refused the credentials in {path} ({status}): {said}",
    )


async def test_a_refusal_is_scrubbed_then_cut_at_300_characters(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    echo = f"grant {REFRESH} refused " + "x" * 400
    body = json.dumps({"error_description": echo}).encode()
    path, error = await exchange_refusal(monkeypatch, tmp_path, replying(reply(401, body))[1])
    prefix = f"the token endpoint refused the credentials in {path} (401): "
    assert error.message.startswith(prefix + "grant ")
    assert len(error.message) == len(prefix) + 300
    assert REFRESH not in error.message


@pytest.mark.parametrize("status", [402, 404, 500, 300])
async def test_other_statuses_are_the_usual_http_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, status: int
) -> None:
    body = json.dumps({"error": {"message": f"boom {REFRESH}"}, "access_token": "ya29.no"})
    handler = replying(reply(status, body.encode(), **{"retry-after": "7"}))[1]
    _, error = await exchange_refusal(monkeypatch, tmp_path, handler)
    assert error.status == status
    assert error.kind in (ErrorKind.API, ErrorKind.RATE_LIMITED)
    assert "boom" in error.message
    assert REFRESH not in error.message
    assert not error.message.startswith("the token endpoint refused")
    assert error.retry_after == (7.0 if error.kind is ErrorKind.RATE_LIMITED else None)


async def test_a_busy_token_endpoint_is_rate_limited_with_its_retry_after(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    handler = replying(reply(503, b'{"error": {"message": "busy"}}', **{"retry-after": "7"}))[1]
    _, error = await exchange_refusal(monkeypatch, tmp_path, handler)
    assert (error.kind, error.status, error.retry_after) == (ErrorKind.RATE_LIMITED, 503, 7.0)


@pytest.mark.parametrize("body", [b'{"token_type": "Bearer"}', b"not json", b'{"access_token": 5}'])
async def test_a_reply_without_an_access_token_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, body: bytes
) -> None:
    path, error = await exchange_refusal(monkeypatch, tmp_path, replying(reply(200, body))[1])
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"the token endpoint for {path} sent no access_token",
    )


async def test_a_compressed_token_reply_is_inflated(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc(tmp_path)))
    body = gzip.compress(json.dumps({"access_token": "ya29.zipped"}).encode())
    handler = replying(reply(200, body, **{"content-encoding": "gzip"}))[1]
    headers, _ = await credentials(model(), handler)
    assert headers == {"authorization": "Bearer ya29.zipped"}


async def test_a_failed_connection_names_the_endpoint_and_leaks_no_secret(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"refused, form was {CLIENT_SECRET}", request=request)

    _, error = await exchange_refusal(monkeypatch, tmp_path, unreachable)
    assert error.kind is ErrorKind.NETWORK
    assert error.message.startswith(f"POST {TOKEN_URI}: could not connect: refused, form was ")
    assert CLIENT_SECRET not in error.message


async def test_a_service_account_failure_scrubs_its_key_id(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_vertex_auth, "_rs256", lambda pem, message, path: b"signature")

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused key kid-SECRET-42", request=request)

    info = {"client_id": "-", "client_secret": "-", "refresh_token": "-"}
    sa = {"type": "service_account", "client_email": "a@p", "private_key": "PEM"}
    _, error = await exchange_refusal(
        monkeypatch, tmp_path, unreachable, **info, **sa, private_key_id="kid-SECRET-42"
    )
    assert error.message.startswith(f"POST {TOKEN_URI}: could not connect: refused key ")
    assert "kid-SECRET-42" not in error.message


async def test_a_service_account_without_its_key_is_refused_naming_the_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = adc(tmp_path, type="service_account", client_email="a@p")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    error = await refusal(model())
    assert error.message == f"the credentials file {path} lacks private_key"


async def test_a_service_accounts_jwt_is_compact_json_in_unpadded_base64url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(_vertex_auth, "_rs256", lambda pem, message, path: b"signature!")
    monkeypatch.setattr(_vertex_auth, "time", types.SimpleNamespace(time=lambda: 1e9 + 0.7))
    path = adc(tmp_path, type="service_account", client_email="a@p", private_key="PEM")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    seen, handler = replying(token())
    await credentials(model(), handler)
    form = parse_qs(seen[0].content.decode())

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    header = b64(b'{"alg":"RS256","typ":"JWT"}')
    claims = b64(
        b'{"iss":"a@p","scope":"https://www.googleapis.com/auth/cloud-platform",'
        b'"aud":"https://oauth2.example.test/token","iat":1000000000,"exp":1000003600}'
    )
    assert form == {
        "grant_type": ["urn:ietf:params:oauth:grant-type:jwt-bearer"],
        "assertion": [f"{header}.{claims}.c2lnbmF0dXJlIQ"],
    }


async def test_a_token_uri_httpx_refuses_is_named_as_not_a_valid_url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def refused(request: httpx.Request) -> httpx.Response:
        raise httpx.InvalidURL(f"invalid URL {REFRESH}")

    path, error = await exchange_refusal(monkeypatch, tmp_path, refused)
    assert (error.kind, error.message) == (
        ErrorKind.AUTH,
        f"the token_uri in {path} is not a valid URL",
    )


async def test_the_exchange_asks_for_the_encodings_it_can_read_through_the_uris_client(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The client's own default (here brotli, which the reply's reader cannot inflate) is
    # replaced; the client is the one for the token URI.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc(tmp_path)))
    seen, handler = replying(token())
    asked: list[str] = []
    transport = httpx.MockTransport(handler)
    async with httpx.AsyncClient(transport=transport, headers={"accept-encoding": "br"}) as client:

        def client_for(url: str) -> httpx.AsyncClient:
            asked.append(url)
            return client

        await vertex_credentials(model(), client_for)
    assert asked == [TOKEN_URI]
    assert seen[0].headers.get_list("accept-encoding") == ["gzip, deflate"]


async def test_a_token_without_a_lifetime_lives_an_hour(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    now = [1e9]
    monkeypatch.setattr(_vertex_auth, "time", types.SimpleNamespace(time=lambda: now[0]))
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc(tmp_path)))
    seen, handler = replying(token(expires_in=None), token(expires_in=None))
    await credentials(model(), handler)
    now[0] += 3600 - 300 - 1
    await credentials(model(), handler)
    assert len(seen) == 1
    now[0] += 1
    await credentials(model(), handler)
    assert len(seen) == 2


@pytest.mark.parametrize(
    ("signature", "encoded"), [(b"signature!", "c2lnbmF0dXJlIQ"), (b"\x00\x00\x17", "AAAX")]
)
async def test_a_jwts_signature_is_unpadded_base64url(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, signature: bytes, encoded: str
) -> None:
    monkeypatch.setattr(_vertex_auth, "_rs256", lambda pem, message, path: signature)
    path = adc(tmp_path, type="service_account", client_email="a@p", private_key="PEM")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(path))
    seen, handler = replying(token())
    await credentials(model(), handler)
    (assertion,) = parse_qs(seen[0].content.decode())["assertion"]
    assert assertion.rsplit(".", 1)[1] == encoded
