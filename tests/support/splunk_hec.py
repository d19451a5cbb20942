"""A Splunk HTTP Event Collector (HEC) emulator: a real HTTP server on loopback, run inside a trio test.

``async with splunk_hec_server(token="...") as hec:`` serves plain HTTP (hypercorn, a tiny ASGI app) on a
free port of 127.0.0.1 until the block exits; point the client at :attr:`SplunkHec.url`.

Endpoints (the JSON event endpoints of Splunk's REST API; a trailing slash is accepted):

* ``POST /services/collector``, ``/services/collector/event``, ``/services/collector/event/1.0``
* ``GET /services/collector/health`` (and ``/health/1.0``): 200 ``{"text":"HEC is healthy","code":17}``,
  or 503 ``{"text":"HEC is unhealthy, queues are full","code":18}`` while :attr:`SplunkHec.available` is
  False. No token needed.
* Any other path: 404 ``{"text":"The requested URL was not found on this server.","code":404}``; another
  method on an event endpoint: 405 ``{"text":"Method Not Allowed","code":405}``.

Answers of the event endpoints, checked in this order, with the status, ``text`` and ``code`` of Splunk's
documented table (Troubleshoot HTTP Event Collector, "Possible error codes"); every body is JSON:

===========================================================  ======  ===============================  ====
condition                                                    status  text                             code
===========================================================  ======  ===============================  ====
``available`` is False (simulated overload)                  503     Server is busy                   9
no ``Authorization`` header                                  401     Token is required                2
header not ``Splunk <token>`` (nor Basic with a password)    401     Invalid authorization            3
token (or Basic password) is not the server's token          403     Invalid token                    4
body empty or only whitespace                                400     No data                          5
body not a sequence of JSON objects, or gzip undecodable     400     Invalid data format              6
an object has no ``event`` key                               400     Event field is required          12
an object's ``event`` is ``""`` or ``null``                  400     Event field cannot be blank      13
otherwise                                                    200     Success                          0
===========================================================  ======  ===============================  ====

Codes 6, 12 and 13 also carry ``"invalid-event-number": n``, the 0-based index of the offending object,
as Splunk does. The body is a concatenation of JSON objects, optionally separated by whitespace (newlines
included) -- not a JSON array (an array is code 6). ``Content-Encoding: gzip`` bodies are decompressed
first. Basic authentication (any user, the token as password) is accepted like Splunk does.

A request is all-or-nothing: its events are appended to :attr:`SplunkHec.events` (the parsed objects,
in order) only when it is answered 200. (Real Splunk may already have indexed the events before an
invalid one; the emulator keeps none, so a client's retry is observable without duplicates.)
:attr:`SplunkHec.requests` counts every HTTP request the server answered, whatever the answer;
:attr:`SplunkHec.exchanges` records each of them.

Outages: set ``hec.available = False`` for 503 answers (the server still accepts connections), or
``await hec.stop()`` for a real one: the listening socket is closed and open connections are dropped, so
clients get "connection refused". ``await hec.start()`` serves again on the same port.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import zlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import trio
from hypercorn.config import Config
from hypercorn.trio import serve
from hypercorn.typing import ASGIReceiveCallable, ASGISendCallable, Scope

__all__ = ["DEFAULT_TOKEN", "HecExchange", "SplunkHec", "splunk_hec_server"]

DEFAULT_TOKEN = "00000000-0000-4000-8000-00000000feed"
"""The token the emulator accepts unless told otherwise (Splunk tokens are GUIDs)."""

EVENT_PATHS = frozenset({"/services/collector", "/services/collector/event", "/services/collector/event/1.0"})
HEALTH_PATHS = frozenset({"/services/collector/health", "/services/collector/health/1.0"})


class _Reject(Exception):
    """An error answer: HTTP `status` with Splunk's `text` and `code` (and the event index when given)."""

    def __init__(self, status: int, text: str, code: int, event_number: int | None = None) -> None:
        super().__init__(text)
        self.status, self.text, self.code, self.event_number = status, text, code, event_number

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"text": self.text, "code": self.code}
        if self.event_number is not None:
            body["invalid-event-number"] = self.event_number
        return body


@dataclass(frozen=True)
class HecExchange:
    """One request the emulator answered: what came in (body as sent, before gzip decoding) and the answer."""

    method: str
    path: str
    headers: dict[str, str]  # lower-cased names; a repeated header keeps its last value
    body: bytes
    status: int
    response: dict[str, Any]


@dataclass(eq=False)
class SplunkHec:
    """State and control of one emulator; made by :func:`splunk_hec_server`, not directly.

    Tests read :attr:`events`, :attr:`requests`, :attr:`exchanges`, and set :attr:`available`; all of them
    may be read or changed at any time from the test's trio tasks.
    """

    token: str
    host: str = "127.0.0.1"
    port: int = 0
    available: bool = True
    """False: event requests get 503 "Server is busy" (code 9), health checks 503 code 18; nothing is kept."""
    events: list[dict[str, Any]] = field(default_factory=list)
    """Every accepted event object, as parsed from JSON, in arrival order."""
    requests: int = 0
    """Number of HTTP requests answered (any path, any answer)."""
    exchanges: list[HecExchange] = field(default_factory=list)
    """Every answered request with its answer, in order."""
    _nursery: trio.Nursery | None = field(default=None, repr=False)
    _scope: trio.CancelScope | None = field(default=None, repr=False)
    _stopped: trio.Event | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        """Base URL, e.g. ``http://127.0.0.1:PORT``; the event endpoint is ``url + "/services/collector/event"``."""
        return f"http://{self.host}:{self.port}"

    @property
    def event_url(self) -> str:
        """``url`` + ``/services/collector/event``."""
        return self.url + "/services/collector/event"

    @property
    def running(self) -> bool:
        """Whether the server is listening (between :meth:`start` and :meth:`stop`)."""
        return self._scope is not None

    async def start(self) -> None:
        """Listen again (on the same port once one was chosen) and serve. No-op if already running.

        Raises OSError if the port cannot be bound.
        """
        if self._scope is not None:
            return
        if self._nursery is None:
            raise RuntimeError("SplunkHec.start() only works inside `async with splunk_hec_server()`")
        config = Config()
        config.bind = [f"{self.host}:{self.port}"]
        config.accesslog = None  # errors of the app still go to stderr (captured by pytest)
        config.graceful_timeout = 0
        scope, stopped = trio.CancelScope(), trio.Event()
        binds: list[str] = await self._nursery.start(self._serve, config, scope, stopped)
        self.port = int(binds[0].rsplit(":", 1)[1])
        self._scope, self._stopped = scope, stopped

    async def stop(self) -> None:
        """Close the listening socket and drop open connections; returns once the port is closed. Idempotent."""
        scope, stopped = self._scope, self._stopped
        self._scope = self._stopped = None
        if scope is None or stopped is None:
            return
        scope.cancel()
        with trio.CancelScope(shield=True):
            await stopped.wait()

    async def _serve(
        self,
        config: Config,
        scope: trio.CancelScope,
        stopped: trio.Event,
        *,
        task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        try:
            with scope:
                await serve(self._app, config, task_status=task_status)
        finally:
            stopped.set()

    # -- the ASGI application -------------------------------------------------------------------------

    async def _app(self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # http.disconnect: the client went away before sending the whole body
            chunks.append(message["body"])
            if not message["more_body"]:
                break
        body = b"".join(chunks)
        headers = {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}
        method, path = scope["method"], scope["path"]
        try:
            status, answer, accepted = self._handle(method, path, headers, body)
        except _Reject as reject:
            status, answer, accepted = reject.status, reject.body(), []
        self.events.extend(accepted)
        self.requests += 1
        self.exchanges.append(HecExchange(method, path, headers, body, status, answer))
        payload = json.dumps(answer, separators=(",", ":")).encode()
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [
                    (b"content-type", b"application/json; charset=UTF-8"),
                    (b"content-length", str(len(payload)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": payload, "more_body": False})

    def _handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, dict[str, Any], list[dict[str, Any]]]:
        """(status, JSON answer, accepted events) for one request; raises _Reject for an error answer."""
        if len(path) > 1:
            path = path.rstrip("/")
        if path in HEALTH_PATHS:
            if not self.available:
                raise _Reject(503, "HEC is unhealthy, queues are full", 18)
            return 200, {"text": "HEC is healthy", "code": 17}, []
        if path not in EVENT_PATHS:
            raise _Reject(404, "The requested URL was not found on this server.", 404)
        if method != "POST":
            raise _Reject(405, "Method Not Allowed", 405)
        if not self.available:
            raise _Reject(503, "Server is busy", 9)
        self._authenticate(headers.get("authorization"))
        if headers.get("content-encoding", "").strip().lower() == "gzip":
            try:
                body = gzip.decompress(body)
            except (OSError, EOFError, zlib.error):
                raise _Reject(400, "Invalid data format", 6, 0) from None
        events = _parse_events(body)
        return 200, {"text": "Success", "code": 0}, events

    def _authenticate(self, authorization: str | None) -> None:
        if authorization is None:
            raise _Reject(401, "Token is required", 2)
        scheme, _, credentials = authorization.strip().partition(" ")
        credentials = credentials.strip()
        if not credentials:
            raise _Reject(401, "Invalid authorization", 3)
        if scheme.lower() == "splunk":
            token = credentials
        elif scheme.lower() == "basic":
            try:
                _, colon, token = base64.b64decode(credentials, validate=True).decode().partition(":")
            except (binascii.Error, UnicodeDecodeError):
                raise _Reject(401, "Invalid authorization", 3) from None
            if not colon:
                raise _Reject(401, "Invalid authorization", 3)
        else:
            raise _Reject(401, "Invalid authorization", 3)
        if token != self.token:
            raise _Reject(403, "Invalid token", 4)


_WHITESPACE = " \t\r\n"


def _parse_events(body: bytes) -> list[dict[str, Any]]:
    """The JSON objects concatenated in `body`, each checked for a non-blank ``event``; raises _Reject."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise _Reject(400, "Invalid data format", 6, 0) from None
    decoder = json.JSONDecoder()
    events: list[dict[str, Any]] = []
    position = len(text) - len(text.lstrip(_WHITESPACE))
    if position == len(text):
        raise _Reject(400, "No data", 5)
    while position < len(text):
        number = len(events)
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            raise _Reject(400, "Invalid data format", 6, number) from None
        if not isinstance(value, dict):
            raise _Reject(400, "Invalid data format", 6, number)
        if "event" not in value:
            raise _Reject(400, "Event field is required", 12, number)
        if value["event"] is None or value["event"] == "":
            raise _Reject(400, "Event field cannot be blank", 13, number)
        events.append(value)
        while position < len(text) and text[position] in _WHITESPACE:
            position += 1
    return events


@asynccontextmanager
async def splunk_hec_server(
    token: str = DEFAULT_TOKEN, *, host: str = "127.0.0.1", port: int = 0
) -> AsyncIterator[SplunkHec]:
    """Serve a HEC emulator accepting `token` on `host`:`port` (0: a free port) for the block's duration.

    Yields the running :class:`SplunkHec`; on exit the server is stopped (also when the block raises or is
    cancelled).
    """
    hec = SplunkHec(token=token, host=host, port=port)
    async with trio.open_nursery() as nursery:
        hec._nursery = nursery
        try:
            await hec.start()
            yield hec
        finally:
            await hec.stop()
            hec._nursery = None
