"""The repositories behave the same on SQLite and PostgreSQL: create, read, list with pagination, and
nothing of one tenant is visible to another."""

from __future__ import annotations

import dataclasses
import uuid

from agentgov.actors.discovery import prepare
from agentgov.storage.agents import Agent, AgentRepo
from agentgov.storage.audit import AuditRepo, BatchResult, PendingEntry, append_batch, open_chain
from agentgov.storage.database import Connection, Database
from agentgov.storage.discovery import DiscoveryRepo
from agentgov.storage.hitl import HitlRepo, NewApproval
from agentgov.storage.identity import IdentityRepo, NewApiKey
from agentgov.storage.policies import PolicyRepo, PolicyWrite

NOW = "2026-01-01T00:00:00.000000Z"
LATER = "2026-01-02T00:00:00.000000Z"
SECRET = "contract-test-audit-secret-0123456789"
UNKNOWN_EVENTS = [
    {"source": "proxy", "host": "build-7", "process": "python report.py", "endpoint": "api.openai.com"},
    {"source": "edr", "host": "laptop-3", "process": "node crawler.js", "user_agent": "crawler/2"},
]


async def tenants(db: Database) -> tuple[str, str]:
    repo = IdentityRepo(db)
    ids = []
    for name in ("Acme", "Other"):
        key = NewApiKey(id=uuid.uuid4().hex[:16], secret_hash="h", kind="tenant", name="k", role="Admin")
        tenant, _ = await repo.create_tenant(name, key)
        ids.append(tenant.id)
    return ids[0], ids[1]


def agent(tenant_id: str, name: str, n: int) -> Agent:
    return Agent(
        id=str(uuid.uuid4()),
        tenant_id=tenant_id,
        name=name,
        type="llm" if n % 2 else "tool",
        description=f"agent {n}",
        capabilities=("email", "files"),
        owner=None,
        metadata={"n": n},
        status="active",
        risk_score=None,
        predicted_type=None,
        predicted_type_confidence=None,
        last_heartbeat_at=None,
        created_at=f"2026-01-01T00:00:{n:02d}.000000Z",
        updated_at=f"2026-01-01T00:00:{n:02d}.000000Z",
    )


async def test_agents(db: Database) -> None:
    acme, other = await tenants(db)
    repo = AgentRepo(db)
    stored = [agent(acme, f"bot {n}", n) for n in range(5)]
    for item in stored:
        await repo.insert(item, text_hash="x")
    assert await repo.get(acme, stored[0].id) == stored[0]
    assert await repo.get(other, stored[0].id) is None  # another tenant's agent is not there
    page, total = await repo.list_page(acme, agent_type=None, status=None, limit=2, offset=1)
    assert total == 5 and [a.name for a in page] == ["bot 1", "bot 2"]
    llms, total = await repo.list_page(acme, agent_type="llm", status=None, limit=10, offset=0)
    assert total == 2 and all(a.type == "llm" for a in llms)
    assert await repo.list_page(other, agent_type=None, status=None, limit=10, offset=0) == ([], 0)
    assert set(await repo.get_many(acme, [a.id for a in stored[:3]])) == {a.id for a in stored[:3]}
    assert await repo.get_many(other, [a.id for a in stored]) == {}
    changed = dataclasses.replace(stored[1], name="renamed", updated_at=LATER)
    assert await repo.replace(changed, text_hash="y") is not None
    assert (await repo.get(acme, stored[1].id)).name == "renamed"  # type: ignore[union-attr]
    assert await repo.delete(other, stored[2].id) is None  # not another tenant's to delete
    assert await repo.delete(acme, stored[2].id) is not None
    assert await repo.get(acme, stored[2].id) is None


async def test_approvals(db: Database) -> None:
    acme, other = await tenants(db)
    await AgentRepo(db).insert(subject := agent(acme, "payer", 1), text_hash="x")
    repo = HitlRepo(db)
    created = []
    for n in range(3):
        new = NewApproval(
            agent_id=subject.id,
            action="pay",
            resource=f"invoice-{n}",
            context={"amount": n},
            policy_ids=("p1",),
            reason="over threshold",
            risk_score=0.5,
            requested_by="key:x",
        )
        at = f"2026-01-01T00:00:0{n}.000000Z"
        created.append((await repo.create(acme, new, now=at, expires_at=LATER)).request)
    assert await repo.get(acme, created[0].id) == created[0]
    assert await repo.get(other, created[0].id) is None
    page, total = await repo.list_pending(acme, now=NOW, limit=2, offset=1)  # oldest first
    assert total == 3 and [r.resource for r in page] == ["invoice-1", "invoice-2"]
    assert await repo.list_pending(other, now=NOW, limit=10, offset=0) == ([], 0)
    assert (await repo.list_pending(acme, now=LATER, limit=10, offset=0))[1] == 0  # past expires_at


async def test_policies(db: Database) -> None:
    acme, other = await tenants(db)
    repo = PolicyRepo(db)
    write = PolicyWrite(
        name="p",
        description=None,
        cedar="permit(principal, action, resource);",
        is_active=True,
        rules=(),
        cedar_ids=("p0",),
    )
    stored, _ = await repo.create(acme, write, "key:x")
    assert await repo.get(acme, stored.id) == stored
    assert await repo.get(other, stored.id) is None
    items, total = await repo.list_live(acme, active_only=False, limit=10, offset=0)
    assert total == 1 and [p.id for p in items] == [stored.id]
    assert await repo.list_live(other, active_only=False, limit=10, offset=0) == ([], 0)
    assert await repo.get_version(acme, stored.id, 1) is not None
    assert await repo.get_version(other, stored.id, 1) is None
    assert await repo.versions(other, stored.id, limit=10, offset=0) is None


def pending(n: int, *, agent_id: str = "a1", dedup_key: str | None = None) -> PendingEntry:
    return PendingEntry(
        id=str(uuid.uuid4()),
        kind="action",
        agent_id=agent_id,
        actor="key:x",
        action="read" if n % 2 else "write",
        resource=f"doc-{n}",
        input=f'{{"n":{n}}}',
        output=None,
        reasoning=None,
        risk_score=0.1,
        is_approved=True,
        decision=None,
        dedup_key=dedup_key,
    )


async def append(db: Database, tenant_id: str, entries: list[PendingEntry]) -> BatchResult:
    def run(conn: Connection) -> BatchResult:
        chain = open_chain(conn, tenant_id, SECRET)
        return append_batch(conn, tenant_id, chain.key, chain.head, entries)

    return await db.write(run)


async def test_audit_trail(db: Database) -> None:
    acme, other = await tenants(db)
    repo = AuditRepo(db)
    first = await append(db, acme, [pending(n, agent_id="a2" if n == 4 else "a1") for n in range(3)])
    second = await append(db, acme, [pending(3, dedup_key="d-1"), pending(4, agent_id="a2")])
    assert [e.sequence for e in first.entries + second.entries] == [1, 2, 3, 4, 5]  # one contiguous chain
    again = await append(db, acme, [pending(9, dedup_key="d-1")])  # a redelivery is not stored twice
    assert again.entries[0].duplicate and again.entries[0].id == second.entries[0].id
    await append(db, other, [pending(0)])

    entry = first.entries[0]
    assert (await repo.get(acme, entry.id)) == dataclasses.replace(entry, duplicate=False)
    assert await repo.get(other, entry.id) is None  # another tenant's entry is not there
    page, total = await repo.list_entries(acme, limit=2, offset=1)  # newest first
    assert total == 5 and [e.sequence for e in page] == [4, 3]
    by_agent, total = await repo.list_entries(acme, agent_id="a2", limit=10, offset=0)
    assert total == 1 and by_agent[0].resource == "doc-4"
    assert [e.sequence for e in await repo.entries_after(acme, 3)] == [4, 5]
    assert await repo.count(acme) == 5 and await repo.count(other) == 1
    report = await repo.verify(acme, SECRET)
    assert report.intact and report.checked == 5


async def test_discovery_jobs_and_candidates(db: Database) -> None:
    acme, other = await tenants(db)
    repo = DiscoveryRepo(db)
    job = await repo.create_job(acme, "cluster", {"threshold": 0.5}, owner="process-a")
    assert job.status == "queued" and await repo.get_job(other, job.id) is None
    assert await repo.update_job(acme, job.id, status="running")
    assert not await repo.update_job(other, job.id, status="failed", error="not mine")  # nothing of acme's
    assert (await repo.get_job(acme, job.id)).status == "running"  # type: ignore[union-attr]
    assert await repo.update_job(acme, job.id, status="succeeded", result={"candidates": 0})
    done = await repo.get_job(acme, job.id)
    assert done is not None and done.status == "succeeded" and done.result == {"candidates": 0}
    assert not await repo.update_job(acme, job.id, status="failed", error="late")  # a final state stays

    results = await repo.ingest(acme, [prepare(event) for event in UNKNOWN_EVENTS])
    created = [r for r in results if r.outcome == "candidate_created"]
    assert created and all(r.candidate_id for r in created)
    candidates, total = await repo.list_page(acme, status=None, limit=10, offset=0)
    assert total == len(created) and {c.id for c in candidates} == {r.candidate_id for r in created}
    assert await repo.list_page(other, status=None, limit=10, offset=0) == ([], 0)
    assert await repo.get(other, created[0].candidate_id or "") is None
    assert await repo.dismiss(other, created[0].candidate_id or "") is None
    assert (await repo.get(acme, created[0].candidate_id or "")) is not None
