"""The WebSocket channel with real clients (trio-websocket) against a real hypercorn server, on both backends."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import httpx
import jwt
import pytest
import trio
import trio.testing
from trio_websocket import (
    ConnectionClosed,
    ConnectionRejected,
    WebSocketConnection,
    wrap_client_stream,
)

from agentgov.actors.notifier import GetStats, Publish, notifier
from agentgov.security.tokens import TokenService
from agentgov.server import Running
from agentgov.services import Services
from agentgov.storage.identity import NewUser
from tests.support.app import ADMIN_KEY, live_server, settings_for

WAIT = 20  # seconds: a guard against hanging, never a pause


@dataclasses.dataclass
class Server:
    http: httpx.AsyncClient
    running: Running

    @property
    def services(self) -> Services:
        return self.running.services

    def ws_url(self, token: str | None, path: str = "/api/v1/ws") -> str:
        base = self.running.urls[0].replace("http://", "ws://")
        return f"{base}{path}" + ("" if token is None else f"?token={token}")


@pytest.fixture
async def server(database_url: str) -> AsyncIterator[Server]:
    async with live_server(settings_for(database_url)) as (http, running):
        yield Server(http, running)


async def new_tenant(server: Server, name: str) -> dict[str, Any]:
    response = await server.http.post("/api/v1/tenants", json={"name": name}, headers={"X-Admin-Key": ADMIN_KEY})
    assert response.status_code == 201, response.text
    return response.json()


async def user_token(server: Server, tenant_id: str, role: str = "Admin") -> str:
    svc = server.services
    user = await svc.identity.create_user(
        tenant_id, NewUser(email=f"{uuid.uuid4().hex[:8]}@example.com", role=role, password_hash=None)
    )
    return svc.tokens.issue(user_id=user.id, tenant_id=tenant_id, role=role, session_key_id=None).token


async def register_agent(server: Server, api_key: str) -> str:
    response = await server.http.post(
        "/api/v1/agents/register", json={"name": "payments bot", "type": "llm"}, headers={"X-API-Key": api_key}
    )
    assert response.status_code == 201, response.text
    return response.json()["id"]


def _target(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port, parts.path + (f"?{parts.query}" if parts.query else "")


@asynccontextmanager
async def connect(url: str, **options: Any) -> AsyncIterator[WebSocketConnection]:
    """A real WebSocket client. The test owns the TCP stream and closes it: trio-websocket leaves the socket
    open when the server closes first or refuses the handshake."""
    host, port, resource = _target(url)
    stream = await trio.open_tcp_stream(host, port)
    async with stream, trio.open_nursery() as nursery:
        ws = await wrap_client_stream(nursery, stream, host, resource, **options)
        try:
            yield ws
        finally:
            with trio.move_on_after(WAIT, shield=True):
                await ws.aclose()
            nursery.cancel_scope.cancel()


async def next_event(ws: WebSocketConnection, *, skip_status: bool = True) -> dict[str, Any]:
    with trio.fail_after(WAIT):
        while True:
            envelope = json.loads(await ws.get_message())
            if not (skip_status and envelope["event"] == "system.status"):
                return envelope


async def rejected(url: str) -> ConnectionRejected:
    """The refusal of a handshake, as a real client sees it."""
    refusal: ConnectionRejected | None = None
    with trio.fail_after(WAIT):
        try:
            async with connect(url):
                pass
        except* ConnectionRejected as group:
            refusal = group.exceptions[0]  # type: ignore[assignment]
    if refusal is None:
        raise AssertionError("the connection was accepted")
    return refusal


async def test_subscriber_gets_status_then_hitl_events(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    token = await user_token(server, tenant["id"], "Security Analyst")
    agent_id = await register_agent(server, tenant["api_key"])
    async with connect(server.ws_url(token)) as ws:
        status = await next_event(ws, skip_status=False)
        assert set(status) == {"event", "tenant_id", "timestamp", "data"}
        assert status["event"] == "system.status" and status["tenant_id"] == tenant["id"]
        assert status["data"]["status"] == "ok" and status["data"]["subscribers"] == 1
        created = await server.http.post(
            "/api/v1/hitl/request",
            json={"agent_id": agent_id, "action": "refund", "resource": "order:7"},
            headers={"X-API-Key": tenant["api_key"]},
        )
        assert created.status_code == 201
        requested = await next_event(ws)
        assert requested["event"] == "hitl.requested" and requested["data"] == created.json()
        decided = await server.http.post(
            f"/api/v1/hitl/reject/{created.json()['id']}",
            json={"comment": "no"},
            headers={"X-API-Key": tenant["api_key"]},
        )
        resolved = await next_event(ws)
        assert resolved["event"] == "hitl.resolved" and resolved["data"] == decided.json()
        assert resolved["data"]["status"] == "rejected"


async def test_root_alias_serves_the_same_channel(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    token = await user_token(server, tenant["id"], "Developer")
    async with connect(server.ws_url(token, "/ws")) as ws:
        assert (await next_event(ws, skip_status=False))["event"] == "system.status"
        notifier(server.services, tenant["id"]).tell(Publish("policy.violated", {"policy": "p"}))
        event = await next_event(ws)
        assert event["event"] == "policy.violated" and event["data"] == {"policy": "p"}
    assert (await rejected(server.ws_url(None, "/ws"))).status_code == 401


async def test_tenants_only_see_their_own_events(server: Server) -> None:
    acme, globex = await new_tenant(server, "Acme"), await new_tenant(server, "Globex")
    acme_agent = await register_agent(server, acme["api_key"])
    globex_agent = await register_agent(server, globex["api_key"])
    async with (
        connect(server.ws_url(await user_token(server, acme["id"]))) as acme_ws,
        connect(server.ws_url(await user_token(server, globex["id"]))) as globex_ws,
    ):
        await next_event(acme_ws, skip_status=False)
        await next_event(globex_ws, skip_status=False)
        for tenant, agent in ((acme, acme_agent), (globex, globex_agent)):
            response = await server.http.post(
                "/api/v1/hitl/request",
                json={"agent_id": agent, "action": "read", "resource": tenant["name"]},
                headers={"X-API-Key": tenant["api_key"]},
            )
            assert response.status_code == 201
        # Acme's event was published first: had it leaked, it would come before Globex's own.
        for ws, tenant in ((acme_ws, acme), (globex_ws, globex)):
            event = await next_event(ws)
            assert event["tenant_id"] == tenant["id"] and event["data"]["resource"] == tenant["name"]


async def test_events_follow_the_role(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    async with (
        connect(server.ws_url(await user_token(server, tenant["id"], "Developer"))) as developer,
        connect(server.ws_url(await user_token(server, tenant["id"], "Security Analyst"))) as analyst,
    ):
        ref = notifier(server.services, tenant["id"])
        ref.tell(Publish("anomaly.detected", {"agent_id": "a1", "score": 0.97}))
        ref.tell(Publish("hitl.requested", {"id": "r1"}))
        assert (await next_event(developer))["event"] == "hitl.requested"
        assert (await next_event(analyst))["event"] == "anomaly.detected"
        assert (await next_event(analyst))["event"] == "hitl.requested"


async def test_missing_and_garbage_tokens_are_refused(server: Server) -> None:
    for url, detail in (
        (server.ws_url(None), "Missing credentials: send ?token=<access token>"),
        (server.ws_url(""), "Missing credentials: send ?token=<access token>"),
        (server.ws_url("garbage"), "Invalid access token: malformed token"),
        (server.ws_url("a.b.c"), "Invalid access token: malformed token"),
    ):
        refusal = await rejected(url)
        assert refusal.status_code == 401
        assert json.loads(refusal.body)["detail"] == detail


async def test_expired_token_is_refused(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    svc = server.services
    user = await svc.identity.create_user(
        tenant["id"], NewUser(email="old@example.com", role="Admin", password_hash=None)
    )
    expired_tokens = TokenService(dataclasses.replace(svc.settings, access_token_ttl=-60), svc.cache)
    token = expired_tokens.issue(user_id=user.id, tenant_id=tenant["id"], role="Admin", session_key_id=None).token
    refusal = await rejected(server.ws_url(token))
    assert refusal.status_code == 401
    assert json.loads(refusal.body)["detail"] == "Invalid access token: token has expired"


async def test_revoked_token_is_refused(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    token = await user_token(server, tenant["id"])
    async with connect(server.ws_url(token)) as ws:  # valid until revoked
        assert (await next_event(ws, skip_status=False))["event"] == "system.status"
    await server.services.tokens.revoke(await server.services.tokens.verify(token))
    refusal = await rejected(server.ws_url(token))
    assert refusal.status_code == 401
    assert json.loads(refusal.body)["detail"] == "Invalid access token: token has been revoked"


async def test_forged_and_orphan_tokens_are_refused(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    svc = server.services
    genuine = await user_token(server, tenant["id"])
    claims = jwt.decode(genuine, options={"verify_signature": False})
    header = jwt.get_unverified_header(genuine)
    forged = jwt.encode({**claims, "role": "Super Admin"}, "not-the-secret-" + "0123456789" * 4, headers=header)
    refusal = await rejected(server.ws_url(forged))
    assert refusal.status_code == 401 and json.loads(refusal.body)["detail"] == "Invalid access token: invalid token"
    orphan = svc.tokens.issue(user_id=str(uuid.uuid4()), tenant_id=tenant["id"], role="Admin", session_key_id=None)
    refusal = await rejected(server.ws_url(orphan.token))
    assert refusal.status_code == 401
    assert json.loads(refusal.body)["detail"] == "Invalid access token: the user is blocked or deleted"


async def test_slow_subscriber_does_not_delay_a_fast_one(server: Server) -> None:
    """A client that never reads is disconnected (4008) once its buffer overflows; a fast client receives
    every event meanwhile. Events are published one at a time, each after the fast client got the previous,
    so the fast client's buffer never holds more than one: only the slow client can overflow."""
    tenant = await new_tenant(server, "Acme")
    svc = server.services
    ref = notifier(svc, tenant["id"], buffer_size=8, status_interval=86400.0)
    payload = "x" * (256 * 1024)
    async with (
        connect(server.ws_url(await user_token(server, tenant["id"])), message_queue_size=1) as slow,
        connect(server.ws_url(await user_token(server, tenant["id"]))) as fast,
    ):
        assert (await next_event(fast, skip_status=False))["event"] == "system.status"
        sent = 0
        while (await ref.ask(GetStats())).disconnected_slow == 0:
            assert sent < 2000, "the slow subscriber was never disconnected"
            ref.tell(Publish("policy.violated", {"n": sent, "padding": payload}))
            event = await next_event(fast)
            assert event["data"]["n"] == sent
            sent += 1
        stats = await ref.ask(GetStats())
        assert stats.subscribers == 1 and stats.disconnected_slow == 1
        # The fast client is still served.
        ref.tell(Publish("policy.violated", {"n": sent}))
        assert (await next_event(fast))["data"]["n"] == sent
        # The slow client now reads: what was queued for it, in order, then the close frame with 4008.
        seen = []
        with trio.fail_after(WAIT), pytest.raises(ConnectionClosed) as closed:
            while True:
                envelope = json.loads(await slow.get_message())
                if envelope["event"] == "policy.violated":
                    seen.append(envelope["data"]["n"])
        assert closed.value.reason.code == 4008
        assert "too slow" in closed.value.reason.reason
        assert seen == list(range(len(seen))) and len(seen) < sent


async def test_shutdown_closes_with_going_away(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    async with connect(server.ws_url(await user_token(server, tenant["id"]))) as ws:
        assert (await next_event(ws, skip_status=False))["event"] == "system.status"
        server.services.shutting_down.set()
        with trio.fail_after(WAIT), pytest.raises(ConnectionClosed) as closed:
            while True:
                await ws.get_message()
        assert closed.value.reason.code == 1001


async def test_disconnected_client_is_unsubscribed(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    ref = notifier(server.services, tenant["id"])
    async with connect(server.ws_url(await user_token(server, tenant["id"]))) as ws:
        await next_event(ws, skip_status=False)
        assert (await ref.ask(GetStats())).subscribers == 1
    with trio.fail_after(WAIT):
        while (await ref.ask(GetStats())).subscribers != 0:
            await trio.testing.wait_all_tasks_blocked()


@pytest.fixture
async def rechecking_server(database_url: str) -> AsyncIterator[Server]:
    """The server with live tokens checked again every 50 ms (the default is 5 s)."""
    async with live_server(settings_for(database_url, notify_recheck_interval=0.05)) as (http, running):
        yield Server(http, running)


async def _closed_with(ws: WebSocketConnection) -> int:
    with trio.fail_after(WAIT), pytest.raises(ConnectionClosed) as closed:
        while True:
            await ws.get_message()
    return int(closed.value.reason.code)


async def test_a_live_connection_ends_when_its_access_ends(rechecking_server: Server) -> None:
    """Logout (the token revoked), a block, a password reset and a role change each close a connected
    subscriber with 4003; until then it is served."""
    server = rechecking_server
    tenant = await new_tenant(server, "Acme")
    svc = server.services
    admin_key = {"X-API-Key": tenant["api_key"]}
    for ending in ("revoke", "block", "reset", "demote"):
        user = await svc.identity.create_user(
            tenant["id"], NewUser(email=f"{ending}@example.com", role="Admin", password_hash=None)
        )
        token = svc.tokens.issue(user_id=user.id, tenant_id=tenant["id"], role="Admin", session_key_id=None).token
        async with connect(server.ws_url(token)) as ws:
            assert (await next_event(ws, skip_status=False))["event"] == "system.status"
            if ending == "revoke":
                await svc.tokens.revoke(await svc.tokens.verify(token))
            elif ending == "block":
                assert (await server.http.post(f"/api/v1/users/{user.id}/block", headers=admin_key)).status_code == 200
            elif ending == "demote":  # subscribed as Admin; the role it reads events with changed
                demoted = await server.http.put(
                    f"/api/v1/users/{user.id}/role", json={"role": "Developer"}, headers=admin_key
                )
                assert demoted.status_code == 200
            else:
                reset = await server.http.post(
                    f"/api/v1/users/{user.id}/reset-password",
                    json={"new_password": "a long enough passphrase"},
                    headers=admin_key,
                )
                assert reset.status_code == 204
            assert await _closed_with(ws) == 4003, ending


async def test_a_client_message_over_the_limit_closes_the_connection(server: Server) -> None:
    tenant = await new_tenant(server, "Acme")
    async with connect(server.ws_url(await user_token(server, tenant["id"])), message_queue_size=1) as ws:
        assert (await next_event(ws, skip_status=False))["event"] == "system.status"
        await ws.send_message("x" * 20_000)  # read and ignored
        await ws.send_message("x" * 70_000)
        assert await _closed_with(ws) == 1009
