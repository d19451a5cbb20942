"""Connections through real hypercorn, driven with raw sockets: never stalled, closed when they should be.

* An answer sent before the request body arrived (401, 403, 404, 405, 415; on the Quart path and on the
  ASGI hot path): the connection stays usable. The client sends the body after the answer, then a second
  request on the same connection, and gets that answered (the server read and discarded the body).
* A 413 for a declared body over the limit: the answer says `Connection: close` and the server closes the
  connection after it (cleanly: half-close first, so the client reads the answer, then end-of-stream), since
  reading a body it refused would be the cost it refuses.
* `Connection: close` and HTTP/1.0 requests: closed after the answer. An idle keep-alive connection: closed
  after `KEEP_ALIVE_TIMEOUT`.
* A request head too large: 431 with a JSON `detail`, whether hypercorn's buffer refuses it (over 64 KiB) or it
  arrives whole and the app does (over 16 KiB, `agentgov.http.header_limit`).

The patches in `agentgov.http.server_patches` are what make these hold; the last tests show the bare
hypercorn behaviour on a hello-world app with them reverted, and the same app fixed with them applied.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import trio
from hypercorn.config import Config
from hypercorn.trio import serve as hypercorn_serve
from quart_trio import QuartTrio

from agentgov.http import server_patches
from agentgov.http.app import MAX_BODY_BYTES
from tests.support.app import ADMIN_KEY, api_key_with_role, live_server, settings_for
from tests.support.raw_http import connect, request_head

API = "/api/v1"
CHECK = f"{API}/policies/check"
JSON = {"Content-Type": "application/json"}


async def _post_json(url: str, path: str, body: dict[str, Any], headers: dict[str, str]) -> dict[str, Any]:
    raw = json.dumps(body).encode()
    async with connect(url) as conn:
        await conn.send(request_head("POST", path, {**JSON, **headers, "Content-Length": str(len(raw))}) + raw)
        response = await conn.response()
    assert response.status < 300, response.body
    return response.json()


@asynccontextmanager
async def _service(database_url: str, **overrides: Any) -> AsyncIterator[tuple[str, dict[str, str]]]:
    """The real service on hypercorn; yields its URL and keys: tenant Admin, Developer."""
    async with live_server(settings_for(database_url, **overrides)) as (_http, running):
        url = running.urls[0]
        tenant = await _post_json(url, f"{API}/tenants", {"name": "Acme"}, {"X-Admin-Key": ADMIN_KEY})
        developer = await api_key_with_role(running.services, tenant["id"], "Developer")
        yield url, {"admin": tenant["api_key"], "developer": developer}


def _early_answers(keys: dict[str, str]) -> list[tuple[str, str, str, dict[str, str], int]]:
    """(case, method, path, headers, status) of requests answered before their body is read."""
    admin, developer = {"X-API-Key": keys["admin"]}, {"X-API-Key": keys["developer"]}
    return [
        ("hot path: 401 no key", "POST", CHECK, JSON, 401),
        ("hot path: 415 not JSON", "POST", CHECK, {**admin, "Content-Type": "text/plain"}, 415),
        ("quart: 401 no key", "POST", f"{API}/agents/register", JSON, 401),
        ("quart: 403 role too low", "POST", f"{API}/policies", {**developer, **JSON}, 403),
        ("quart: 404 unknown route", "POST", f"{API}/no-such-thing", {**admin, **JSON}, 404),
        ("quart: 405 method", "PATCH", CHECK, {**admin, **JSON}, 405),
        ("quart: 415 not JSON", "POST", f"{API}/agents/register", {**admin, "Content-Type": "text/plain"}, 415),
    ]


async def test_an_answer_before_the_body_leaves_the_connection_usable(database_url: str) -> None:
    body = json.dumps({"name": "bot", "type": "llm", "pad": "x" * 20_000}).encode()
    async with _service(database_url) as (url, keys):
        for case, method, path, headers, status in _early_answers(keys):
            async with connect(url) as conn:
                await conn.send(request_head(method, path, {**headers, "Content-Length": str(len(body))}))
                early = await conn.response()
                assert (early.status, early.headers["content-type"]) == (status, "application/json"), case
                assert isinstance(early.json()["detail"], str), case
                assert early.headers.get("connection") != "close", case
                await conn.send(body + request_head("GET", f"{API}/health"))
                after = await conn.response()
                assert after.status == 200, (case, after)


@pytest.mark.parametrize("path", [CHECK, f"{API}/agents/register"], ids=["hot path", "quart"])
async def test_a_refused_oversized_body_closes_the_connection_after_the_answer(sqlite_url: str, path: str) -> None:
    size = MAX_BODY_BYTES + 1
    async with _service(sqlite_url) as (url, keys), connect(url) as conn:
        headers = {"X-API-Key": keys["admin"], **JSON, "Content-Length": str(size)}
        await conn.send(request_head("POST", path, headers))
        refused = await conn.response()
        assert refused.status == 413 and refused.json() == {"detail": "Request body too large"}
        assert refused.headers["connection"] == "close"
        await conn.send(b" " * size + request_head("GET", f"{API}/health"))
        assert await conn.closed_by_server()


@pytest.mark.parametrize(
    ("headers", "size", "status", "kept"),
    [
        ({**JSON}, 20_000, 401, True),
        ({"Content-Type": "text/plain"}, 20_000, 415, True),
        ({**JSON}, 2 * MAX_BODY_BYTES, 413, False),
    ],
    ids=["401 small body", "415 small body", "413 large body"],
)
async def test_a_body_sent_with_the_head_on_the_hot_path(
    sqlite_url: str, headers: dict[str, str], size: int, status: int, kept: bool
) -> None:
    """The body is already arriving (filling the app's queue) when the hot path answers without reading it."""
    async with _service(sqlite_url) as (url, keys), connect(url) as conn:
        if status != 401:
            headers = {**headers, "X-API-Key": keys["admin"]}
        head = request_head("POST", CHECK, {**headers, "Content-Length": str(size)})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.send, head + b" " * size + request_head("GET", f"{API}/health"))
            answer = await conn.response()
            assert answer.status == status and "detail" in answer.json()
            if kept:
                assert (await conn.response()).status == 200
            else:
                assert answer.headers["connection"] == "close"
                assert await conn.closed_by_server()


@pytest.mark.parametrize(
    ("version", "headers"),
    [("HTTP/1.1", {"Connection": "close"}), ("HTTP/1.0", {})],
    ids=["connection close", "http/1.0"],
)
async def test_the_server_closes_when_the_client_asks(sqlite_url: str, version: str, headers: dict[str, str]) -> None:
    async with _service(sqlite_url) as (url, _keys), connect(url) as conn:
        await conn.send(request_head("GET", f"{API}/health", headers, version=version))
        assert (await conn.response()).status == 200
        assert await conn.closed_by_server()


async def test_an_idle_keep_alive_connection_is_closed_after_the_timeout(sqlite_url: str) -> None:
    async with _service(sqlite_url, keep_alive_timeout=0.5) as (url, _keys), connect(url) as conn:
        for _ in range(2):  # the timer restarts after each answer
            await conn.send(request_head("GET", f"{API}/health"))
            assert (await conn.response()).status == 200
        idle_from = trio.current_time()
        assert await conn.closed_by_server()
        assert trio.current_time() - idle_from >= 0.4


async def test_a_request_head_too_large_gets_431_with_a_json_detail(sqlite_url: str) -> None:
    async with _service(sqlite_url) as (url, _keys), connect(url) as conn:
        await conn.send(request_head("GET", f"{API}/health", {"X-Padding": "x" * 200_000}))
        response = await conn.response()
        assert response.status == 431 and response.headers["content-type"] == "application/json"
        assert response.json() == {"detail": "Request header fields too large"}
        assert await conn.closed_by_server()


async def test_a_head_hypercorn_would_pass_is_held_to_the_documented_limit(sqlite_url: str) -> None:
    """A head of 20 KB arrives in one read and hypercorn parses it; the app answers 431 all the same, on the
    Quart path and on the hot path, and closes. 15 KB is served."""
    async with _service(sqlite_url) as (url, keys):
        for method, path in (("GET", f"{API}/health"), ("POST", f"{API}/guard/validate")):
            async with connect(url) as conn:
                padding = {"X-Padding": "x" * 20_000, "X-API-Key": keys["developer"], **JSON, "Content-Length": "2"}
                await conn.send(request_head(method, path, padding) + b"{}")
                response = await conn.response()
                assert response.status == 431 and response.headers["content-type"] == "application/json"
                assert response.json()["detail"].startswith("Request header fields too large: 20,")
                assert await conn.closed_by_server()
        async with connect(url) as conn:  # a long query string is part of the head too
            await conn.send(request_head("GET", f"{API}/agents?q={'x' * 20_000}", {"X-API-Key": keys["developer"]}))
            response = await conn.response()
            assert response.status == 431 and await conn.closed_by_server()
        async with connect(url) as conn:  # and a WebSocket handshake gets the same answer
            upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13"}
            upgrade |= {"Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "X-Padding": "x" * 20_000}
            await conn.send(request_head("GET", f"{API}/ws", upgrade))
            response = await conn.response()
            assert response.status == 431 and response.json()["detail"].startswith("Request header fields too large")
        async with connect(url) as conn:
            body = json.dumps({"prompt": "hello"}).encode()
            headers = {"X-Padding": "x" * 15_000, "X-API-Key": keys["developer"], **JSON}
            await conn.send(
                request_head("POST", f"{API}/guard/validate", {**headers, "Content-Length": str(len(body))}) + body
            )
            assert (await conn.response()).status == 200


# --- the bare server ---------------------------------------------------------------------------------------

hello = QuartTrio("hello")


@hello.get("/")
async def _hello() -> str:
    return "hello"


@asynccontextmanager
async def _bare_hello(patched: bool) -> AsyncIterator[str]:
    """A hello-world Quart-Trio app on plain hypercorn, with the patches applied or reverted."""
    was_applied = server_patches.applied()
    _set_patched(patched)
    config = Config()
    config.bind = ["127.0.0.1:0"]
    config.accesslog = None
    config.keep_alive_timeout = 0.5
    try:
        async with trio.open_nursery() as nursery:
            urls = await nursery.start(lambda task_status: hypercorn_serve(hello, config, task_status=task_status))
            yield urls[0]
            nursery.cancel_scope.cancel()
    finally:
        _set_patched(was_applied)


def _set_patched(patched: bool) -> None:
    if patched:
        server_patches.apply()
    else:
        server_patches.revert()


@pytest.mark.parametrize("patched", [False, True], ids=["hypercorn as released", "patched"])
async def test_bare_hypercorn_keeps_closed_and_idle_connections_open_unless_patched(patched: bool) -> None:
    async with _bare_hello(patched) as url, connect(url) as closing, connect(url) as idle:
        conns = [closing, idle]
        await conns[0].send(request_head("GET", "/", {"Connection": "close"}))
        await conns[1].send(request_head("GET", "/"))
        for conn in conns:
            assert (await conn.response()).body == b"hello"
        with trio.move_on_after(1.5):  # well past the 0.5 s keep-alive timeout
            closed = [await conn.closed_by_server() for conn in conns]
            assert patched and closed == [True, True]
            return
        assert not patched, "a patched server should have closed both connections"
