"""The real service for the client's tests: a live hypercorn server (SQLite unless a test says otherwise), a
tenant, an `AsyncClient` with its key, an agent and a policy with allow, deny and approval rules."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
import trio
from agentgov_client import Agent, AsyncClient, CreatedTenant, Policy

from agentgov.config import Settings
from agentgov.server import Running, serve
from tests.support.app import ADMIN_KEY, live_server, settings_for

WEBHOOK_SECRET = "test-webhook-secret-0123456789"
ADMIN_EMAIL = "admin@acme.example"
PASSWORD = "a long passphrase 42"

# read: allowed; delete: denied (high); pay: allowed once a human approves.
CEDAR = """@id("allow-read")
permit (principal, action, resource) when { context.action == "read" };
@id("approve-pay")
@requires_approval("true")
permit (principal, action, resource) when { context.action == "pay" };
@id("no-delete")
@reason("Deleting needs a change ticket")
@severity("high")
forbid (principal, action, resource) when { context.action == "delete" };
"""


@dataclasses.dataclass
class Service:
    url: str
    running: Running
    settings: Settings


@asynccontextmanager
async def running_service(settings: Settings) -> AsyncIterator[Service]:
    async with live_server(settings) as (_http, running):
        yield Service(url=running.urls[0], running=running, settings=settings)


@asynccontextmanager
async def service_on_port(settings: Settings, port: int) -> AsyncIterator[Service]:
    """The service listening on a chosen loopback port (to stop and start it again on the same address)."""
    shutdown = trio.Event()
    settings = dataclasses.replace(settings, host="127.0.0.1", port=port)
    async with trio.open_nursery() as nursery:
        running: Running = await nursery.start(serve, settings, shutdown)
        yield Service(url=f"http://127.0.0.1:{port}", running=running, settings=settings)
        shutdown.set()


class CountingTransport(httpx.AsyncBaseTransport):
    """httpx's own async transport, counting the requests it sends by (method, path) and their answers."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.sent: collections.Counter[tuple[str, str]] = collections.Counter()
        self.answers: collections.Counter[tuple[str, str, int]] = collections.Counter()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.sent[(request.method, request.url.path)] += 1
        response = await self.inner.handle_async_request(request)
        self.answers[(request.method, request.url.path, response.status_code)] += 1
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


async def new_tenant(url: str, name: str = "Acme") -> CreatedTenant:
    async with AsyncClient(url, admin_key=ADMIN_KEY) as admin:
        return await admin.create_tenant(name, admin_email=ADMIN_EMAIL, admin_password=PASSWORD)


@pytest.fixture
async def service(sqlite_url: str) -> AsyncIterator[Service]:
    async with running_service(settings_for(sqlite_url)) as running:
        yield running


@pytest.fixture
async def tenant(service: Service) -> CreatedTenant:
    return await new_tenant(service.url)


@pytest.fixture
async def client(service: Service, tenant: CreatedTenant) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(service.url, api_key=tenant.api_key, webhook_secret=WEBHOOK_SECRET) as client:
        yield client


@pytest.fixture
async def agent(client: AsyncClient) -> Agent:
    return await client.register_agent("Mail Dispatcher Bot", "llm", capabilities=["email"])


@pytest.fixture
async def policy(client: AsyncClient) -> Policy:
    return await client.create_policy("rules", CEDAR)


async def eventually(predicate: Any, within: float = 10.0, interval: float = 0.05) -> Any:
    """Await `predicate()` until it returns a truthy value (returned); fails after `within` seconds."""
    with trio.fail_after(within):
        while True:
            value = await predicate()
            if value:
                return value
            await trio.sleep(interval)
