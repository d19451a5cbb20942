"""The real-time notification channel: `GET /api/v1/ws?token=<access token>` (also `/ws`), a WebSocket.

Authentication: the JWT access token in the `token` query parameter, checked before the connection is
accepted. A missing, malformed, expired or revoked token (or a blocked user) refuses the upgrade with an
HTTP 401 and a JSON `detail`; a principal without a tenant gets a 403. Any tenant role may connect; each
event is delivered only to roles allowed to read it (`anomaly.detected` needs Security Analyst+).

Messages (server to client), one JSON envelope for every event::

    {"event": "hitl.requested", "tenant_id": "<uuid>", "timestamp": "<ISO-8601 UTC>", "data": {...}}

`event` is one of `policy.violated`, `anomaly.detected`, `hitl.requested`, `hitl.resolved` (data: the
approval request), `system.status` (data: status, version, uptime_seconds, subscribers,
status_interval_seconds, instance: the process serving this connection; sent first on connect, then every
`NOTIFY_STATUS_INTERVAL` seconds). Only the tenant's own events are sent. What clients send is read and ignored.

Close codes: 1001 the service is shutting down; 1013 the notifier is unavailable, retry later; 4001 the
access token expired (reconnect with a fresh one); 4003 the access ended or changed (the token was revoked by a
logout, the user was blocked or deleted, their password was reset or changed, or their role changed: reconnect
to get the new role's events): the token is checked again about every `NOTIFY_RECHECK_INTERVAL` seconds (while
the credentials cannot be checked, the connection stays); 4008 the client read too slowly: its buffer of
pending events overflowed, so events were dropped and it is disconnected (reconnect, and re-read state such as
`GET /hitl/pending`). A client that stops reading altogether is dropped by the notifier at once; its close
frame follows whatever is still queued on the socket. A client message over 64 KiB closes the connection
(1009).
"""

from __future__ import annotations

import dataclasses
import logging
import random
import time
from contextlib import suppress
from functools import partial
from typing import Any

import jwt
import trio
from quart import Blueprint, Response, websocket

from agentgov.actors.notifier import CLOSE_SLOW, Subscribe, Subscription, Unsubscribe, notifier
from agentgov.actors.runtime import ActorRef, ActorStopped, MailboxFull
from agentgov.http.auth import authenticate_websocket_token, services, websocket_token
from agentgov.http.errors import ApiError, error_response
from agentgov.http.ws_frames import SEND_KEY, FrameWriter
from agentgov.logs import fields
from agentgov.security.principal import Principal
from agentgov.security.roles import Permission
from agentgov.services import Services
from agentgov.storage.cache import CacheError
from agentgov.storage.database import DatabaseError

log = logging.getLogger("agentgov.ws")

api = Blueprint("ws", __name__)
root = Blueprint("ws_root", __name__)

PERMISSION = Permission.STATUS_READ
CLOSE_GOING_AWAY = 1001
CLOSE_TRY_AGAIN = 1013
CLOSE_TOKEN_EXPIRED = 4001
CLOSE_ACCESS_ENDED = 4003
CLOSE_TOO_SLOW = 4008


@api.websocket("/ws")
@websocket_token(PERMISSION)
async def notifications() -> Response | None:
    """Real-time notification channel (see the module docstring for messages and close codes)."""
    return await serve_subscriber()


@root.websocket("/ws")
@websocket_token(PERMISSION)
async def notifications_alias() -> Response | None:
    """The same channel at the root path."""
    return await serve_subscriber()


async def serve_subscriber() -> Response | None:
    """Authenticate, subscribe, accept, then relay the tenant's events until one side closes.

    Returns an HTTP response (which refuses the upgrade) when the connection is not accepted.
    """
    token = websocket.args.get("token")
    try:
        who = await authenticate_websocket_token(token, PERMISSION)
    except ApiError as exc:
        return error_response(exc.status, exc.detail, exc.headers)
    except (DatabaseError, CacheError):
        log.exception("websocket authentication unavailable")
        return error_response(503, "Service unavailable: credentials cannot be checked", {"Retry-After": "5"})
    assert who.tenant_id is not None and token
    svc = services()
    try:
        link = await _Link.open(svc, who)
    except (MailboxFull, ActorStopped) as exc:
        return error_response(503, f"Service unavailable: {exc}", {"Retry-After": "1"})
    try:
        await websocket.accept()
        link.writer = FrameWriter.of(websocket.scope.get(SEND_KEY))
        link.subscription.writer = link.writer
        code, reason = await _relay(svc, link, token)
        link.subscription.writer = None  # nothing may follow the close frame
        await websocket.close(code, reason)
    finally:
        link.close()
    return None


@dataclasses.dataclass
class _Link:
    """The connection's current subscription and the notifier it came from."""

    who: Principal
    ref: ActorRef[Any]
    subscription: Subscription
    writer: FrameWriter | None = None

    @classmethod
    async def open(cls, svc: Services, who: Principal) -> _Link:
        """Raises `MailboxFull` or `ActorStopped` when the notifier cannot take the subscription."""
        assert who.tenant_id is not None
        ref = notifier(svc, who.tenant_id)
        return cls(who, ref, await ref.ask(Subscribe(who.role, who.actor_label)))

    def close(self) -> None:
        self.subscription.writer = None
        self.subscription.receive.close()
        with suppress(MailboxFull, ActorStopped):
            self.ref.tell(Unsubscribe(self.subscription.id))


def _expiry(token: str) -> float:
    """The token's `exp` (already verified by `authenticate_websocket_token`)."""
    claims = jwt.decode(token, options={"verify_signature": False})
    return float(claims["exp"])


async def _access_ended(svc: Services, token: str, who: Principal) -> None:
    """Return once `token` no longer admits its holder to the channel as `who` (revoked, user blocked or
    deleted, password reset, or a role other than the one the subscription was made for: the client
    reconnects to get its new role's events), checking every `notify_recheck_interval` seconds, each wait
    drawn between 0.8 and 1.2 times that so that connections made together do not check together. An outage of
    the database or the cache is no verdict: the check is tried again, and logged once per outage."""
    interval = svc.settings.notify_recheck_interval
    warned = False
    while True:
        await trio.sleep(interval * random.uniform(0.8, 1.2))
        try:
            now_as = await authenticate_websocket_token(token, PERMISSION)
        except ApiError:
            return
        except (DatabaseError, CacheError):
            if not warned:
                log.warning("websocket credentials could not be checked again; kept open")
            warned = True
            continue
        warned = False
        if now_as.role is not who.role:
            return


async def _relay(svc: Services, link: _Link, token: str) -> tuple[int, str]:
    """Send events until the subscription ends, the token expires or stops admitting its holder, or the service
    shuts down; returns the close code and reason. Cancelled when the client disconnects."""
    outcome: list[tuple[int, str]] = []
    expires_at = _expiry(token)

    async with trio.open_nursery() as nursery:

        async def finish_when(wait: Any, code: int, reason: str) -> None:
            await wait()
            outcome.append((code, reason))
            nursery.cancel_scope.cancel()

        async def token_expired() -> None:
            await trio.sleep(max(0.0, expires_at - time.time()))

        async def ignore_incoming() -> None:
            while True:
                await websocket.receive()

        nursery.start_soon(ignore_incoming)
        nursery.start_soon(finish_when, svc.shutting_down.wait, CLOSE_GOING_AWAY, "server shutting down")
        nursery.start_soon(finish_when, token_expired, CLOSE_TOKEN_EXPIRED, "access token expired")
        ended = partial(_access_ended, svc, token, link.who)
        nursery.start_soon(finish_when, ended, CLOSE_ACCESS_ENDED, "access ended or changed; reconnect")
        while True:
            async for item in link.subscription.receive:
                if isinstance(item, bytes):  # the rest of a frame the notifier began writing
                    assert link.writer is not None
                    await link.writer.write(item)
                else:
                    await websocket.send(item)
                link.subscription.sent()
            if link.subscription.close_reason == CLOSE_SLOW:
                outcome.append((CLOSE_TOO_SLOW, "too slow: events were dropped; reconnect"))
                break
            # The notifier stopped or restarted: follow it, unless the service is stopping.
            if svc.shutting_down.is_set():
                outcome.append((CLOSE_GOING_AWAY, "server shutting down"))
                break
            try:
                fresh = await _Link.open(svc, link.who)
            except (MailboxFull, ActorStopped):
                outcome.append((CLOSE_TRY_AGAIN, "notifications unavailable; retry later"))
                break
            link.close()
            link.ref, link.subscription = fresh.ref, fresh.subscription
            link.subscription.writer = link.writer
            log.info("subscriber followed a restarted notifier", extra=fields(tenant_id=link.who.tenant_id))
        nursery.cancel_scope.cancel()
    return outcome[0]
