"""A request's head, in all, within `MAX_HEADER_BYTES`: larger is a 431 with a JSON `detail`.

hypercorn refuses a request head only when it cannot hold it in its buffer (`h11_max_incomplete_size`, 16 KiB):
a head that arrives whole in one read of up to 64 KiB is parsed and passed on however large. `limit_headers`
makes the documented limit hold whatever the reads: a request whose head (its target, path and query, and its
header fields, names and values with their `: ` and line ends) exceeds it is answered 431 before any route,
authentication or body is read, with `Connection: close` (the body, if any, is not read). A WebSocket
handshake that large gets the same answer (through the ASGI `websocket.http.response` extension, which
hypercorn offers; closed before it is accepted otherwise). The answer carries no request id and writes no
request log line (no route saw it). Pure ASGI; costs a sum over the header lengths per request.
"""

from __future__ import annotations

import json
from typing import Any

from hypercorn.typing import ASGIReceiveCallable, ASGISendCallable, Scope

MAX_HEADER_BYTES = 16 * 1024
DETAIL = "Request header fields too large"


def head_bytes(scope: Any) -> int:
    """The size of a request's head as sent: its target (path and query) and each `name: value` header line
    with its line end."""
    target = len(scope.get("raw_path") or scope["path"].encode()) + len(scope.get("query_string") or b"")
    return target + sum(len(name) + len(value) + 4 for name, value in scope["headers"])


def limit_headers(app: Any, max_bytes: int = MAX_HEADER_BYTES) -> Any:
    """`app` behind the limit (see the module docstring)."""

    async def limited(scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        if scope["type"] in ("http", "websocket"):
            size = head_bytes(scope)
            if size > max_bytes:
                await _refuse(scope, size, max_bytes, send)
                return
        await app(scope, receive, send)

    return limited


async def _refuse(scope: Any, size: int, max_bytes: int, send: ASGISendCallable) -> None:
    body = json.dumps({"detail": f"{DETAIL}: {size:,} bytes, at most {max_bytes:,}"}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 431, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})
    elif "websocket.http.response" in scope.get("extensions", {}):  # the handshake answered like any request
        await send({"type": "websocket.http.response.start", "status": 431, "headers": headers})
        await send({"type": "websocket.http.response.body", "body": body, "more_body": False})
    else:
        await send({"type": "websocket.close", "code": 1008, "reason": DETAIL})
