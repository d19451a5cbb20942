"""Tampering with the real database rows is detected and located: by GET /audit/verify and by the
`verify-audit` command (exit 0 intact, 1 tampered), on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import trio

from agentgov.storage.database import Connection
from tests.audit.conftest import key_headers, log_entry

ROOT = Path(__file__).resolve().parents[2]
N = 6


@pytest.fixture
async def entries(client, tenant, agent) -> list[dict[str, Any]]:
    """N entries of `tenant`, oldest first."""
    return [await log_entry(client, tenant["api_key"], agent["id"], action=f"step-{i}") for i in range(1, N + 1)]


async def tamper(app, sql: str | list[str], **params: Any) -> None:
    """Run raw SQL against the service's database, as someone with database access would."""
    statements = [sql] if isinstance(sql, str) else sql

    def run(conn: Connection) -> None:
        for statement in statements:
            conn.execute(statement, params)

    await app.extensions["agentgov"].db.write(run)


async def report_of(client, tenant) -> dict[str, Any]:
    response = await client.get("/api/v1/audit/verify", headers=key_headers(tenant["api_key"]))
    assert response.status_code == 200
    return await response.get_json()


def single(report: dict[str, Any]) -> dict[str, Any]:
    assert report["intact"] is False
    assert len(report["findings"]) == 1, report["findings"]
    return report["findings"][0]


async def test_untouched_chain_is_intact(client, tenant, entries) -> None:
    report = await report_of(client, tenant)
    assert report["intact"] is True and report["checked"] == N
    assert report["head"] == {"sequence": N, "signature": entries[-1]["signature"]}


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ("action", "delete-everything"),
        ("resource", "elsewhere"),
        ("input", '{"amount":1000000}'),
        ("risk_score", 0.0),
        ("is_approved", 1),
        ("agent_id", "00000000-0000-4000-8000-000000000000"),
        ("created_at", "2020-01-01T00:00:00.000000Z"),
        ("occurred_at", "2020-01-01T00:00:00.000000Z"),  # an event time added afterwards
        ("signature", "f" * 64),
    ],
)
async def test_modified_entry(app, client, tenant, entries, column: str, value: Any) -> None:
    await tamper(
        app, f"UPDATE audit_entries SET {column} = :v WHERE tenant_id = :t AND sequence = 3", v=value, t=tenant["id"]
    )
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "modified"
    assert finding["sequence"] == 3 and finding["entry_id"] == entries[2]["id"]


async def test_deleted_entry(app, client, tenant, entries) -> None:
    await tamper(app, "DELETE FROM audit_entries WHERE tenant_id = :t AND sequence = 4", t=tenant["id"])
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "deleted"
    assert (finding["sequence"], finding["last_sequence"]) == (4, 4)


async def test_deleted_entry_with_later_entries_renumbered(app, client, tenant, entries) -> None:
    await tamper(
        app,
        [
            "DELETE FROM audit_entries WHERE tenant_id = :t AND sequence = 2",
            *[
                f"UPDATE audit_entries SET sequence = {s - 1} WHERE tenant_id = :t AND sequence = {s}"
                for s in range(3, N + 1)
            ],
        ],
        t=tenant["id"],
    )
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "deleted" and finding["sequence"] == 2 and finding["entry_id"] == entries[2]["id"]


async def test_deleted_last_entry(app, client, tenant, entries) -> None:
    await tamper(app, "DELETE FROM audit_entries WHERE tenant_id = :t AND sequence = :s", t=tenant["id"], s=N)
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "deleted" and finding["sequence"] == N


async def test_deleted_tail_and_rewound_head(app, client, tenant, entries) -> None:
    await tamper(
        app,
        [
            "DELETE FROM audit_entries WHERE tenant_id = :t AND sequence = :s",
            "UPDATE audit_chains SET last_sequence = :prev, last_signature = :sig WHERE tenant_id = :t",
        ],
        t=tenant["id"],
        s=N,
        prev=N - 1,
        sig=entries[-2]["signature"],
    )
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "head" and finding["sequence"] == N - 1


async def _insert_forged(app, tenant: dict[str, Any], template: dict[str, Any], sequence: int) -> str:
    forged_id = "00000000-0000-4000-8000-00000000f00d"
    await tamper(
        app,
        """INSERT INTO audit_entries (id, tenant_id, sequence, kind, agent_id, actor, action, resource,
               created_at, prev_signature, signature)
           VALUES (:id, :t, :s, 'action', :agent, :actor, 'approve-all', 'everything', :at, :prev, :sig)""",
        id=forged_id,
        t=tenant["id"],
        s=sequence,
        agent=template["agent_id"],
        actor=template["actor"],
        at=template["created_at"],
        prev=template["signature"],
        sig="a" * 64,
    )
    return forged_id


async def test_inserted_entry_in_the_middle(app, client, tenant, entries) -> None:
    await tamper(
        app,
        [
            f"UPDATE audit_entries SET sequence = {s + 1} WHERE tenant_id = :t AND sequence = {s}"
            for s in range(N, 3, -1)
        ],
        t=tenant["id"],
    )
    forged = await _insert_forged(app, tenant, entries[2], 4)
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "inserted" and finding["sequence"] == 4 and finding["entry_id"] == forged


async def test_inserted_entry_at_the_end(app, client, tenant, entries) -> None:
    forged = await _insert_forged(app, tenant, entries[-1], N + 1)
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "inserted" and finding["sequence"] == N + 1 and finding["entry_id"] == forged


async def test_reordered_entries(app, client, tenant, entries) -> None:
    await tamper(
        app,
        [
            "UPDATE audit_entries SET sequence = -1 WHERE tenant_id = :t AND sequence = 2",
            "UPDATE audit_entries SET sequence = 2 WHERE tenant_id = :t AND sequence = 3",
            "UPDATE audit_entries SET sequence = 3 WHERE tenant_id = :t AND sequence = -1",
        ],
        t=tenant["id"],
    )
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "reordered" and finding["sequence"] == 2 and finding["entry_id"] == entries[2]["id"]
    assert entries[1]["id"] in finding["detail"]


async def test_changed_key_salt_is_reported_as_a_key_problem(app, client, tenant, entries) -> None:
    await tamper(app, "UPDATE audit_chains SET key_salt = 'attacker' WHERE tenant_id = :t", t=tenant["id"])
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "key" and "AUDIT_SECRET" in finding["detail"]


async def test_missing_chain_record(app, client, tenant, entries) -> None:
    await tamper(app, "DELETE FROM audit_chains WHERE tenant_id = :t", t=tenant["id"])
    finding = single(await report_of(client, tenant))
    assert finding["kind"] == "head" and "missing" in finding["detail"]


async def test_tampering_in_another_tenant_does_not_affect_ours(app, client, tenant, other_tenant, entries) -> None:
    await tamper(app, "UPDATE audit_entries SET action = 'x' WHERE tenant_id = :t", t=tenant["id"])
    assert (await report_of(client, other_tenant))["intact"] is True
    assert (await report_of(client, tenant))["intact"] is False


async def _verify_command(app, tenant_id: str) -> subprocess.CompletedProcess[bytes]:
    settings = app.extensions["agentgov"].settings
    env = {
        **os.environ,
        "ENV": "development",
        "DATABASE_URL": settings.database_url,
        "JWT_SECRET": settings.jwt_secret,
        "WEBHOOK_SECRET": settings.webhook_secret,
        "ADMIN_KEY": settings.admin_key,
        "LOG_LEVEL": "ERROR",
    }
    env.pop("AUDIT_SECRET", None)
    return await trio.run_process(
        [sys.executable, str(ROOT / "run.py"), "verify-audit", "--tenant", tenant_id],
        env=env,
        cwd=ROOT,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )


async def test_verify_audit_command_exit_codes(app, client, tenant, entries) -> None:
    intact = await _verify_command(app, tenant["id"])
    assert intact.returncode == 0, intact.stderr
    assert b"intact" in intact.stdout and f"{N} entries checked".encode() in intact.stdout

    await tamper(app, "UPDATE audit_entries SET resource = 'x' WHERE tenant_id = :t AND sequence = 5", t=tenant["id"])
    tampered = await _verify_command(app, tenant["id"])
    assert tampered.returncode == 1, tampered.stderr
    out = tampered.stdout.decode()
    assert "NOT intact" in out and "[modified]" in out and "sequence 5" in out and entries[4]["id"] in out

    unknown = await _verify_command(app, "00000000-0000-4000-8000-000000000000")
    assert unknown.returncode == 2 and b"no tenant" in unknown.stderr
