"""An audit entry the database cannot store is refused alone: the rest of its batch commits in chain order,
the refused one is answered (ask) or logged and counted (tell), and the actor never crashes for it.

Entries are sent straight to the tenant's audit actor (below the HTTP edge), on SQLite and PostgreSQL.
"""

from __future__ import annotations

import dataclasses
import logging

import pytest
import trio

from agentgov.actors.audit import AppendEntry, AppendPrepared, EntryRejected, audit, rejected_entries
from agentgov.services import Services
from agentgov.storage.audit import AuditRepo, PendingEntry
from agentgov.storage.text import unstorable_reason
from tests.audit.test_audit_actor import AGENT, new_tenant, service, verify

POISON = {
    "lone surrogate in action": {"action": "read\ud800"},
    "NUL in resource": {"resource": "db://orders\x00"},
    "lone surrogate in the JSON input": {"input": '{"context":{"k":"\ud800"}}'},
    "NaN risk (fails while signing, inside the transaction)": {"risk_score": float("nan")},
}


def prepared(**fields: object) -> AppendPrepared:
    values: dict[str, object] = {
        "id": f"entry-{fields.pop('n', 0)}",
        "kind": "policy_check",
        "agent_id": AGENT,
        "actor": "key:test",
        "action": "read",
        "resource": "db://orders",
        "input": None,
        "output": None,
        "reasoning": None,
        "risk_score": 0.1,
        "is_approved": True,
        "decision": '{"allowed":true}',
        "dedup_key": None,
    }
    values.update(fields)
    return AppendPrepared(PendingEntry(**values))  # type: ignore[arg-type]


def cell_stats(svc: Services, tenant_id: str) -> dict:
    return next(s for s in svc.actors.stats() if s["name"] == f"audit:{tenant_id}")


async def flush(svc: Services, tenant_id: str) -> None:
    await audit(svc, tenant_id).ask(AppendEntry(AGENT, "test.flush", "-"))


def test_unstorable_reason() -> None:
    assert unstorable_reason("plain") is None and unstorable_reason("ünïcødé 😀") is None
    assert "NUL" in (unstorable_reason("a\x00b") or "")
    assert "surrogate" in (unstorable_reason("a\udfffb") or "")


async def test_told_poisoned_entries_in_one_batch_do_not_take_the_others_down(database_url: str, caplog) -> None:
    caplog.set_level(logging.ERROR, logger="agentgov.audit")
    async with service(database_url) as svc:
        tenant_id = await new_tenant(svc)
        ref = audit(svc, tenant_id)
        await flush(svc, tenant_id)  # the actor is started and waiting
        before = rejected_entries.total
        # queued without a checkpoint in between: the actor takes them as one batch
        told = []
        for n in range(40):
            poison = list(POISON.values())[n % len(POISON)] if n % 5 == 2 else {}
            ref.tell(prepared(n=n, **poison))
            told.append((f"entry-{n}", bool(poison)))
        await flush(svc, tenant_id)

        entries, total = await AuditRepo(svc.db).list_entries(tenant_id, limit=100)
        stored = {e.id for e in entries}
        assert {i for i, bad in told if not bad} <= stored
        assert not {i for i, bad in told if bad} & stored
        assert total == 2 + 32  # two flush probes, 32 valid entries
        assert [e.sequence for e in sorted(entries, key=lambda e: e.sequence)] == list(range(1, total + 1))
        stored_order = [e.id for e in sorted(entries, key=lambda e: e.sequence) if e.id.startswith("entry-")]
        assert stored_order == [i for i, bad in told if not bad]  # chain order is mailbox order
        assert (await verify(svc, tenant_id))["intact"] is True
        stats = cell_stats(svc, tenant_id)
        assert stats["rejected"] == 8 and stats["restarts"] == 0 and stats["state"] == "running"
        assert rejected_entries.total == before + 8
        logged = [r.fields for r in caplog.records if r.getMessage().startswith("audit entry refused")]
        assert sorted(f["entry_id"] for f in logged) == sorted(i for i, bad in told if bad)
        assert {f["tenant_id"] for f in logged} == {tenant_id}


@pytest.mark.parametrize("poison", list(POISON.values()), ids=list(POISON))
async def test_asked_poisoned_entry_is_answered_with_an_error_and_the_others_commit(
    database_url: str, poison: dict
) -> None:
    async with service(database_url) as svc:
        tenant_id = await new_tenant(svc)
        ref = audit(svc, tenant_id)
        results: dict[int, object] = {}

        async def ask(n: int, message: AppendPrepared) -> None:
            try:
                results[n] = await ref.ask(message)
            except EntryRejected as exc:
                results[n] = exc

        async with trio.open_nursery() as nursery:
            for n in range(12):
                nursery.start_soon(ask, n, prepared(n=n, **(poison if n == 5 else {})))
        error = results.pop(5)
        assert isinstance(error, EntryRejected) and error.entry_id == "entry-5"
        assert "cannot be stored" in str(error)
        name = next(iter(poison))
        if name != "risk_score":
            assert name in str(error)  # names the field
        assert all(not isinstance(r, Exception) for r in results.values())
        assert await AuditRepo(svc.db).count(tenant_id) == 11
        assert (await verify(svc, tenant_id))["intact"] is True


async def test_a_hundred_poisoned_tells_never_exhaust_the_restart_limit(database_url: str) -> None:
    async with service(database_url) as svc:
        tenant_id = await new_tenant(svc)
        ref = audit(svc, tenant_id)
        for n in range(100):
            ref.tell(prepared(n=n, action="\ud800" if n % 2 else "read\x00"))
            await flush(svc, tenant_id)  # each poisoned tell is handled in a batch of its own
        stats = cell_stats(svc, tenant_id)
        assert stats["rejected"] == 100 and stats["restarts"] == 0 and stats["state"] == "running"
        entry = await ref.ask(prepared(n=1000))
        assert entry.sequence == 101  # 100 flush probes, then this one
        assert (await verify(svc, tenant_id))["intact"] is True


async def test_invalid_told_append_entry_is_refused_not_a_crash(sqlite_url: str) -> None:
    async with service(sqlite_url) as svc:
        tenant_id = await new_tenant(svc)
        ref = audit(svc, tenant_id)
        for _ in range(10):
            ref.tell(AppendEntry(AGENT, "read", "r", risk_score=2.0))
            await flush(svc, tenant_id)
        stats = cell_stats(svc, tenant_id)
        assert stats["rejected"] == 10 and stats["restarts"] == 0
        with pytest.raises(ValueError, match="risk_score"):
            await ref.ask(AppendEntry(AGENT, "read", "r", risk_score=2.0))


async def test_database_failure_still_fails_the_whole_batch(sqlite_url: str) -> None:
    async with service(sqlite_url) as svc:
        tenant_id = await new_tenant(svc)
        ref = audit(svc, tenant_id)
        await flush(svc, tenant_id)
        await svc.db.close()
        from agentgov.storage.database import DatabaseError

        with pytest.raises(DatabaseError):
            await ref.ask(prepared(n=1))
        assert cell_stats(svc, tenant_id)["rejected"] == 0


def test_prepared_message_is_frozen() -> None:
    message = prepared()
    with pytest.raises(dataclasses.FrozenInstanceError):
        message.entry = message.entry  # type: ignore[misc]


async def test_unstorable_log_entries_are_refused_alone_over_http(client, tenant, agent) -> None:
    """Concurrent `POST /audit/log`: the ones holding NUL or a lone surrogate get a 422 naming the field (at
    the edge or from the audit actor), every valid one is stored, and the chain verifies."""
    from tests.audit.conftest import LOG, key_headers

    api_key = tenant["api_key"]
    statuses: dict[int, tuple[int, dict]] = {}

    async def post(n: int) -> None:
        resource = ('"db://orders\\u0000"', '"db://\\ud800"')[n % 2] if n % 5 == 0 else f'"db://orders/{n}"'
        raw = f'{{"agent_id": "{agent["id"]}", "action": "read", "resource": {resource}}}'
        headers = {**key_headers(api_key), "Content-Type": "application/json"}
        response = await client.post(LOG, data=raw, headers=headers)
        statuses[n] = (response.status_code, await response.get_json())

    async with trio.open_nursery() as nursery:
        for n in range(50):
            nursery.start_soon(post, n)
    for n, (status, body) in statuses.items():
        if n % 5 == 0:
            assert status == 422 and "resource" in body["detail"], body
        else:
            assert status == 201, body
    listed = await client.get("/api/v1/audit?limit=100", headers=key_headers(api_key))
    assert (await listed.get_json())["total"] == 40
    verify = await client.get("/api/v1/audit/verify", headers=key_headers(api_key))
    assert (await verify.get_json())["intact"] is True
