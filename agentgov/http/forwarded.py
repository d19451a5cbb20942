"""The client's address, scheme and host as a trusted reverse proxy reports them.

Behind a reverse proxy every connection comes from the proxy, so the per-address login throttle would
count every user together and URLs built from the request (the single sign-on callback) would name the
proxy's side. With `TRUSTED_PROXY_HOPS=n` (n reverse proxies in front, each appending to the headers),
`TrustedProxies` takes, for each HTTP request and WebSocket:

- the client address from the n-th value from the right of `X-Forwarded-For`,
- the scheme from `X-Forwarded-Proto` and the host from `X-Forwarded-Host`, likewise,

and leaves the request as it came when a header has fewer than n values (nothing a client sends beyond
what the proxies appended is trusted). With 0 (the default, for a service reached directly) the headers
are ignored: anyone could send them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

ASGIApp = Any

_FOR = b"x-forwarded-for"
_PROTO = b"x-forwarded-proto"
_HOST = b"x-forwarded-host"
_SCHEMES = {"http": {"http", "https"}, "websocket": {"ws", "wss"}}


class TrustedProxies:
    """ASGI middleware applying `X-Forwarded-*` from `hops` trusted proxies (module doc). `hops` >= 1."""

    def __init__(self, app: ASGIApp, hops: int) -> None:
        if hops < 1:
            raise ValueError("hops must be at least 1")
        self.app = app
        self.hops = hops

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        kind = scope["type"]
        if kind in _SCHEMES:
            scope = self._rewrite(scope, kind)
        await self.app(scope, receive, send)

    def _rewrite(self, scope: dict[str, Any], kind: str) -> dict[str, Any]:
        headers: list[tuple[bytes, bytes]] = scope["headers"]
        client = trusted_value(headers, _FOR, self.hops)
        proto = trusted_value(headers, _PROTO, self.hops)
        host = trusted_value(headers, _HOST, self.hops)
        if client is None and proto is None and host is None:
            return scope
        scope = dict(scope)  # the server's scope is left as it was
        if client:
            scope["client"] = (client, 0)
        if proto:
            proto = proto.lower()
            if kind == "websocket":
                proto = {"https": "wss", "http": "ws"}.get(proto, proto)
            if proto in _SCHEMES[kind]:
                scope["scheme"] = proto
        if host:
            scope["headers"] = [(k, v) for k, v in headers if k.lower() != b"host"] + [(b"host", host.encode())]
        return scope


def trusted_value(headers: Iterable[tuple[bytes, bytes]], name: bytes, hops: int) -> str | None:
    """The `hops`-th value from the right of the comma-separated header `name` (all its lines joined), or
    None when it holds fewer values. Never raises."""
    values: list[str] = []
    for key, value in headers:
        if key.lower() == name:
            values.extend(part.strip() for part in value.decode("latin-1").split(","))
    if len(values) < hops:
        return None
    return values[-hops] or None
