"""Events written straight to subscribers' sockets (`agentgov.http.ws_frames`) through real hypercorn.

The frames are byte-for-byte what wsproto would send; a subscriber whose socket is full gets the rest of a
frame and every later event through its own task, in order; a client that negotiated permessage-deflate
reads the uncompressed frames; events still reach every subscriber after a close from either side.
"""

from __future__ import annotations

import json
import socket
from typing import Any

import pytest
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, CloseConnection, Request, TextMessage
from wsproto.extensions import PerMessageDeflate
from wsproto.frame_protocol import FrameProtocol

from agentgov.actors.notifier import GetStats, Publish, notifier, text_frame
from tests.notifications.test_websocket import Server, new_tenant, user_token
from tests.notifications.test_websocket import server as server  # the fixture

WAIT = 20


@pytest.mark.parametrize("size", [0, 1, 125, 126, 127, 65535, 65536, 70000])
def test_text_frame_is_what_wsproto_sends(size: int) -> None:
    text = ("é" * size)[:size] if size % 2 else "x" * size
    assert text_frame(text) == FrameProtocol(client=False, extensions=[]).send_data(text, True)


class RawSubscriber:
    """A WebSocket client over a plain socket with wsproto, reading only when told to."""

    def __init__(self, url: str, *, deflate: bool = False, receive_buffer: int | None = None) -> None:
        host_port, _, target = url.removeprefix("ws://").partition("/")
        host, _, port = host_port.partition(":")
        self.sock = socket.socket()
        if receive_buffer is not None:
            self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        self.sock.connect((host, int(port)))
        self.ws = WSConnection(ConnectionType.CLIENT)
        extensions = [PerMessageDeflate()] if deflate else []
        self.sock.sendall(self.ws.send(Request(host=host_port, target="/" + target, extensions=extensions)))
        self.accepted: AcceptConnection | None = None
        self.texts: list[str] = []
        self.closed: CloseConnection | None = None
        self._parts: list[str] = []

    async def read_until(self, done: Any) -> None:
        """Read and parse until `done(self)` is true (in a thread: the socket is blocking)."""
        with trio.fail_after(WAIT):
            while not done(self):
                data = await trio.to_thread.run_sync(self.sock.recv, 1 << 20)
                self.ws.receive_data(data or None)
                for event in self.ws.events():
                    if isinstance(event, AcceptConnection):
                        self.accepted = event
                    elif isinstance(event, TextMessage):
                        self._parts.append(event.data)
                        if event.message_finished:
                            self.texts.append("".join(self._parts))
                            self._parts.clear()
                    elif isinstance(event, CloseConnection):
                        self.closed = event
                if not data:
                    return

    def events(self, name: str) -> list[dict[str, Any]]:
        return [m for m in map(json.loads, self.texts) if m["event"] == name]


async def connect(server: Server, **options: Any) -> tuple[str, RawSubscriber]:
    tenant = await new_tenant(server, "Frames")
    token = await user_token(server, tenant["id"])
    subscriber = RawSubscriber(server.ws_url(token), **options)
    await subscriber.read_until(lambda s: s.events("system.status"))
    return tenant["id"], subscriber


async def test_a_full_socket_gets_every_event_in_order(server: Server) -> None:
    tenant_id, subscriber = await connect(server, receive_buffer=4096)
    ref = notifier(server.services, tenant_id)
    count, padding = 60, "p" * 40_000  # ~2.4 MB: far more than the socket buffers hold
    for n in range(count):
        ref.tell(Publish("hitl.requested", {"n": n, "padding": padding}))
    await ref.ask(GetStats())  # every Publish handled: the socket is full, the rest queued
    await subscriber.read_until(lambda s: len(s.events("hitl.requested")) == count)
    assert [m["data"]["n"] for m in subscriber.events("hitl.requested")] == list(range(count))
    assert all(m["data"]["padding"] == padding for m in subscriber.events("hitl.requested"))
    stats = await ref.ask(GetStats())
    assert stats.subscribers == 1 and stats.disconnected_slow == 0
    subscriber.sock.close()


async def test_a_deflate_client_reads_the_uncompressed_frames(server: Server) -> None:
    tenant_id, subscriber = await connect(server, deflate=True)
    assert subscriber.accepted is not None and subscriber.accepted.extensions  # deflate was negotiated
    ref = notifier(server.services, tenant_id)
    for n in range(5):
        ref.tell(Publish("hitl.requested", {"n": n, "text": "compressible " * 50}))
    await subscriber.read_until(lambda s: len(s.events("hitl.requested")) == 5)
    assert [m["data"]["n"] for m in subscriber.events("hitl.requested")] == list(range(5))
    subscriber.sock.close()


async def test_no_frame_follows_the_close(server: Server) -> None:
    tenant_id, subscriber = await connect(server)
    other = RawSubscriber(server.ws_url(await user_token(server, tenant_id)))
    await other.read_until(lambda s: s.events("system.status"))
    subscriber.sock.sendall(subscriber.ws.send(CloseConnection(code=1000)))
    await subscriber.read_until(lambda s: s.closed is not None)
    notifier(server.services, tenant_id).tell(Publish("hitl.requested", {"n": 1}))
    await other.read_until(lambda s: s.events("hitl.requested"))  # published after the close
    subscriber.sock.settimeout(1.0)
    trailing = b""
    try:
        while chunk := subscriber.sock.recv(65536):
            trailing += chunk
    except TimeoutError:
        pass
    assert trailing == b""  # the server closed the connection; no frame after its close frame
    assert not subscriber.events("hitl.requested")
    subscriber.sock.close()
    other.sock.close()
