"""The process lifetime: storage, then actors, then HTTP; shut down in reverse.

`serve()` owns every long-lived resource in one trio nursery tree. When `shutdown` is set (run.py sets it
on SIGINT/SIGTERM) hypercorn stops accepting connections and gives in-flight requests up to
`graceful_timeout` seconds; then the actor system closes mailboxes and drains them; then the database
and cache are closed. Cancelling `serve()` skips the graceful parts but still closes storage.

Hypercorn runs with `agentgov.http.server_patches` applied: keep-alive connections are closed when idle
for `KEEP_ALIVE_TIMEOUT` seconds, after `Connection: close` and after an HTTP/1.0 request, and a request
answered before its body was read does not stall the connection.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

import trio
from hypercorn.config import Config as HypercornConfig
from hypercorn.trio import serve as hypercorn_serve

from agentgov.actors.runtime import ActorSystem
from agentgov.config import Settings
from agentgov.http import server_patches
from agentgov.http.app import create_app
from agentgov.http.forwarded import TrustedProxies
from agentgov.logs import fields
from agentgov.security import passwords
from agentgov.services import Services
from agentgov.storage import open_cache, open_database

log = logging.getLogger("agentgov.server")


@dataclasses.dataclass(frozen=True)
class Running:
    """What `serve` reports once it is accepting requests."""

    urls: list[str]
    services: Services


WEBSOCKET_MAX_MESSAGE_BYTES = 64 * 1024


def hypercorn_config(settings: Settings, listen_fd: int | None = None) -> HypercornConfig:
    """Hypercorn's configuration for `settings`; an idle keep-alive connection closes after
    `KEEP_ALIVE_TIMEOUT` seconds. With `listen_fd` it accepts on that inherited socket (a supervised worker)."""
    config = HypercornConfig()
    config.bind = [f"fd://{listen_fd}"] if listen_fd is not None else [f"{settings.host}:{settings.port}"]
    config.graceful_timeout = settings.graceful_timeout
    config.accesslog = None
    config.errorlog = logging.getLogger("hypercorn.error")
    config.keep_alive_timeout = settings.keep_alive_timeout
    # clients send the WebSocket nothing it uses (what they send is read and ignored): a message over this
    # closes the connection with 1009 instead of being buffered (hypercorn's default is 16 MiB)
    config.websocket_max_message_size = WEBSOCKET_MAX_MESSAGE_BYTES
    return config


async def bootstrap_superadmin(services: Services) -> None:
    """Create the Super Admin named by SUPERADMIN_EMAIL/SUPERADMIN_PASSWORD unless it exists (idempotent)."""
    settings = services.settings
    if not settings.superadmin_email:
        return
    if not settings.superadmin_password:
        log.warning("SUPERADMIN_EMAIL is set without SUPERADMIN_PASSWORD; no Super Admin created")
        return
    user, created = await services.identity.ensure_superadmin(
        settings.superadmin_email, await passwords.hash_password(settings.superadmin_password)
    )
    if created:
        log.info("created Super Admin", extra=fields(email=user.email))


async def serve(
    settings: Settings,
    shutdown: trio.Event,
    *,
    listen_fd: int | None = None,
    task_status: trio.TaskStatus[Running] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the service until `shutdown` is set (accepting on `listen_fd` when given, else on the settings'
    host and port). Raises `DatabaseError` if storage cannot be opened."""
    cache = open_cache(settings.redis_url, settings.redis_prefix)
    try:
        db = await open_database(settings.effective_database_url, settings.db_pool_size)
        try:
            async with ActorSystem.open(
                mailbox_capacity=settings.mailbox_capacity,
                idle_timeout=settings.actor_idle_timeout,
            ) as actors:
                services = Services(settings=settings, db=db, cache=cache, actors=actors)
                await bootstrap_superadmin(services)
                app: Any = create_app(services)
                if settings.trusted_proxy_hops:
                    app = TrustedProxies(app, settings.trusted_proxy_hops)
                server_patches.apply()

                async def shutdown_trigger() -> None:
                    await shutdown.wait()
                    services.shutting_down.set()
                    log.info("shutting down: no longer accepting connections")

                async with trio.open_nursery() as nursery:
                    urls = await nursery.start(
                        lambda task_status: hypercorn_serve(
                            app,
                            hypercorn_config(settings, listen_fd),
                            shutdown_trigger=shutdown_trigger,
                            task_status=task_status,
                        )
                    )
                    log.info("serving", extra=fields(urls=",".join(urls), env=settings.env))
                    task_status.started(Running(urls=urls, services=services))
                log.info("http stopped; draining actors")
        finally:
            with trio.move_on_after(10, shield=True):
                await db.close()
    finally:
        with trio.move_on_after(5, shield=True):
            await cache.close()
        log.info("stopped")
