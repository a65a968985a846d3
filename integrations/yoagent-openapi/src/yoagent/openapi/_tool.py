"""OpenApiTool: one operation as an :class:`~yoagent.core.AgentTool`."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Final

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from yoagent.core import ToolContext, ToolError, ToolResult
from yoagent.core.support import merge_headers

from ._http import Caller, OutgoingRequest
from ._operation import Operation
from ._serialize import (
    SerializeProblem,
    content_value,
    cookie_pairs,
    header_value,
    path_value,
    query_pairs,
)

MAX_REPORTED_PROBLEMS: Final = 5
_MAX_PROBLEM_CHARS: Final = 300


class OpenApiTool:
    """Calls one API operation. Its schema is the operation's parameters and JSON body.

    Arguments are checked against that same schema before anything is sent: a call that
    does not fit it is an error result naming each problem, and no request goes out.
    """

    def __init__(self, operation: Operation, caller: Caller) -> None:
        self.operation = operation
        self._caller = caller
        self._validator = Draft202012Validator(operation.schema)

    @property
    def name(self) -> str:
        return self.operation.tool_name

    @property
    def description(self) -> str:
        return self.operation.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.operation.schema

    @property
    def method(self) -> str:
        """The HTTP method, upper case."""
        return self.operation.method.upper()

    @property
    def path(self) -> str:
        """The path template, as the document writes it."""
        return self.operation.path

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Validate ``arguments``, send the request, and return the response as text."""
        self._check(arguments)
        try:
            outgoing = self._request(arguments)
        except SerializeProblem as problem:
            raise ToolError(f"invalid arguments for {self.name}: {problem}") from None
        return await self._caller.call(outgoing, ctx.cancel)

    def _check(self, arguments: dict[str, Any]) -> None:
        found: Iterable[ValidationError] = self._validator.iter_errors(arguments)  # pyright: ignore[reportUnknownMemberType]
        errors = sorted(found, key=lambda e: [str(part) for part in e.absolute_path])
        if not errors:
            return
        problems: list[str] = []
        for error in errors[:MAX_REPORTED_PROBLEMS]:
            where = "/".join(str(part) for part in error.absolute_path) or "(arguments)"
            message = error.message
            if len(message) > _MAX_PROBLEM_CHARS:
                message = message[: _MAX_PROBLEM_CHARS - 1] + "…"
            problems.append(f"{where}: {message}")
        if len(errors) > MAX_REPORTED_PROBLEMS:
            problems.append(f"and {len(errors) - MAX_REPORTED_PROBLEMS} more")
        raise ToolError(f"invalid arguments for {self.name}: " + "; ".join(problems))

    def _request(self, arguments: dict[str, Any]) -> OutgoingRequest:
        operation = self.operation
        path = operation.path
        params: list[tuple[str, str]] = []
        headers: dict[str, str] = {}
        cookies: list[tuple[str, str]] = []
        for binding in operation.parameters:
            if binding.argument not in arguments:
                continue
            value = arguments[binding.argument]
            if binding.media_type is not None:
                value = content_value(value, binding.media_type)
            if binding.location == "path":
                text = path_value(binding.name, value, binding.style, binding.explode)
                if not text:
                    raise SerializeProblem(f"path parameter {binding.name!r} must not be empty")
                path = path.replace(f"{{{binding.name}}}", text)
            elif binding.location == "query":
                params.extend(query_pairs(binding.name, value, binding.style, binding.explode))
            elif binding.location == "header":
                sent = {binding.name: header_value(binding.name, value, binding.explode)}
                headers = merge_headers(headers, sent)
            else:
                cookies.extend(cookie_pairs(binding.name, value, binding.explode))
        if cookies:
            pairs = [_pop_header(headers, "cookie"), *(f"{n}={v}" for n, v in cookies)]
            headers["cookie"] = "; ".join(pair for pair in pairs if pair)
        content: bytes | None = None
        if operation.body is not None and operation.body.argument in arguments:
            body = arguments[operation.body.argument]
            content = json.dumps(body, ensure_ascii=False).encode("utf-8")
            media_type = operation.body.media_type
            kind = "application/json" if "*" in media_type else media_type
            headers = merge_headers(headers, {"content-type": kind})
        return OutgoingRequest(
            method=self.method,
            url=operation.base_url + path,
            params=params,
            headers=headers,
            content=content,
            label=f"{self.method} {operation.path}",
        )

    def __repr__(self) -> str:
        return f"OpenApiTool({self.name!r}, {self.method} {self.path})"


def _pop_header(headers: dict[str, str], name: str) -> str:
    """Remove the header named ``name`` (lower case) in any case and return its value: a
    header parameter named ``Cookie`` is joined to the cookie parameters, not sent apart."""
    found = [key for key in headers if key.lower() == name]
    return "; ".join(headers.pop(key) for key in found)
