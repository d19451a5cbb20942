"""`python run.py --workers 2` on PostgreSQL and Redis behaves as one service, with real worker processes on
one port. Connections are pinned to a worker (one keep-alive connection per client; `GET /status` and the first
`system.status` event name the process serving them), so each check crosses from one worker to the other:

- an event produced on one worker reaches a WebSocket subscriber of the other, and only its tenant's;
- a policy written through one worker decides on the other within a second;
- a logout through one worker revokes the session on the other;
- the worker holding the `approval-expiry` lease is killed with SIGKILL: the other worker (or the one the
  supervisor restarts) takes the duty over within the lease time plus a tick, with a new fencing token, and
  every audit entry acknowledged before the kill is still there, in one intact chain.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import signal
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import httpx
import psycopg
import pytest
import trio
from trio_websocket import WebSocketConnection, open_websocket_url

from tests.policies.helpers import FORBID_DROP, PERMIT_ACTIVE
from tests.scale.processes import ADMIN, PASSWORD, service_process, shared_backends
from tests.support.polling import wait_until

pytestmark = pytest.mark.postgres
LEASE_SECONDS = 3.0


def _pid(instance: str) -> int:
    return int(instance.split(":")[1])


class Workers:
    """A running `run.py --workers 2` and ways to reach each of its workers."""

    def __init__(self, url: str, database_url: str, log: Path, stack: AsyncExitStack) -> None:
        self.url, self.database_url, self.log, self.stack = url, database_url, log, stack

    def started(self) -> dict[int, int]:
        """worker index -> pid of its latest start, from the supervisor's log."""
        found = re.finditer(r"worker (\d+) started \(pid (\d+)\)", self.log.read_text(errors="replace"))
        return {int(m[1]): int(m[2]) for m in found}

    async def client(self, pid: int, api_key: str, headers: dict[str, str] | None = None) -> httpx.AsyncClient:
        """An HTTP client (sending `headers`, else the tenant's `api_key`) whose single keep-alive connection is
        served by worker `pid`; `GET /status` with `api_key` says which worker serves it."""
        for _ in range(200):
            client = httpx.AsyncClient(
                base_url=self.url,
                headers=headers if headers is not None else {"X-API-Key": api_key},
                timeout=30,
                limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
            )
            if await self.serving(client, api_key) == pid:
                self.stack.push_async_callback(client.aclose)
                return client
            await client.aclose()
        raise AssertionError(f"no connection reached worker {pid}")

    @staticmethod
    async def serving(client: httpx.AsyncClient, api_key: str) -> int:
        """The pid of the worker serving `client`'s connection."""
        status = await client.get("/api/v1/status", headers={"X-API-Key": api_key})
        assert status.status_code == 200, status.text
        return _pid(status.json()["instance"])

    async def subscriber(self, pid: int, token: str) -> WebSocketConnection:
        """A WebSocket connection served by worker `pid` (its first `system.status` says which)."""
        ws_url = self.url.replace("http://", "ws://") + f"/api/v1/ws?token={token}"
        for _ in range(200):
            stack = AsyncExitStack()
            ws = await stack.enter_async_context(open_websocket_url(ws_url))
            with trio.fail_after(20):
                first = json.loads(await ws.get_message())
            assert first["event"] == "system.status"
            if _pid(first["data"]["instance"]) == pid:
                self.stack.push_async_exit(stack)
                return ws
            await stack.aclose()
        raise AssertionError(f"no WebSocket connection reached worker {pid}")

    def lease_holder(self) -> tuple[int, int] | None:
        """(pid, token) of the approval-expiry lease."""
        with psycopg.connect(self.database_url) as conn:
            row = conn.execute("SELECT owner, token FROM leases WHERE name = 'approval-expiry'").fetchone()
        return None if row is None else (_pid(row[0]), int(row[1]))


@asynccontextmanager
async def two_workers(tmp_path: Path) -> AsyncIterator[Workers]:
    # KEEP_ALIVE_TIMEOUT: a pinned connection stays with its worker for the whole test
    with shared_backends(LEASE_SECONDS=str(LEASE_SECONDS), KEEP_ALIVE_TIMEOUT="600", LOG_LEVEL="INFO") as env:
        database_url = env["DATABASE_URL"]
        with service_process(tmp_path, "workers", env, "--workers", "2") as (url, parent):
            async with AsyncExitStack() as stack:
                workers = Workers(url, database_url, tmp_path / "workers.log", stack)

                async def serving() -> bool:
                    if parent.poll() is not None:
                        raise AssertionError(f"run.py exited with {parent.returncode}")
                    if len(workers.started()) < 2:
                        return False
                    try:
                        async with httpx.AsyncClient(base_url=url) as probe:
                            return (await probe.get("/api/v1/health/ready")).status_code == 200
                    except httpx.TransportError:
                        return False

                await wait_until(serving, within=90, every=0.2)
                yield workers


async def _tenant(workers: Workers, name: str) -> tuple[dict, str]:
    """A tenant and its admin's access token (through whichever worker)."""
    async with httpx.AsyncClient(base_url=workers.url, headers=ADMIN, timeout=30) as admin:
        email = f"admin@{name.lower()}.example"
        body = {"name": name, "admin_email": email, "admin_password": PASSWORD}
        created = await admin.post("/api/v1/tenants", json=body)
        assert created.status_code == 201, created.text
        login = await admin.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert login.status_code == 200, login.text
    return created.json(), login.json()["access_token"]


async def _next_event(ws: WebSocketConnection, name: str) -> dict:
    while True:
        message = json.loads(await ws.get_message())
        if message["event"] == name:
            return message


async def test_two_workers_on_one_port_act_as_one_service(tmp_path: Path) -> None:
    async with two_workers(tmp_path) as workers:
        first, second = sorted(workers.started().values())
        tenant, token = await _tenant(workers, "Acme")
        other, other_token = await _tenant(workers, "Other")
        api_key = tenant["api_key"]
        on_a = await workers.client(first, api_key)
        on_b = await workers.client(second, api_key)

        # Events: produced on worker A, received by a subscriber of worker B; the other tenant sees nothing.
        ws = await workers.subscriber(second, token)
        other_ws = await workers.subscriber(second, other_token)
        assert (await on_a.post("/api/v1/policies", json={"name": "permit", "cedar": PERMIT_ACTIVE})).status_code == 201
        agent = (await on_a.post("/api/v1/agents/register", json={"name": "bot", "type": "llm"})).json()
        check = {"agent_id": agent["id"], "action": "sql.drop_table", "resource": "db://orders", "context": {}}
        assert (await on_b.post("/api/v1/policies/check", json=check)).json()["allowed"] is True

        # A policy written through A decides on B within a second.
        written = await on_a.post("/api/v1/policies", json={"name": "forbid", "cedar": FORBID_DROP})
        assert written.status_code == 201
        started = time.monotonic()
        while (await on_b.post("/api/v1/policies/check", json=check)).json()["allowed"]:
            assert time.monotonic() - started < 1.0, "the policy did not reach the other worker within 1 s"
            await trio.sleep(0.02)
        on_a_only = await on_a.post("/api/v1/policies/check", json=check)  # decided on A alone
        assert on_a_only.json()["allowed"] is False
        decision_id = on_a_only.json()["decision_id"]
        with trio.fail_after(20):
            while (event := await _next_event(ws, "policy.violated"))["data"]["decision_id"] != decision_id:
                pass  # B's own denials of the loop above come first
        assert event["tenant_id"] == tenant["id"] and event["data"]["agent_id"] == agent["id"]
        with trio.move_on_after(1.5):
            leaked = await _next_event(other_ws, "policy.violated")
            raise AssertionError(f"another tenant's event reached this subscriber: {leaked}")
        assert (await workers.serving(on_a, api_key), await workers.serving(on_b, api_key)) == (first, second)

        # A logout through A revokes the session on B.
        bearer = {"Authorization": f"Bearer {token}"}
        me_a = await workers.client(first, api_key, bearer)
        me_b = await workers.client(second, api_key, bearer)
        assert (await me_b.get("/api/v1/auth/me")).status_code == 200
        assert (await me_a.post("/api/v1/auth/logout")).status_code in (200, 204)
        await wait_until(lambda: _status_is(me_b, "/api/v1/auth/me", 401), within=1.0, every=0.02)
        assert await workers.serving(me_b, api_key) == second
        assert other["id"] != tenant["id"]


async def _status_is(client: httpx.AsyncClient, path: str, status: int) -> bool:
    return (await client.get(path)).status_code == status


async def test_a_killed_worker_s_duty_is_taken_over_and_nothing_acknowledged_is_lost(tmp_path: Path) -> None:
    async with two_workers(tmp_path) as workers:
        pids = set(workers.started().values())
        first = await wait_for(lambda: (h := workers.lease_holder()) and h[0] in pids and h, within=30)
        victim = first[0]
        survivor = (pids - {victim}).pop()
        tenant, _ = await _tenant(workers, "Acme")
        to_victim = await workers.client(victim, tenant["api_key"])
        to_survivor = await workers.client(survivor, tenant["api_key"])
        agent = (await to_survivor.post("/api/v1/agents/register", json={"name": "bot", "type": "llm"})).json()
        acknowledged: list[str] = []
        for i in range(40):
            client = to_victim if i % 2 else to_survivor
            logged = await client.post(
                "/api/v1/audit/log", json={"agent_id": agent["id"], "action": f"step.{i}", "resource": "doc"}
            )
            assert logged.status_code == 201, logged.text
            acknowledged.append(logged.json()["id"])

        index = next(i for i, p in workers.started().items() if p == victim)
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        taken = await wait_for(lambda: (h := workers.lease_holder()) and h[0] != victim and h, within=3 * LEASE_SECONDS)
        elapsed = time.monotonic() - killed_at
        assert taken[1] == first[1] + 1, (first, taken)
        assert elapsed <= LEASE_SECONDS + LEASE_SECONDS / 3 + 1.5, elapsed
        await wait_for(lambda: workers.started()[index] != victim, within=30)  # the supervisor restarted it

        for entry_id in acknowledged:
            found = await to_survivor.get(f"/api/v1/audit/{entry_id}")
            assert found.status_code == 200, (entry_id, found.text)
        report = (await to_survivor.get("/api/v1/audit/verify")).json()
        assert report["intact"] is True and report["checked"] == len(acknowledged), report


async def wait_for(probe, *, within: float):
    """Poll the blocking `probe` in a thread until it returns something truthy; returns it."""
    with trio.fail_after(within):
        while True:
            value = await trio.to_thread.run_sync(probe)
            if value:
                return value
            await trio.sleep(0.05)


async def test_clustering_jobs_of_one_tenant_never_overlap_across_workers(tmp_path: Path) -> None:
    async with two_workers(tmp_path) as workers:
        first, second = sorted(workers.started().values())
        tenant, _ = await _tenant(workers, "Acme")
        on_a = await workers.client(first, tenant["api_key"])
        on_b = await workers.client(second, tenant["api_key"])
        events = [
            {"source": "proxy", "host": f"build-{i % 7}", "process": f"python job{i % 5}.py", "endpoint": "api.x.ai"}
            for i in range(60)
        ]
        assert (await on_a.post("/api/v1/discovery/ingest/batch", json={"events": events})).status_code == 200
        jobs: list[dict] = []

        async def start(client: httpx.AsyncClient) -> None:
            for _ in range(3):
                accepted = await client.post("/api/v1/discovery/cluster")
                assert accepted.status_code == 202, accepted.text
                jobs.append(accepted.json())

        async with trio.open_nursery() as nursery:
            nursery.start_soon(start, on_a)
            nursery.start_soon(start, on_b)

        done: list[dict] = []

        async def finished() -> bool:
            done[:] = [(await on_a.get(job["status_url"])).json() for job in jobs]
            return all(s["status"] in ("succeeded", "failed") for s in done)

        await wait_until(finished, within=60, every=0.1)
        assert all(job["status"] == "succeeded" for job in done), done
        spans = sorted((job["started_at"], job["finished_at"]) for job in done)
        for (_, ended), (began, _) in itertools.pairwise(spans):
            assert ended <= began, spans  # one at a time, whichever worker ran it
