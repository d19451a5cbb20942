"""Fixes to hypercorn 0.18's HTTP/1.1 connection handling under trio, applied when the server starts.

`apply()` patches hypercorn's classes in place (idempotent); `revert()` restores them (tests use it to show
the unpatched behaviour). Each fix below is written as a note for upstream: what is wrong, where, and the
minimal fix. The patched behaviour is tested through real hypercorn with raw sockets in
`tests/spine/test_connections.py`.

1. Connection work is cancelled with the application (`trio/tcp_server.py`, `TCPServer.protocol_send`).
   When an ASGI app sends its last body message, hypercorn recycles or closes the connection *inside the
   app's `send()` call*, i.e. in the app's task: `H11Protocol._maybe_recycle` delivers `http.disconnect`
   and then sends `Closed` (close the socket) or `Updated(idle=True)` (start the keep-alive timer).
   Quart-Trio cancels its own nursery as soon as it receives `http.disconnect`, so the close is cancelled at
   `send_eof()`'s checkpoint (the socket is never closed: `Connection: close` and HTTP/1.0 connections stay
   open), and the keep-alive timer task, started with `nursery.start` from a cancelled task, is never
   moved to the connection's nursery and dies at once (trio's `started()` does not reparent a task whose
   starter is cancelled), so `keep_alive_timeout` never closes an idle connection. The bare Quart-Trio hello
   app shows all three. Fix: run `protocol_send` for every event in a shielded cancel scope (it already
   shields `send_all`); it does only bounded connection bookkeeping.

2. An answer sent before the request body was read stalls the connection (`protocol/h11.py`,
   `H11Protocol._maybe_recycle` and `_handle_events`). With the response done and the request body still
   arriving, h11 refuses `start_next_cycle`; hypercorn then means to close (which fix 1 makes happen) and,
   when the close is lost, stops handling events (`elif self.stream is None: break`), so the rest of the
   body and the next request are parsed but never answered. The h11 rule is: read and discard the rest of
   the body, or close. Fix: when the response starts with the body unfinished and more than
   `DRAIN_LIMIT` bytes (or an unknown, chunked amount) still to come, add `Connection: close` and close
   after the response; otherwise keep reading after the response, discard the rest of the body and start
   the next cycle when it ends (the keep-alive timer runs meanwhile, so a client that never sends the body
   is closed after `keep_alive_timeout`). Events already buffered (the next request) are handled at once.

3. Closing right after the response loses it (`TCPServer._close`): `send_eof()` then `aclose()` at once
   makes the kernel answer the client's unread body bytes with a TCP reset, which can destroy the response
   before the client reads it (RFC 9112 section 9.6). Fix: a lingering close: half-close (FIN), keep
   reading and discarding until the client closes or `LINGER_SECONDS` pass, then close.

4. A full app queue deadlocks the connection (`trio/task_group.py`, `TaskGroup.spawn_app`). The reader
   blocks putting body chunks into the app's queue (`max_app_queue_size`) when the app answers without
   reading them; the app's own `send()` then blocks putting `http.disconnect` into the same full queue.
   Both wait forever. Fix: deliver `http.disconnect` without blocking (or from a helper task when the queue
   is full), and close the app's queue when the app returns, so puts to a finished app are dropped.

5. Errors hypercorn answers itself (`H11Protocol._send_error_response` for 400/431 on a malformed or
   oversized request head, `HTTPStream._send_error_response` for an app that ended without answering)
   have an empty body. Fix (a product choice, not a bug): a JSON `{"detail": ...}` body.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Awaitable, Callable
from http import HTTPStatus
from itertools import chain
from math import inf
from typing import Any

import h11
import trio
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol import h11 as hypercorn_h11
from hypercorn.protocol import http_stream
from hypercorn.protocol.events import Body, Data, EndBody, Response
from hypercorn.protocol.events import Event as StreamEvent
from hypercorn.trio import task_group as trio_task_group
from hypercorn.trio import tcp_server

DRAIN_LIMIT = 1024 * 1024
"""Most request-body bytes still to come that are read and discarded after an early answer to keep the
connection; a larger or unknown (chunked) remainder closes the connection after the answer instead."""

LINGER_SECONDS = 2.0
"""How long a closing connection keeps reading (and discarding) before it closes, so its last answer is
not destroyed by a TCP reset."""

MAX_RECV = tcp_server.MAX_RECV

_DETAILS = {
    400: "Bad request: malformed HTTP request",
    431: "Request header fields too large",
    500: "Internal error: no response was produced",
}

_originals: dict[tuple[type, str], Any] = {}


def error_body(status: int) -> bytes:
    """The JSON `{"detail": ...}` body of an error hypercorn answers by itself."""
    try:
        default = HTTPStatus(status).phrase
    except ValueError:
        default = "Error"
    return json.dumps({"detail": _DETAILS.get(status, default)}).encode()


def _error_headers(body: bytes) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),
    ]


# --- 1 and 3: TCPServer ---------------------------------------------------------------------------------


async def _protocol_send(self: tcp_server.TCPServer, event: Event) -> None:
    if isinstance(event, RawData):
        sent = send_now(self, event.data)
        if sent == len(event.data):
            return
        if sent:
            event = RawData(data=event.data[sent:])
    with trio.CancelScope(shield=True):
        if isinstance(event, Closed):
            await _start_lingering_close(self)
            await self.protocol.handle(Closed())
        elif isinstance(event, RawData):
            async with self.send_lock:
                try:
                    await self.stream.send_all(event.data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    await self.protocol.handle(Closed())
        elif isinstance(event, Updated):
            if event.idle:
                await self.idle_task.restart(self._task_group, self._idle_timeout)
            else:
                await self.idle_task.stop()


def send_now(self: tcp_server.TCPServer, data: bytes) -> int:
    """Write what the kernel takes of `data` at once, without yielding; the number of bytes written.

    Only a plain TCP stream that nobody else is writing to (the send lock is free, so no earlier bytes
    are queued) is written to, with one non-blocking `write`; anything else, a full socket buffer or an
    error returns 0 and the caller takes the usual path (which reports the error). This saves two trio
    checkpoints per write: with many WebSocket subscribers each woken for the same event, every
    checkpoint sends each writer to the back of the run queue behind all the others, so no subscriber got
    its frame until every one had been prepared.
    """
    stream = self.stream
    if type(stream) is not trio.SocketStream or self.send_lock.locked() or not data:
        return 0
    if stream.socket.did_shutdown_SHUT_WR:
        return 0
    try:
        return os.write(stream.socket.fileno(), data)
    except OSError:  # would block, or the connection is gone: the usual path waits or reports it
        return 0


async def _start_lingering_close(self: tcp_server.TCPServer) -> None:
    """Half-close, stop the keep-alive timer, and make the reader give up after `LINGER_SECONDS`."""
    if getattr(self, "_lingering", False):
        return
    self._lingering = True  # type: ignore[attr-defined]
    await self.idle_task.stop()
    gone = (trio.BrokenResourceError, trio.BusyResourceError, trio.ClosedResourceError)
    with contextlib.suppress(*gone, AttributeError):  # already gone, or TLS (which has no half-close)
        await self.stream.send_eof()
    deadline = trio.current_time() + LINGER_SECONDS
    self._linger_deadline = deadline  # type: ignore[attr-defined]
    scope: trio.CancelScope | None = getattr(self, "_read_scope", None)
    if scope is not None:
        scope.deadline = min(scope.deadline, deadline)


async def _read_data(self: tcp_server.TCPServer) -> None:
    """Feed received bytes to the protocol; once closing, discard them until EOF or the linger deadline."""
    scope = trio.CancelScope(deadline=getattr(self, "_linger_deadline", inf))
    self._read_scope = scope  # type: ignore[attr-defined]
    with scope:
        while True:
            try:
                with trio.fail_after(self.config.read_timeout or inf):
                    data = await self.stream.receive_some(MAX_RECV)
            except (trio.ClosedResourceError, trio.BrokenResourceError, trio.TooSlowError):
                break
            if data == b"":
                break
            if not getattr(self, "_lingering", False):
                await self.protocol.handle(RawData(bytes(data)))
    await self.protocol.handle(Closed())


# --- 2 and 5: H11Protocol ------------------------------------------------------------------------------


def _declared_length(request: h11.Request) -> int | None:
    """The request's Content-Length, 0 without a body, None when chunked."""
    headers = dict(request.headers)
    if b"transfer-encoding" in headers:
        return None
    return int(headers.get(b"content-length", 0))


def _body_left_to_read(self: hypercorn_h11.H11Protocol) -> float:
    if self.connection.their_state is not h11.SEND_BODY:
        return 0
    expected = getattr(self, "_body_expected", None)
    return inf if expected is None else expected - getattr(self, "_body_received", 0)


async def _stream_send(self: hypercorn_h11.H11Protocol, event: StreamEvent) -> None:
    if (
        isinstance(event, Response)
        and event.status_code >= 200
        and isinstance(self.connection, h11.Connection)
        and _body_left_to_read(self) > DRAIN_LIMIT
    ):
        event = Response(
            stream_id=event.stream_id,
            headers=[*event.headers, (b"connection", b"close")],
            status_code=event.status_code,
        )
    await _originals[(hypercorn_h11.H11Protocol, "stream_send")](self, event)


async def _handle_events(self: hypercorn_h11.H11Protocol) -> None:
    while True:
        if self.connection.they_are_waiting_for_100_continue:
            await self._send_h11_event(
                h11.InformationalResponse(status_code=100, headers=self.config.response_headers("h11"))
            )
        try:
            event = self.connection.next_event()
        except h11.RemoteProtocolError as error:
            if self.connection.our_state in {h11.IDLE, h11.SEND_RESPONSE}:
                await self._send_error_response(error.error_status_hint)
            await self.send(Closed())
            break
        if isinstance(event, h11.Request):
            self._body_expected = _declared_length(event)  # type: ignore[attr-defined]
            self._body_received = 0  # type: ignore[attr-defined]
            await self.send(Updated(idle=False))
            await self._check_protocol(event)
            await self._create_stream(event)
        elif event is h11.PAUSED:
            await self.can_read.clear()
            await self.can_read.wait()
        elif isinstance(event, h11.ConnectionClosed) or event is h11.NEED_DATA:
            break
        elif self.stream is None:
            # The answer went out before the body was read: discard the rest, then serve the next request.
            if isinstance(event, h11.EndOfMessage):
                await _finish_draining(self)
        elif isinstance(event, h11.Data):
            self._body_received = getattr(self, "_body_received", 0) + len(event.data)  # type: ignore[attr-defined]
            await self.stream.handle(Body(stream_id=hypercorn_h11.STREAM_ID, data=event.data))
        elif isinstance(event, h11.EndOfMessage):
            await self.stream.handle(EndBody(stream_id=hypercorn_h11.STREAM_ID))
            await _finish_draining(self)  # only if the answer went out while this end was on its way
        elif isinstance(event, Data):  # WebSocket pass through
            await self.stream.handle(event)


async def _finish_draining(self: hypercorn_h11.H11Protocol) -> None:
    """The discarded body has ended: start the next request cycle (or close if that is not possible)."""
    if not getattr(self, "_draining", False):
        return
    self._draining = False  # type: ignore[attr-defined]
    if (
        not self.context.terminated.is_set()
        and self.connection.our_state is h11.DONE
        and self.connection.their_state is h11.DONE
    ):
        self.connection.start_next_cycle()
        await self.send(Updated(idle=True))
    else:
        await self.send(Closed())


async def _maybe_recycle(self: hypercorn_h11.H11Protocol) -> None:
    if (
        not self.context.terminated.is_set()
        and isinstance(self.connection, h11.Connection)
        and self.connection.our_state is h11.DONE
        and self.connection.their_state is h11.SEND_BODY
    ):
        self._draining = True  # type: ignore[attr-defined]
        await self._close_stream()
        await self.can_read.set()
        if self.connection.their_state is h11.SEND_BODY:
            await self.send(Updated(idle=True))  # a client that never finishes its body is closed when idle
        else:  # the reader took the end of the body while the stream was closing
            await _finish_draining(self)
        return
    await _originals[(hypercorn_h11.H11Protocol, "_maybe_recycle")](self)


async def _h11_send_error_response(self: hypercorn_h11.H11Protocol, status_code: int) -> None:
    body = error_body(status_code)
    headers = list(chain(_error_headers(body), self.config.response_headers("h11")))
    await self._send_h11_event(h11.Response(status_code=status_code, headers=headers))
    await self._send_h11_event(h11.Data(data=body))
    await self._send_h11_event(h11.EndOfMessage())


async def _stream_send_error_response(self: http_stream.HTTPStream, status_code: int) -> None:
    body = error_body(status_code)
    await self.send(Response(stream_id=self.stream_id, headers=_error_headers(body), status_code=status_code))
    await self.send(Body(stream_id=self.stream_id, data=body))
    await self.send(EndBody(stream_id=self.stream_id))
    self.state = http_stream.ASGIHTTPState.CLOSED
    await self.config.log.access(
        self.scope, {"status": status_code, "headers": []}, http_stream.time() - self.start_time
    )


# --- 4: TaskGroup ---------------------------------------------------------------------------------------


async def _spawn_app(
    self: trio_task_group.TaskGroup,
    app: Any,
    config: Any,
    scope: Any,
    send: Callable[[Any], Awaitable[None]],
) -> Callable[[Any], Awaitable[None]]:
    to_app, app_inbox = trio.open_memory_channel[Any](config.max_app_queue_size)
    nursery = self._nursery
    assert nursery is not None

    async def run_app() -> None:
        try:
            await trio_task_group._handle(
                app, config, scope, app_inbox.receive, send, trio.to_thread.run_sync, trio.from_thread.run
            )
        finally:
            app_inbox.close()  # later puts are dropped instead of waiting for a reader that is gone

    async def put(message: Any) -> None:
        try:
            if message.get("type") != "http.disconnect":
                await to_app.send(message)
                return
            try:
                to_app.send_nowait(message)
            except trio.WouldBlock:
                nursery.start_soon(put_late, message)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async def put_late(message: Any) -> None:
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await to_app.send(message)

    nursery.start_soon(run_app)
    return put


# --- applying -------------------------------------------------------------------------------------------

_PATCHES: list[tuple[type, str, Any]] = [
    (tcp_server.TCPServer, "protocol_send", _protocol_send),
    (tcp_server.TCPServer, "_read_data", _read_data),
    (hypercorn_h11.H11Protocol, "stream_send", _stream_send),
    (hypercorn_h11.H11Protocol, "_handle_events", _handle_events),
    (hypercorn_h11.H11Protocol, "_maybe_recycle", _maybe_recycle),
    (hypercorn_h11.H11Protocol, "_send_error_response", _h11_send_error_response),
    (http_stream.HTTPStream, "_send_error_response", _stream_send_error_response),
    (trio_task_group.TaskGroup, "spawn_app", _spawn_app),
]


def apply() -> None:
    """Install the fixes into hypercorn's classes (idempotent; affects every server in the process)."""
    for cls, name, replacement in _PATCHES:
        _originals.setdefault((cls, name), cls.__dict__[name])
        setattr(cls, name, replacement)


def revert() -> None:
    """Restore hypercorn's own methods."""
    for (cls, name), original in _originals.items():
        setattr(cls, name, original)


def applied() -> bool:
    return all(cls.__dict__[name] is replacement for cls, name, replacement in _PATCHES)
