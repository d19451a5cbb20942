"""Build the real service (storage, cache, actors, app) inside a test's nursery."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import trio
from quart_trio import QuartTrio

from agentgov.actors.runtime import ActorSystem
from agentgov.config import Settings
from agentgov.http.app import create_app
from agentgov.server import Running, serve
from agentgov.services import Services
from agentgov.storage import open_cache, open_database

ADMIN_KEY = "test-admin-key-0123456789"


def settings_for(database_url: str, redis_url: str = "", **overrides: Any) -> Settings:
    env = {
        "ADMIN_KEY": ADMIN_KEY,
        "JWT_SECRET": "test-jwt-secret-0123456789",
        "WEBHOOK_SECRET": "test-webhook-secret-0123456789",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
    }
    settings = Settings.from_env(env)
    overrides.setdefault("data_dir", Path(tempfile.mkdtemp(prefix="agentgov-test-")))  # export files land here
    return dataclasses.replace(settings, **overrides)


@asynccontextmanager
async def running_services(settings: Settings, **actor_options: Any) -> AsyncIterator[Services]:
    cache = open_cache(settings.redis_url, settings.redis_prefix)
    db = await open_database(settings.effective_database_url)
    try:
        async with ActorSystem.open(mailbox_capacity=settings.mailbox_capacity, **actor_options) as actors:
            yield Services(settings=settings, db=db, cache=cache, actors=actors)
    finally:
        await db.close()
        await cache.close()


@asynccontextmanager
async def app_for(settings: Settings) -> AsyncIterator[QuartTrio]:
    async with running_services(settings) as services:
        yield create_app(services)


@asynccontextmanager
async def live_server(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, Running]]:
    """A real hypercorn server on an ephemeral port, and an httpx client pointed at it."""
    shutdown = trio.Event()
    settings = dataclasses.replace(settings, host="127.0.0.1", port=0)
    async with trio.open_nursery() as nursery:
        running: Running = await nursery.start(serve, settings, shutdown)
        async with httpx.AsyncClient(base_url=running.urls[0], timeout=30) as client:
            yield client, running
        shutdown.set()


async def api_key_with_role(services: Services, tenant_id: str, role: str, name: str = "test key") -> str:
    """Mint a tenant API key with `role` ("Developer", "Security Analyst", "Admin") straight in storage."""
    from agentgov.security import api_keys
    from agentgov.storage.identity import NewApiKey

    key = api_keys.generate()
    await services.identity.create_api_key(
        tenant_id, NewApiKey(id=key.key_id, secret_hash=key.secret_hash, kind="tenant", name=name, role=role)
    )
    return key.raw
