"""The approval-expiry duty (`agentgov.duties`): a pending approval past its expiry that no HITL actor tracks
(its process died) is expired by whichever process holds the `approval-expiry` lease, and announced; while
another process holds the lease, this one leaves it alone. Both backends."""

from __future__ import annotations

from datetime import timedelta

import trio

from agentgov.actors.notifier import Subscribe, notifier
from agentgov.duties import APPROVAL_EXPIRY, RunDuties, duties
from agentgov.security.roles import Role
from agentgov.storage.hitl import HitlRepo, NewApproval
from agentgov.storage.leases import LeaseRepo
from agentgov.timeutil import now, to_iso
from tests.support.app import ADMIN_KEY, app_for, settings_for


async def test_overdue_approvals_are_expired_by_the_lease_holder(database_url: str) -> None:
    async with app_for(settings_for(database_url)) as app:
        svc = app.extensions["agentgov"]
        client = app.test_client()
        tenant = await (
            await client.post("/api/v1/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        ).get_json()
        agent = await (
            await client.post(
                "/api/v1/agents/register", json={"name": "bot", "type": "llm"}, headers={"X-API-Key": tenant["api_key"]}
            )
        ).get_json()
        leases = LeaseRepo(svc.db)
        await leases.release(APPROVAL_EXPIRY, svc.instance_id)
        assert await leases.acquire(APPROVAL_EXPIRY, "another-process", 3600) is not None  # a live other owner

        # A request created by a process that died: stored, overdue, tracked by no actor here.
        created = now() - timedelta(hours=2)
        repo = HitlRepo(svc.db)
        made = await repo.create(
            tenant["id"],
            NewApproval(
                agent_id=agent["id"],
                action="pay",
                resource="acct:1",
                context={},
                policy_ids=(),
                reason="big",
                risk_score=None,
                requested_by="key:x",
            ),
            now=to_iso(created),
            expires_at=to_iso(created + timedelta(hours=1)),
        )
        subscription = await notifier(svc, tenant["id"]).ask(Subscribe(Role.ADMIN, "test"))

        async def status() -> str:
            record = await repo.get(tenant["id"], made.request.id)
            assert record is not None
            return record.status

        await duties(svc).ask(RunDuties())  # the other process holds the duty: nothing happens here
        assert await status() == "pending"

        await leases.release(APPROVAL_EXPIRY, "another-process")  # it stopped: this process takes over
        await duties(svc).ask(RunDuties())
        assert await status() == "expired"
        holder = await leases.holder(APPROVAL_EXPIRY)
        assert holder is not None and holder[0] == svc.instance_id and holder[1] >= 2  # a new owner: a new token

        messages = []
        with trio.fail_after(10):
            while len(messages) < 2:  # system.status first, then the announcement
                item = await subscription.receive.receive()
                messages.append(item.decode() if isinstance(item, bytes) else item)
        assert '"event":"hitl.resolved"' in messages[-1].replace(" ", "") and made.request.id in messages[-1]
