"""The real service for the framework integration tests: a live hypercorn server on SQLite, a tenant (its key
acts as the tenant's Admin, so it also decides approvals), and policies over a ``transfer`` tool (amount <= 100
allowed, > 1000 needs a human, anything between denied by the tenant default), a forbidden ``delete_all``
and an allowed ``lookup``.

The frameworks run outside the trio loop that serves the requests: the blocking ones in a worker thread
(`in_thread`), the asyncio ones in a worker thread's own event loop (`in_asyncio`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
import pytest
import trio

from tests.support.app import ADMIN_KEY, live_server, settings_for
from tests.support.ports import free_port

T = TypeVar("T")

API = "/api/v1"

CEDAR = """
@id("transfer-small") @reason("Transfers up to 100 are fine") @severity("low")
permit (principal, action == Action::"transfer", resource) when { context has amount && context.amount <= 100 };

@id("transfer-large") @reason("Large transfers need a human") @severity("high") @requires_approval("true")
permit (principal, action == Action::"transfer", resource) when { context has amount && context.amount > 1000 };

@id("no-delete-all") @reason("Deleting every record is forbidden") @severity("critical")
forbid (principal, action == Action::"delete_all", resource);

@id("lookup") @reason("Lookups are fine") @severity("low")
permit (principal, action == Action::"lookup", resource);
"""

FORBIDDEN = "Deleting every record is forbidden"
#: The longest a test lets an approval wait (the reviewer decides well before).
APPROVAL_WAIT = 20.0


@dataclass
class Service:
    """The running service, its tenant's key, and reads of what the integrations left there."""

    url: str
    api_key: str
    tenant_id: str
    http: httpx.AsyncClient

    @property
    def headers(self) -> dict[str, str]:
        return {"X-API-Key": self.api_key}

    async def get(self, path: str, **params: Any) -> Any:
        response = await self.http.get(f"{API}{path}", params=params, headers=self.headers)
        assert response.status_code == 200, response.text
        return response.json()

    async def agents(self, name: str | None = None) -> list[dict[str, Any]]:
        items = (await self.get("/agents", limit=200))["items"]
        return [a for a in items if name is None or a["name"] == name]

    async def agent_id(self, name: str) -> str:
        found = await self.agents(name)
        assert len(found) == 1, found
        return str(found[0]["id"])

    async def register_agent(self, name: str) -> str:
        response = await self.http.post(
            f"{API}/agents/register", json={"name": name, "type": "workflow"}, headers=self.headers
        )
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    async def audit(self, **filters: Any) -> list[dict[str, Any]]:
        """Audit entries (newest first): logged actions and policy checks."""
        return list((await self.get("/audit", limit=200, **filters))["items"])

    async def actions(self, **filters: Any) -> list[dict[str, Any]]:
        """The logged actions (not the policy checks), newest first."""
        return [e for e in await self.audit(**filters) if e["kind"] == "action"]

    async def decide_next(self, approve: bool, comment: str = "reviewed") -> dict[str, Any]:
        """Wait for a pending approval request and approve or reject it (as a reviewer would)."""
        with trio.fail_after(15):
            while True:
                pending = (await self.get("/hitl/pending"))["items"]
                if pending:
                    verb = "approve" if approve else "reject"
                    response = await self.http.post(
                        f"{API}/hitl/{verb}/{pending[0]['id']}", json={"comment": comment}, headers=self.headers
                    )
                    assert response.status_code == 200, response.text
                    return dict(response.json())
                await trio.sleep(0.05)

    async def pending(self) -> list[dict[str, Any]]:
        return list((await self.get("/hitl/pending"))["items"])

    async def usage(self, integration: str) -> dict[str, Any]:
        return dict((await self.get(f"/integrations/{integration}/status"))["usage"])


@pytest.fixture
async def service(sqlite_url: str) -> AsyncIterator[Service]:
    async with live_server(settings_for(sqlite_url)) as (http, running):
        response = await http.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        assert response.status_code == 201, response.text
        tenant = response.json()
        key = tenant["api_key"]
        response = await http.post(
            f"{API}/policies", json={"name": "tools", "cedar": CEDAR}, headers={"X-API-Key": key}
        )
        assert response.status_code == 201, response.text
        yield Service(url=running.urls[0], api_key=key, tenant_id=tenant["id"], http=http)


def closed_port_url() -> str:
    """The URL of a loopback port nothing listens on (connections are refused)."""
    return f"http://127.0.0.1:{free_port()}"


async def in_thread(fn: Callable[[], T]) -> T:
    """Run a blocking framework call in a worker thread while the trio loop keeps serving the service."""
    return await trio.to_thread.run_sync(fn)


async def in_asyncio(main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run an asyncio framework coroutine in its own event loop, in a worker thread."""
    return await trio.to_thread.run_sync(lambda: asyncio.run(main()))


async def with_reviewer(service: Service, decision: str, run: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """`run()` while a reviewer approves (``"approve"``) or rejects (``"reject"``) the first pending request;
    with ``"timeout"`` nobody decides."""
    async with trio.open_nursery() as nursery:
        if decision != "timeout":
            nursery.start_soon(service.decide_next, decision == "approve")
        return await run()
