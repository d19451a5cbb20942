"""Two service instances sharing one database (as two processes behind a load balancer): a policy write in
one is picked up by the other's policy actor within `SYNC_INTERVAL`, and nothing recompiles without a change.

The trio clock is a `MockClock` that only moves when the test jumps it, so "within the interval" is exact.
"""

from __future__ import annotations

from contextlib import AsyncExitStack

import trio.testing

from agentgov.actors.policy import SYNC_INTERVAL, Compiled, PolicyActor, Sync, policy
from agentgov.http.app import create_app
from agentgov.storage.policies import PolicyRepo
from tests.policies.helpers import API, FORBID_DROP, PERMIT_ACTIVE, check, create_policy, key, register_agent
from tests.support.app import ADMIN_KEY, running_services, settings_for


async def tick(mock_clock, services, tenant_id: str) -> None:
    """Let one sync interval pass and wait until the policy actor has handled the tick it queued."""
    mock_clock.jump(SYNC_INTERVAL)
    await trio.testing.wait_all_tasks_blocked()  # the timer has queued the tick ...
    await policy(services, tenant_id).ask(Compiled())  # ... and this answer comes after it was handled


async def test_another_process_write_is_picked_up(database_url: str, mock_clock) -> None:
    settings = settings_for(database_url)
    async with AsyncExitStack() as stack:
        svc_a = await stack.enter_async_context(running_services(settings))
        svc_b = await stack.enter_async_context(running_services(settings))
        a, b = create_app(svc_a).test_client(), create_app(svc_b).test_client()

        response = await a.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        tenant = await response.get_json()
        api_key, tid = tenant["api_key"], tenant["id"]
        agent = await register_agent(a, api_key)
        spawned: list[PolicyActor] = []

        def factory() -> PolicyActor:
            spawned.append(PolicyActor(tid, PolicyRepo(svc_b.db)))
            return spawned[-1]

        svc_b.actors.get_or_spawn(f"policy:{tid}", factory)
        assert (await check(b, api_key, agent["id"], "files.read"))["allowed"] is False
        (actor_b,) = spawned
        compiled_before = actor_b.compiled

        # nothing changed: ticks do not recompile
        for _ in range(3):
            mock_clock.jump(SYNC_INTERVAL)
            await trio.testing.wait_all_tasks_blocked()
        assert (await check(b, api_key, agent["id"], "files.read"))["allowed"] is False
        assert actor_b.compiled is compiled_before

        # a write through A: B still answers from its compiled set until its next sync tick ...
        doc = await create_policy(a, api_key, PERMIT_ACTIVE)
        assert (await check(a, api_key, agent["id"], "files.read"))["allowed"] is True
        assert (await check(b, api_key, agent["id"], "files.read"))["allowed"] is False
        # ... which comes within SYNC_INTERVAL (checks read the published view: wait for the tick's turn)
        await tick(mock_clock, svc_b, tid)
        body = await check(b, api_key, agent["id"], "files.read")
        assert body["allowed"] is True and body["determining_policies"] == ["allow-active"]
        assert actor_b.compiled is not compiled_before

        # updates, the default decision and deletes travel the same way
        response = await a.put(
            f"{API}/policies/{doc['id']}", json={"cedar": PERMIT_ACTIVE + FORBID_DROP}, headers=key(api_key)
        )
        assert response.status_code == 200
        await a.put(f"{API}/policies/settings", json={"default_decision": "allow"}, headers=key(api_key))
        await tick(mock_clock, svc_b, tid)
        assert (await check(b, api_key, agent["id"], "sql.drop_table"))["allowed"] is False
        assert (await a.delete(f"{API}/policies/{doc['id']}", headers=key(api_key))).status_code == 204
        # an explicit Sync does what the tick does, at once
        generation = await policy(svc_b, tid).ask(Sync())
        assert generation == actor_b.generation
        body = await check(b, api_key, agent["id"], "sql.drop_table")
        assert body["allowed"] is True and body["default_applied"] is True

        # a duplicate @id is refused even when the other document was written by the other process
        await create_policy(a, api_key, FORBID_DROP, name="from-a")
        response = await b.post(f"{API}/policies", json={"name": "from-b", "cedar": FORBID_DROP}, headers=key(api_key))
        assert response.status_code == 409 and "no-sql-drop" in (await response.get_json())["detail"]


async def test_concurrent_updates_keep_every_version(database_url: str) -> None:
    """Two processes updating the same policy at once: both succeed, in some order, and history has both."""
    settings = settings_for(database_url)
    async with AsyncExitStack() as stack:
        svc_a = await stack.enter_async_context(running_services(settings))
        svc_b = await stack.enter_async_context(running_services(settings))
        a, b = create_app(svc_a).test_client(), create_app(svc_b).test_client()
        response = await a.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        api_key = (await response.get_json())["api_key"]
        doc = await create_policy(a, api_key, PERMIT_ACTIVE)
        url = f"{API}/policies/{doc['id']}"
        statuses: list[int] = []

        async def rename(client, name: str) -> None:
            for n in range(5):
                response = await client.put(url, json={"description": f"{name}-{n}"}, headers=key(api_key))
                statuses.append(response.status_code)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(rename, a, "a")
            nursery.start_soon(rename, b, "b")
        assert statuses == [200] * 10
        versions = await (await a.get(f"{url}/versions?limit=200", headers=key(api_key))).get_json()
        assert versions["total"] == 11
        assert [v["version"] for v in versions["items"]] == list(range(11, 0, -1))
        descriptions = {v["description"] for v in versions["items"]}
        assert {f"a-{n}" for n in range(5)} | {f"b-{n}" for n in range(5)} <= descriptions
