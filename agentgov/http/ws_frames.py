"""Event frames written straight to a subscriber's socket, so a fan-out costs one write per subscriber.

Delivering one event to 1,000 WebSocket subscribers the ordinary way wakes 1,000 tasks, and each passes the
message through Quart, hypercorn's WebSocket stream and wsproto before its socket write: about 100 µs per
subscriber here, 100 ms for the last one. The notifier instead builds the event's frame once
(`agentgov.actors.notifier.text_frame`) and, for each subscriber with nothing queued, writes it to the
socket at once through the subscriber's `FrameWriter`; only what the socket does not take at once (or a
subscriber with events still queued) goes through the subscriber's task, in order.

`expose_send(app)` wraps the ASGI app so a WebSocket's scope carries hypercorn's `send` (under `SEND_KEY`);
`FrameWriter.of(send)` finds the connection behind the ASGI `send` callable hypercorn 0.18 gives a
WebSocket over HTTP/1.1 (`WSStream.app_send` -> `H11Protocol.stream_send` -> `TCPServer.protocol_send`).
For any other server or protocol it returns None and every event takes the ordinary path. Frames are
complete, unfragmented and uncompressed text frames: valid on every connection, with or without
permessage-deflate (an endpoint may leave any message uncompressed, RFC 7692 section 6).
"""

from __future__ import annotations

from typing import Any

from hypercorn.events import RawData
from hypercorn.protocol.h11 import H11Protocol
from hypercorn.protocol.ws_stream import WSStream
from hypercorn.trio.tcp_server import TCPServer
from wsproto.connection import ConnectionState

from agentgov.http.server_patches import send_now

SEND_KEY = "agentgov.asgi_send"


def expose_send(app: Any) -> Any:
    """`app` with every WebSocket scope carrying the server's ASGI `send` under `SEND_KEY` (HTTP requests
    pass through untouched)."""

    async def with_send(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "websocket":
            scope = {**scope, SEND_KEY: send}
        await app(scope, receive, send)

    return with_send


class FrameWriter:
    """Writes whole frames to one hypercorn WebSocket connection, in order with its other writes."""

    def __init__(self, stream: WSStream, server: TCPServer) -> None:
        self._stream = stream
        self._server = server

    @classmethod
    def of(cls, send: Any) -> FrameWriter | None:
        """The writer for the connection behind an ASGI WebSocket `send`, or None when it is not hypercorn's
        HTTP/1.1 WebSocket (then use the ordinary path). Never raises."""
        stream = getattr(send, "__self__", None)
        if not isinstance(stream, WSStream):
            return None
        protocol = getattr(stream.send, "__self__", None)
        if not isinstance(protocol, H11Protocol):
            return None
        server = getattr(protocol.send, "__self__", None)
        if not isinstance(server, TCPServer):
            return None
        return cls(stream, server)

    @property
    def open(self) -> bool:
        """True while data frames may be sent: neither side has begun closing."""
        connection = getattr(self._stream, "connection", None)
        return not self._stream.closed and connection is not None and connection.state is ConnectionState.OPEN

    def write_now(self, frame: bytes) -> int:
        """Write what the socket takes of `frame` without yielding; the number of bytes written (0 when the
        connection is closing, another write is under way, or the socket buffer is full). The caller must
        send the rest with `write` before anything else. Never raises."""
        if not self.open:
            return 0
        return send_now(self._server, frame)

    async def write(self, data: bytes) -> None:
        """Send `data` (a frame or the rest of one) after any write under way. A connection that is gone is
        closed by hypercorn; this then returns. Cancellation: the write is shielded (bounded by the socket)."""
        await self._server.protocol_send(RawData(data=data))
