"""Vertex AI credentials: a token from the environment, or ADC files exchanged at a loopback
token endpoint (never the real one), cached, refused clearly, never leaked."""

from __future__ import annotations

import base64
import gzip
import json
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import parse_qs

import anyio
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from provider_helpers import stream_config
from stream_fixtures import gemini_sse, gemini_text

from yoagent.core import ApiProtocol, ErrorKind, GoogleCompat, ModelConfig, ProviderError
from yoagent.providers import VertexProvider
from yoagent.providers._vertex_auth import clear_token_cache
from yoagent.providers.testing import RecordedRequest, ScriptedReply, ScriptedSseServer

REFRESH = "1//refresh-token-SECRET-0123456789"
CLIENT_SECRET = "client-secret-SECRET-abcdef"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("GOOGLE_CLOUD_ACCESS_TOKEN", "GOOGLE_APPLICATION_CREDENTIALS", "API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "gcloud-empty"))
    clear_token_cache()
    yield
    clear_token_cache()


@pytest.fixture
def server() -> Iterator[ScriptedSseServer]:
    with ScriptedSseServer() as running:
        yield running


def token_reply(token: str = "ya29.token-1", expires_in: int = 3600) -> ScriptedReply:
    body = json.dumps({"access_token": token, "expires_in": expires_in, "token_type": "Bearer"})
    return ScriptedReply([body.encode()], headers={"content-type": "application/json"})


def vertex_model(server: ScriptedSseServer) -> ModelConfig:
    return ModelConfig(
        api=ApiProtocol.GOOGLE_VERTEX,
        provider="vertex",
        id="gemini-2.5-pro",
        base_url=server.url + "/v1/projects/p/locations/us-central1",
        key_variable="GOOGLE_CLOUD_ACCESS_TOKEN",
        compat=GoogleCompat(),
    )


def write(path: Path, info: dict[str, str]) -> Path:
    path.write_text(json.dumps(info))
    return path


async def ask(model: ModelConfig) -> str:
    async with VertexProvider(model) as provider:
        return (await provider.stream(stream_config(model), lambda d: None)).text


async def test_a_token_from_the_environment_is_sent_as_bearer(
    server: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOOGLE_CLOUD_ACCESS_TOKEN", "ya29.from-env")
    server.enqueue(gemini_sse(gemini_text("ok")))
    assert await ask(vertex_model(server)) == "ok"
    request = server.requests[0]
    assert request.headers["authorization"] == "Bearer ya29.from-env"
    assert request.path == (
        "/v1/projects/p/locations/us-central1/publishers/google/models/"
        "gemini-2.5-pro:streamGenerateContent?alt=sse"
    )


async def test_no_credentials_anywhere_is_an_auth_error_before_sending(
    server: ScriptedSseServer,
) -> None:
    with pytest.raises(ProviderError) as caught:
        await ask(vertex_model(server))
    assert caught.value.kind is ErrorKind.AUTH
    assert "GOOGLE_CLOUD_ACCESS_TOKEN" in caught.value.message
    assert "gcloud auth application-default login" in caught.value.message
    assert server.requests == []


async def test_an_authorized_user_file_is_exchanged_once_and_the_token_cached(
    server: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    adc = write(
        tmp_path / "adc.json",
        {
            "type": "authorized_user",
            "client_id": "client-1.apps.googleusercontent.com",
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH,
            "token_uri": server.url + "/token",
        },
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    server.enqueue(token_reply())
    server.enqueue(gemini_sse(gemini_text("one")))
    server.enqueue(gemini_sse(gemini_text("two")))
    model = vertex_model(server)
    assert (await ask(model), await ask(model)) == ("one", "two")

    token_request, first, second = server.requests
    assert token_request.path == "/token"
    form = parse_qs(token_request.body.decode())
    assert form == {
        "grant_type": ["refresh_token"],
        "client_id": ["client-1.apps.googleusercontent.com"],
        "client_secret": [CLIENT_SECRET],
        "refresh_token": [REFRESH],
    }
    assert (
        first.headers["authorization"] == second.headers["authorization"] == "Bearer ya29.token-1"
    )


async def test_gclouds_own_file_is_found_and_a_short_lived_token_is_not_reused(
    server: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    folder = tmp_path / "gcloud"
    folder.mkdir()
    write(
        folder / "application_default_credentials.json",
        {
            "type": "authorized_user",
            "client_id": "c",
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH,
            "token_uri": server.url + "/token",
        },
    )
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(folder))
    for token in ("ya29.short-1", "ya29.short-2"):
        server.enqueue(token_reply(token, expires_in=60))  # inside the refresh margin
        server.enqueue(gemini_sse(gemini_text()))
    model = vertex_model(server)
    await ask(model)
    await ask(model)
    assert [r.path for r in server.requests].count("/token") == 2
    assert server.requests[3].headers["authorization"] == "Bearer ya29.short-2"


@pytest.fixture(params=["PKCS8", "TraditionalOpenSSL"])
def rsa_key(request: pytest.FixtureRequest) -> tuple[str, RSAPublicKey]:
    """A fresh RSA key as a service-account file holds it (PEM: PKCS#8, as Google writes
    it, or PKCS#1), and its public half."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(
        serialization.Encoding.PEM,
        getattr(serialization.PrivateFormat, request.param),
        serialization.NoEncryption(),
    )
    return pem.decode(), key.public_key()


def verifies(public: RSAPublicKey, signed: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is the RS256 signature of ``signed`` by ``public``'s key."""
    try:
        public.verify(signature, signed, padding.PKCS1v15(), hashes.SHA256())
    except InvalidSignature:
        return False
    return True


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


async def test_a_service_account_signs_a_jwt_that_its_public_key_verifies(
    server: ScriptedSseServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    rsa_key: tuple[str, RSAPublicKey],
) -> None:
    key, public = rsa_key
    adc = write(
        tmp_path / "sa.json",
        {
            "type": "service_account",
            "project_id": "p",
            "private_key_id": "kid-123",
            "private_key": key,
            "client_email": "agent@p.iam.gserviceaccount.com",
            "token_uri": server.url + "/token",
        },
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    server.enqueue(token_reply("ya29.service"))
    server.enqueue(gemini_sse(gemini_text()))
    await ask(vertex_model(server))

    form = parse_qs(server.requests[0].body.decode())
    assert form["grant_type"] == ["urn:ietf:params:oauth:grant-type:jwt-bearer"]
    header, claims, signature = form["assertion"][0].split(".")
    assert json.loads(_b64decode(header)) == {"alg": "RS256", "typ": "JWT", "kid": "kid-123"}
    decoded = json.loads(_b64decode(claims))
    assert decoded["iss"] == "agent@p.iam.gserviceaccount.com"
    assert decoded["aud"] == server.url + "/token"
    assert decoded["scope"] == "https://www.googleapis.com/auth/cloud-platform"
    assert decoded["exp"] - decoded["iat"] == 3600
    signed = f"{header}.{claims}".encode()
    assert verifies(public, signed, _b64decode(signature))
    assert server.requests[1].headers["authorization"] == "Bearer ya29.service"


def _service_account(folder: Path, server: ScriptedSseServer, private_key: str) -> Path:
    return write(
        folder / "sa.json",
        {
            "type": "service_account",
            "private_key": private_key,
            "client_email": "agent@p.iam.gserviceaccount.com",
            "token_uri": server.url + "/token",
        },
    )


def _pem(key: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey, password: bytes | None) -> str:
    encryption = (
        serialization.BestAvailableEncryption(password)
        if password is not None
        else serialization.NoEncryption()
    )
    pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption
    )
    return pem.decode()


@pytest.mark.parametrize(
    "private_key",
    [
        pytest.param(lambda: _pem(ec.generate_private_key(ec.SECP256R1()), None), id="EC key"),
        pytest.param(
            lambda: _pem(rsa.generate_private_key(65537, 2048), b"hunter2"), id="encrypted key"
        ),
        pytest.param(
            lambda: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----", id="bad DER"
        ),
    ],
)
async def test_a_service_account_key_that_is_not_a_plain_rsa_key_is_an_auth_error(
    server: ScriptedSseServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    private_key: Callable[[], str],
) -> None:
    pem = private_key()
    monkeypatch.setenv(
        "GOOGLE_APPLICATION_CREDENTIALS", str(_service_account(tmp_path, server, pem))
    )
    with pytest.raises(ProviderError) as caught:
        await ask(vertex_model(server))
    assert caught.value.kind is ErrorKind.AUTH
    assert "cannot be used: it is not an unencrypted RSA private key in PEM" in caught.value.message
    assert pem not in str(caught.value)
    assert server.requests == []


async def test_without_cryptography_a_service_account_is_an_error_naming_the_extra(
    server: ScriptedSseServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    rsa_key: tuple[str, RSAPublicKey],
) -> None:
    # None in sys.modules: what `import` sees when the package is not installed.
    loaded = [m for m in sys.modules if m.startswith("cryptography.")]
    for name in ["cryptography", *loaded]:
        monkeypatch.setitem(sys.modules, name, None)
    adc = _service_account(tmp_path, server, rsa_key[0])
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    with pytest.raises(ProviderError) as caught:
        await ask(vertex_model(server))
    assert caught.value.kind is ErrorKind.OTHER
    assert caught.value.message == (
        f"signing with the service-account key in {adc} needs the cryptography package: "
        "pip install 'yoagent-providers[vertex]'"
    )
    assert server.requests == []


async def test_an_access_token_needs_no_cryptography(
    server: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "cryptography", None)
    monkeypatch.setenv("GOOGLE_CLOUD_ACCESS_TOKEN", "ya29.from-env")
    server.enqueue(gemini_sse(gemini_text("ok")))
    assert await ask(vertex_model(server)) == "ok"


async def test_a_refused_exchange_names_the_file_and_leaks_no_secret(
    server: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    adc = write(
        tmp_path / "adc.json",
        {
            "type": "authorized_user",
            "client_id": "c",
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH,
            "token_uri": server.url + "/token",
        },
    )
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
    echo = {"error": "invalid_grant", "error_description": f"Token {REFRESH} has been revoked."}
    server.enqueue(
        ScriptedReply(
            [json.dumps(echo).encode()], status=400, headers={"content-type": "application/json"}
        )
    )
    with pytest.raises(ProviderError) as caught:
        await ask(vertex_model(server))
    assert caught.value.kind is ErrorKind.AUTH
    assert str(adc) in caught.value.message and "revoked" in caught.value.message
    assert REFRESH not in str(caught.value) and CLIENT_SECRET not in str(caught.value)
    assert len(server.requests) == 1  # the Vertex request was never sent


@pytest.mark.parametrize(
    ("info", "expected"),
    [
        ({"type": "external_account"}, "'external_account'"),
        ({"type": "authorized_user", "client_id": "c"}, "lacks client_secret, refresh_token"),
        ({"type": "service_account", "client_email": "e", "private_key": "nope"}, "cannot be used"),
        (
            {
                "type": "authorized_user",
                "client_id": "c",
                "client_secret": CLIENT_SECRET,
                "refresh_token": REFRESH,
                "token_uri": "http://127.0.0.1:99999/token",
            },
            "port 99999 is out of range",
        ),
    ],
)
async def test_unusable_credentials_files_are_auth_errors_saying_why(
    server: ScriptedSseServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    info: dict[str, str],
    expected: str,
) -> None:
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(write(tmp_path / "c.json", info)))
    with pytest.raises(ProviderError) as caught:
        await ask(vertex_model(server))
    assert caught.value.kind is ErrorKind.AUTH
    assert expected in caught.value.message
    assert server.requests == []


def authorized_user(folder: Path, server: ScriptedSseServer) -> Path:
    return write(
        folder / "adc.json",
        {
            "type": "authorized_user",
            "client_id": "c",
            "client_secret": CLIENT_SECRET,
            "refresh_token": REFRESH,
            "token_uri": server.url + "/token",
        },
    )


def test_concurrent_first_requests_share_one_token_exchange(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    def slow_token(request: RecordedRequest) -> ScriptedReply | None:
        if request.path != "/token":
            return None  # the queued stream replies
        time.sleep(0.3)  # every first request is waiting for a token by now
        return token_reply()

    with ScriptedSseServer(check=slow_token) as server:
        adc = authorized_user(tmp_path, server)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(adc))
        for _ in range(5):
            server.enqueue(gemini_sse(gemini_text("ok")))
        model = vertex_model(server)
        replies: list[str] = []

        async def main() -> None:
            async def one() -> None:
                replies.append(await ask(model))

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(one)

        anyio.run(main)
        assert replies == ["ok"] * 5
        assert [r.path for r in server.requests].count("/token") == 1


async def test_a_token_reply_is_read_only_up_to_its_cap(
    server: ScriptedSseServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The reply was read whole (response.content) and inflated at once: 64 KiB of gzip
    # from a token endpoint took 64 MiB.
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(authorized_user(tmp_path, server)))
    bomb = gzip.compress(b" " * (64 * 1024 * 1024), compresslevel=9)
    headers = {"content-type": "application/json", "content-encoding": "gzip"}
    server.enqueue(ScriptedReply([bomb], headers=headers))
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as caught:
            await ask(vertex_model(server))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.kind is ErrorKind.AUTH
    assert "sent no access_token" in caught.value.message
    assert peak < 8 * 1024 * 1024
