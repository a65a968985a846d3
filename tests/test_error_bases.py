"""One error base: ``except YoagentError`` catches every error the project raises on purpose.

Each package's exceptions are walked (every public module, every ``__all__``): each is a
``YoagentError`` and, when the package defines it, under that package's own base. A
foreign library's errors are translated in one place per package: an httpx error on each
package's HTTP path, and a git failure in GASP, arrive as the package's own error, never
chained to the foreign one.
"""

from __future__ import annotations

import collections.abc
import enum
import importlib
import inspect
import pickle
import pkgutil
import socket
import types
import typing
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest

from yoagent.a2a import A2AAgentTool, A2AError, RemoteAgentError
from yoagent.cli import CliError
from yoagent.core import (
    ApiProtocol,
    ModelConfig,
    ProviderError,
    RetryConfig,
    ToolContext,
    ToolError,
    UserMessage,
    YoagentError,
)
from yoagent.core.provider import StreamConfig
from yoagent.dbos import DbosError
from yoagent.decision import DecisionError, DecisionModel
from yoagent.gasp import AgentRepo, GaspError, RepositoryError, RestoreError, restore
from yoagent.mcp import McpClient, McpError
from yoagent.openapi import OpenApiError, OpenApiToolAdapter
from yoagent.pricing import PriceError, PriceFetchError, PriceSource, fetch_prices
from yoagent.providers import OpenAiCompletionsProvider, ProvidersError
from yoagent.testing import TestingError
from yoagent.tools import ToolsError
from yoagent.ui import BadRunInputError, UiError

ROOT = Path(__file__).resolve().parents[1]

BASES: dict[str, type[YoagentError] | None] = {
    "yoagent.core": YoagentError,
    "yoagent.providers": ProvidersError,
    "yoagent.tools": ToolsError,
    "yoagent.mcp": McpError,
    "yoagent.pricing": PriceError,
    "yoagent.decision": DecisionError,
    "yoagent.gasp": GaspError,
    "yoagent.testing": TestingError,
    "yoagent.cli": CliError,
    "yoagent.openapi": OpenApiError,
    # Ray raises no error of its own: a task's failure is data (TaskError on its result),
    # and misuse (a bad argument, a batch run twice) is a built-in error.
    "yoagent.ray": None,
    "yoagent.ui": UiError,
    "yoagent.a2a": A2AError,
    "yoagent.dbos": DbosError,
}
"""Each package's base for the errors it defines (``None``: it defines none)."""


def _public_modules(package: str) -> Iterator[ModuleType]:
    root = importlib.import_module(package)
    yield root
    for found in pkgutil.walk_packages(root.__path__, package + "."):
        parts = found.name.split(".")
        if any(part.startswith("_") for part in parts):
            continue  # private modules, __main__ included
        yield importlib.import_module(found.name)


def _exceptions(package: str) -> dict[str, type[BaseException]]:
    """Every exception class a user of ``package`` can reach by a public name: in an
    ``__all__`` (loaded on first use or not), or defined in a public module."""
    found: dict[str, type[BaseException]] = {}
    for module in _public_modules(package):
        exported = set(getattr(module, "__all__", ()))
        names = {**vars(module), **{name: getattr(module, name) for name in exported}}
        for name, value in names.items():  # a name made on first use included
            if not (inspect.isclass(value) and issubclass(value, BaseException)):
                continue
            defined_here = value.__module__.split(".")[:2] == package.split(".")
            if name in exported or (defined_here and not name.startswith("_")):
                found[f"{module.__name__}.{name}"] = value
    return found


def test_every_package_is_in_the_table() -> None:
    """A new package gets a base (or says it raises none) the day it appears."""
    packages = {
        f"yoagent.{init.parent.name}"
        for pattern in (
            "packages/*/src/yoagent/*/__init__.py",
            "integrations/*/src/yoagent/*/__init__.py",
        )
        for init in ROOT.glob(pattern)
    }
    assert packages == set(BASES)


@pytest.mark.parametrize("package", sorted(BASES))
def test_every_public_exception_is_a_yoagent_error_under_its_package_base(package: str) -> None:
    base = BASES[package]
    found = _exceptions(package)
    outside = sorted(name for name, cls in found.items() if not issubclass(cls, YoagentError))
    assert outside == []
    own = {name: cls for name, cls in found.items() if cls.__module__.startswith(package)}
    if base is None:
        assert own == {}, "this package now defines errors: give it a base under YoagentError"
        return
    assert issubclass(base, YoagentError)
    assert sorted(name for name, cls in own.items() if not issubclass(cls, base)) == []


def test_the_walk_sees_the_errors_it_must() -> None:
    """The walk reaches errors outside the packages' ``__all__`` (public modules)."""
    assert "yoagent.providers.models.UnknownPresetError" in _exceptions("yoagent.providers")
    assert "yoagent.cli.config.ConfigError" in _exceptions("yoagent.cli")
    assert "yoagent.gasp.vocabulary.PackError" in _exceptions("yoagent.gasp")
    assert "yoagent.core.ProviderError" in _exceptions("yoagent.core")
    assert "yoagent.core.session.SessionCorruptError" in _exceptions("yoagent.core")


def test_built_in_bases_are_kept() -> None:
    from yoagent.core import ResumeError
    from yoagent.core.provider import ProviderNotFoundError
    from yoagent.gasp import LeaseError, OpsError
    from yoagent.pricing import PriceDataError
    from yoagent.providers.models import UnknownPresetError

    assert issubclass(ResumeError, ValueError) and issubclass(OpsError, ValueError)
    assert issubclass(ProviderNotFoundError, LookupError)
    assert issubclass(UnknownPresetError, KeyError) and issubclass(LeaseError, RuntimeError)
    assert issubclass(PriceDataError, ValueError)
    assert issubclass(BadRunInputError, ValueError)
    assert issubclass(RemoteAgentError, ToolError)


# --- every error crosses a process boundary --------------------------------------------------


def _sample(annotation: Any) -> Any:
    """A plain value of the annotated type, for building an error from its signature."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return _sample(options[0])
    if origin in (list, tuple, collections.abc.Sequence, collections.abc.Iterable):
        return ["one problem", "another"]
    if origin in (dict, collections.abc.Mapping):
        return {"name": "value"}
    if isinstance(annotation, type):
        if issubclass(annotation, enum.Enum):
            return next(iter(annotation))
        for kind, value in ((bool, True), (int, 7), (float, 1.5), (str, "what went wrong")):
            if issubclass(annotation, kind):
                return value
        if issubclass(annotation, BaseException):
            return ValueError("the cause")
    return "what went wrong"


def _example(cls: type[BaseException]) -> BaseException:
    """An instance of ``cls``, every argument it requires given a plain value."""
    try:
        signature = inspect.signature(cls)
    except ValueError:  # no __init__ of its own: the message is its argument
        return cls("what went wrong")
    hints = typing.get_type_hints(cls.__init__)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in signature.parameters.values():
        if parameter.default is not parameter.empty or parameter.kind in (
            parameter.VAR_POSITIONAL,
            parameter.VAR_KEYWORD,
        ):
            continue
        value = _sample(hints.get(parameter.name, str))
        if parameter.kind == parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    return cls(*args, **kwargs)


def _every_exception() -> dict[str, type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for package in BASES:
        for name, cls in _exceptions(package).items():
            if cls.__module__.startswith("yoagent.") and cls not in found.values():
                found[name] = cls
    return found


@pytest.mark.parametrize(("name", "cls"), sorted(_every_exception().items()))
def test_every_error_round_trips_through_pickle(name: str, cls: type[BaseException]) -> None:
    """A worker pool, Ray or DBOS sends an error back pickled: it must arrive the same
    type, with the same message and the same fields (``YoagentError.__reduce__``)."""
    error = _example(cls)
    restored = pickle.loads(pickle.dumps(error))
    assert type(restored) is cls
    assert str(restored) == str(error)
    assert restored.args == error.args
    assert pickle.dumps(vars(restored)) == pickle.dumps(vars(error))


# --- one translation point per package ------------------------------------------------------

FOREIGN = [
    httpx.ConnectError("refused"),
    httpx.ReadTimeout("slow"),
    httpx.RemoteProtocolError("peer closed"),
    httpx.DecodingError("bad gzip"),
]


def _failing_client(error: Exception) -> httpx.AsyncClient:
    def handler(request: httpx.Request) -> httpx.Response:
        raise error

    return httpx.AsyncClient(transport=httpx.MockTransport(handler))


async def _provider_turn(client: httpx.AsyncClient) -> None:
    model = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS,
        provider="local",
        id="m",
        base_url="http://model.test/v1",
        api_key="k",
    )
    config = StreamConfig(model=model, system_prompt="", messages=[UserMessage.from_text("hi")])
    await OpenAiCompletionsProvider(model, http_client=client).stream(config, lambda _: None)


async def _decision_call(client: httpx.AsyncClient) -> None:
    model = DecisionModel.local("http://decision.test").with_retry(RetryConfig.none())
    await model.with_client(client).noul("s", "q?")


async def _openapi_load(client: httpx.AsyncClient) -> None:
    await OpenApiToolAdapter.from_url("http://api.test/openapi.json", client=client)


SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "t", "version": "1"},
    "servers": [{"url": "http://api.test"}],
    "paths": {
        "/ping": {"get": {"operationId": "ping", "responses": {"200": {"description": "ok"}}}}
    },
}


async def _a2a_connect(client: httpx.AsyncClient) -> None:
    await A2AAgentTool.connect("http://a2a.test", http=client)


async def _openapi_call(client: httpx.AsyncClient) -> None:
    tool = OpenApiToolAdapter.from_spec(SPEC, client=client).tool("ping")
    await tool.execute({}, ToolContext(tool_call_id="c1", tool_name=tool.name))


HTTP_PATHS: dict[str, tuple[Callable[[httpx.AsyncClient], Awaitable[None]], type[Exception]]] = {
    "providers: a model call": (_provider_turn, ProviderError),
    "decision: a decision-model call": (_decision_call, DecisionError),
    "openapi: fetching a document": (_openapi_load, OpenApiError),
    "openapi: a tool call (the model reads it)": (_openapi_call, ToolError),
    "a2a: reaching a remote agent (a call's error result)": (_a2a_connect, RemoteAgentError),
}


@pytest.mark.parametrize("error", FOREIGN, ids=lambda error: type(error).__name__)
@pytest.mark.parametrize("path", sorted(HTTP_PATHS))
async def test_an_httpx_error_arrives_as_the_packages_own_error(
    path: str, error: Exception
) -> None:
    send, expected = HTTP_PATHS[path]
    async with _failing_client(error) as client:
        with pytest.raises(YoagentError) as caught:
            await send(client)
    assert isinstance(caught.value, expected)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__


@pytest.fixture
def refused_url() -> str:
    """A loopback URL nothing listens on: connecting is refused at once."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


async def test_a_refused_price_fetch_is_a_price_fetch_error(refused_url: str) -> None:
    with pytest.raises(PriceFetchError) as caught:
        await fetch_prices(PriceSource.price_file(refused_url + "/prices.json"), timeout=5)
    assert "ConnectError" in str(caught.value) and caught.value.__suppress_context__


async def test_a_refused_mcp_server_is_an_mcp_error(refused_url: str) -> None:
    with pytest.raises(McpError):
        async with McpClient.http(refused_url + "/mcp", handshake_timeout=5):
            pass


def test_git_failures_arrive_as_gasp_errors(tmp_path: Path) -> None:
    with pytest.raises(RepositoryError) as opened:
        AgentRepo.open(tmp_path)
    assert str(opened.value) == f"{tmp_path} is not a git repository (the GASP layout requires one)"
    with pytest.raises(RestoreError) as cloned:
        restore(tmp_path / "nowhere", tmp_path / "copy")
    assert str(cloned.value).startswith("git clone failed: ")
    for error in (opened.value, cloned.value):
        assert isinstance(error, GaspError) and error.__suppress_context__
