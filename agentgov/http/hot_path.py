"""Routes served straight from ASGI, in front of Quart: the policy check and the prompt guard's validation.

`POST /api/v1/policies/check` is the decision path every agent action goes through (and
`POST /api/v1/guard/validate` every text an agent reads). Quart's per-request
machinery (request and app contexts, hooks, request and response objects) costs more CPU than the check
itself, so `HotPath` wraps the Quart app's ASGI callable and answers the routes given to it directly.
Everything else goes to Quart unchanged.

A hot route keeps the contract of every other route, from the same code:

* authentication and permission come from the `@authorize` declaration on the route's Quart view
  (`auth.admit`), so the permission matrix and its tests cover it;
* the body: 415 unless JSON, 413 above `MAX_CONTENT_LENGTH`, 400 when empty or not JSON (the order of the
  Quart path: credentials first, then the body);
* errors are `{"detail": ...}` JSON from `errors.api_error_for`, with the same statuses and headers;
* `X-Request-ID` is echoed or made, and one log line is written per request (`request_log`).

The Quart view stays registered: it documents the route in OpenAPI and serves it when the app is built
with `hot_path=False`. A client that disconnects before its body arrived gets no answer and nothing runs.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, cast

from hypercorn.typing import ASGIReceiveCallable, ASGISendCallable, HTTPScope, Scope
from quart_trio import QuartTrio

from agentgov.http.auth import RouteRule, admit, rule_of
from agentgov.http.errors import ApiError, api_error_for
from agentgov.http.request_log import log_request, start_request
from agentgov.http.validation import parse_json, require_json
from agentgov.integrations.catalogue import integration_var, named_by
from agentgov.security.principal import Principal
from agentgov.services import Services

Handler = Callable[[Services, Principal, Any], Awaitable[dict[str, Any]]]
"""`handler(services, principal, parsed JSON body)` -> the 200 answer; raises `ApiError` for any other."""


@dataclasses.dataclass(frozen=True)
class HotRoute:
    """A JSON-body route answered by `handler`; `endpoint` names the Quart view that declares it."""

    method: str
    path: str
    endpoint: str
    handler: Handler


class HotPath:
    """ASGI middleware around a Quart app: serves `routes` itself, passes every other request on."""

    def __init__(self, app: QuartTrio, routes: Iterable[HotRoute]) -> None:
        self._inner = app.asgi_app
        self._services: Services = app.extensions["agentgov"]
        self._max_body: int = app.config["MAX_CONTENT_LENGTH"]
        self._routes: dict[tuple[str, str], tuple[RouteRule, Handler]] = {
            (r.method, r.path): (rule_of(app.view_functions[r.endpoint]), r.handler) for r in routes
        }

    async def __call__(self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        route = self._routes.get((scope["method"], scope["path"])) if scope["type"] == "http" else None
        if route is None:
            await self._inner(scope, receive, send)
        else:
            await self._serve(*route, cast(HTTPScope, scope), receive, send)

    async def _serve(
        self, rule: RouteRule, handler: Handler, scope: HTTPScope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        started = time.perf_counter()
        headers: dict[str, str] = {}
        for name, value in scope["headers"]:
            headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        request_id = start_request(headers.get("x-request-id"))
        integration_var.set(named_by(headers.get("x-agentgov-integration")))
        extra_headers: dict[str, str] = {}
        try:
            who = await admit(rule, lambda name: headers.get(name.lower()), self._services)
            require_json(headers.get("content-type", "").split(";", 1)[0].strip().lower())
            raw = await self._read_body(headers.get("content-length"), receive)
            if raw is None:
                return  # the client went away
            status, answer = 200, await handler(self._services, who, parse_json(raw))
        except Exception as exc:
            error = api_error_for(exc)
            status, answer, extra_headers = error.status, {"detail": error.detail, **error.extra}, error.headers
        body = (json.dumps(answer, separators=(",", ":")) + "\n").encode()  # answers hold only JSON types
        response_headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"x-request-id", request_id.encode()),
            *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra_headers.items()),
        ]
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
        log_request(request_id, scope["method"], scope["path"], status, started)

    async def _read_body(self, declared_length: str | None, receive: ASGIReceiveCallable) -> bytes | None:
        """The whole body, or None if the client disconnected. Raises `ApiError` 413 above the limit."""
        if declared_length is not None and declared_length.isdigit() and int(declared_length) > self._max_body:
            raise ApiError(413, "Request body too large")
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk = cast(bytes, message.get("body", b""))
            size += len(chunk)
            if size > self._max_body:
                raise ApiError(413, "Request body too large")
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)
