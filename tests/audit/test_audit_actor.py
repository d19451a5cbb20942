"""The audit actor's interface (`audit(services, tenant_id)`, `AppendEntry`): batching, deduplication,
policy-decision entries, several processes on one database, a changed secret, cancellation."""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio
import trio.testing

from agentgov.actors.audit import AppendEntry, AuditUnavailable, audit
from agentgov.security import api_keys
from agentgov.services import Services
from agentgov.storage.audit import AuditEntry, AuditRepo
from agentgov.storage.database import DatabaseError
from agentgov.storage.identity import NewApiKey
from tests.support.app import running_services, settings_for

AGENT = "6f1c1a44-8a51-4b0e-9c38-0f4d3f3b2a10"


@asynccontextmanager
async def service(database_url: str, **overrides: object) -> AsyncIterator[Services]:
    async with running_services(settings_for(database_url, **overrides)) as svc:
        yield svc


async def new_tenant(svc: Services, name: str = "Acme") -> str:
    key = api_keys.generate()
    tenant, _ = await svc.identity.create_tenant(
        name, NewApiKey(id=key.key_id, secret_hash=key.secret_hash, kind="tenant", name="k", role="Admin")
    )
    return tenant.id


async def append(svc: Services, tenant_id: str, **fields: object) -> AuditEntry:
    message = AppendEntry(**{"agent_id": AGENT, "action": "read", "resource": "r", **fields})  # type: ignore[arg-type]
    entry: AuditEntry = await audit(svc, tenant_id).ask(message)
    return entry


async def verify(svc: Services, tenant_id: str) -> dict:
    report = await AuditRepo(svc.db).verify(tenant_id, svc.settings.effective_audit_secret)
    return report.to_public()


async def test_policy_decisions_share_the_chain(database_url: str) -> None:
    async with service(database_url) as svc:
        tenant = await new_tenant(svc)
        action = await append(svc, tenant, actor="key:abc")
        decision = {"allowed": False, "reason": "denied by policy", "risk": {"level": "high"}}
        check = await append(svc, tenant, kind="policy_check", decision=decision, risk_score=0.9, is_approved=False)
        assert (action.sequence, check.sequence) == (1, 2)
        assert check.prev_signature == action.signature
        public = check.to_public()
        assert public["kind"] == "policy_check" and public["decision"] == decision and public["risk_score"] == 0.9
        assert (await AuditRepo(svc.db).get(tenant, check.id)) == check
        assert (await verify(svc, tenant))["intact"] is True


async def test_dedup_key_returns_the_existing_entry(database_url: str) -> None:
    async with service(database_url) as svc:
        tenant = await new_tenant(svc)
        first = await append(svc, tenant, dedup_key="decision-1")
        again = await append(svc, tenant, dedup_key="decision-1", action="something else")
        assert again == first and again.duplicate and not first.duplicate
        assert await AuditRepo(svc.db).count(tenant) == 1


async def test_queued_appends_are_committed_as_one_batch(database_url: str) -> None:
    async with service(database_url) as svc:
        tenant = await new_tenant(svc)
        await append(svc, tenant)  # the actor is running and idle
        results: list[AuditEntry] = []

        async def one(i: int) -> None:
            results.append(await append(svc, tenant, action=f"a{i}", dedup_key="same" if i in (3, 7) else None))

        async with trio.open_nursery() as nursery:
            for i in range(50):
                nursery.start_soon(one, i)
        fresh = [e for e in results if not e.duplicate]
        assert len(fresh) == 49 and sum(e.duplicate for e in results) == 1
        assert sorted(e.sequence for e in fresh) == list(range(2, 51))
        assert len({e.created_at for e in fresh}) == 1  # one transaction, one timestamp
        assert (await verify(svc, tenant))["checked"] == 50


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"risk_score": 1.5}, "risk_score"),
        ({"risk_score": float("nan")}, "risk_score"),
        ({"action": " "}, "action"),
        ({"input": {"x": float("inf")}}, "input"),
        ({"reasoning": [1]}, "reasoning"),
        ({"decision": ["not", "a", "dict"]}, "decision"),
        ({"is_approved": "yes"}, "is_approved"),
    ],
)
async def test_invalid_messages_fail_alone(sqlite_url: str, fields: dict, message: str) -> None:
    async with service(sqlite_url) as svc:
        tenant = await new_tenant(svc)
        with pytest.raises(ValueError, match=message):
            await append(svc, tenant, **fields)
        assert (await append(svc, tenant)).sequence == 1


async def test_two_processes_append_to_one_chain(database_url: str) -> None:
    async with service(database_url) as one, service(database_url) as two:
        tenant = await new_tenant(one)
        assert (await append(two, tenant)).sequence == 1  # `two` caches head 1
        assert (await append(one, tenant)).sequence == 2  # `one` starts after, at head 1
        assert (await append(two, tenant)).sequence == 3  # `two`'s cached head is stale: it re-reads

        async def burst(svc: Services, label: str) -> None:
            for i in range(20):
                await append(svc, tenant, action=f"{label}{i}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(burst, one, "one")
            nursery.start_soon(burst, two, "two")
            nursery.start_soon(append, one, tenant)
            nursery.start_soon(append, two, tenant)
        report = await verify(one, tenant)
        assert report["intact"] is True and report["checked"] == 45 and report["head"]["sequence"] == 45

        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(append, one, tenant, dedup_key="shared"))
            nursery.start_soon(functools.partial(append, two, tenant, dedup_key="shared"))
        assert await AuditRepo(one.db).count(tenant) == 46


async def test_changed_secret_refuses_appends_instead_of_breaking_the_chain(database_url: str) -> None:
    async with service(database_url, audit_secret="first-audit-secret-0123") as svc:
        tenant = await new_tenant(svc)
        await append(svc, tenant)
    async with service(database_url, audit_secret="other-audit-secret-0123") as svc:
        with pytest.raises(AuditUnavailable, match="AUDIT_SECRET"):
            await append(svc, tenant)
        report = await verify(svc, tenant)
        assert report["intact"] is False and report["findings"][0]["kind"] == "key"
    async with service(database_url, audit_secret="first-audit-secret-0123") as svc:
        assert (await append(svc, tenant)).sequence == 2
        assert (await verify(svc, tenant))["intact"] is True


async def test_a_missing_chain_record_refuses_appends_and_stays_reported(database_url: str) -> None:
    """Entries without their chain record (the database was altered): no new record is made up (appends would
    collide with the entries' sequences, and the finding would turn into 'every entry inserted'); appends are
    refused as unavailable, and verification keeps naming the missing record."""
    async with service(database_url) as svc:
        tenant = await new_tenant(svc)
        for _ in range(3):
            await append(svc, tenant)
        await svc.db.write(lambda conn: conn.execute("DELETE FROM audit_chains WHERE tenant_id = :t", {"t": tenant}))
    async with service(database_url) as svc:
        for _ in range(2):
            with pytest.raises(AuditUnavailable, match="chain record is missing while 3 entries exist"):
                await append(svc, tenant)
        report = await verify(svc, tenant)
        assert report["intact"] is False and [f["kind"] for f in report["findings"]] == ["head"]
        assert await AuditRepo(svc.db).count(tenant) == 3


async def test_cancelled_caller_may_still_have_its_entry_written(sqlite_url: str) -> None:
    async with service(sqlite_url) as svc:
        tenant = await new_tenant(svc)
        await append(svc, tenant)
        with trio.CancelScope() as scope:
            scope.cancel()
            await append(svc, tenant, action="abandoned")
        later = await append(svc, tenant, action="later")  # the mailbox is FIFO: "abandoned" went first
        entries, total = await AuditRepo(svc.db).list_entries(tenant)
        assert total == 3 and later.sequence == 3
        assert [e.action for e in entries] == ["later", "abandoned", "read"]


async def test_database_failure_is_reported_to_the_caller(sqlite_url: str) -> None:
    async with service(sqlite_url) as svc:
        tenant = await new_tenant(svc)
        await append(svc, tenant)
        await svc.db.close()
        with pytest.raises(DatabaseError):
            await append(svc, tenant)


def test_append_entry_is_a_frozen_message() -> None:
    message = AppendEntry(agent_id=AGENT, action="a", resource="r")
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.action = "b"  # type: ignore[misc]
    assert (message.kind, message.actor, message.dedup_key) == ("action", "", None)


async def test_an_export_holds_nothing_appended_while_it_runs(sqlite_url: str) -> None:
    """The manifest's `chain_head` is the chain's end when the export started, and the file holds nothing
    after it: entries appended between two pages are left out, however the pages fall."""
    from agentgov.exports.signing import derived_private_key
    from agentgov.exports.stream import export_chunks
    from agentgov.storage.audit import ExportFilter
    from agentgov.storage.exports import ExportRepo

    async with service(sqlite_url) as svc:
        tenant = await new_tenant(svc)
        for _ in range(5):
            await append(svc, tenant)
        chunks = export_chunks(
            svc.db, tenant, ExportFilter(), "jsonl", export_id="e1", key=derived_private_key("k" * 32), page_size=2
        )
        body = [await anext(chunks), await anext(chunks)]  # the opening, then the first page
        for _ in range(3):  # appended while the export runs
            await append(svc, tenant)
        body += [chunk async for chunk in chunks]
        rows = [json.loads(line) for line in b"".join(body).decode().splitlines() if line.strip()]
        manifest = await ExportRepo(svc.db).manifest(tenant, "e1")
        assert manifest is not None
        assert [row["sequence"] for row in rows] == [1, 2, 3, 4, 5]
        assert manifest["chain_head"]["sequence"] == 5 and manifest["rows"] == 5
