"""SIEM forwarding storage: the outbox of recorded events, each tenant's cursor in its audit chain, and the
forwarder's shared state and counters (one row, `siem_state`, so every process reports the same figures).

Audit entries are not copied: the forwarder reads each tenant's chain after its cursor. The outbox holds the
other events (approvals, anomalies, sign-in failures, identity changes) and is bounded: `enqueue` drops the
oldest queued events beyond `max_depth` and counts them in `dropped`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from agentgov.siem.events import SiemEvent
from agentgov.storage.audit import AuditEntry
from agentgov.storage.database import Connection, Database
from agentgov.storage.leases import fence
from agentgov.timeutil import now_iso


@dataclasses.dataclass(frozen=True)
class Lag:
    """A tenant whose chain has entries the SIEM has not accepted yet."""

    tenant_id: str
    cursor: int
    head: int


@dataclasses.dataclass(frozen=True)
class ForwarderState:
    started_at: str | None
    outbox_depth: int
    audit_backlog: int
    sent: int
    failed: int
    dropped: int
    last_success_at: str | None
    last_error: str | None
    last_error_at: str | None


def _in(ids: Sequence[str]) -> tuple[str, dict[str, Any]]:
    names = {f"id{i}": value for i, value in enumerate(ids)}
    return ", ".join(f":{name}" for name in names), names


class SiemRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def enqueue(self, events: Sequence[SiemEvent], max_depth: int) -> int:
        """Store `events` in the outbox in one transaction; return how many of the oldest queued events were
        dropped to keep at most `max_depth`. An event id already queued is not stored twice."""

        if not events:
            return 0

        def run(conn: Connection) -> int:
            at = now_iso()
            fresh = {e.event_id: e for e in events}
            present, params = _in(list(fresh))
            for row in conn.fetchall(f"SELECT id FROM siem_outbox WHERE id IN ({present})", params):
                fresh.pop(row["id"], None)
            if not fresh:
                return 0
            conn.insert_rows(
                "siem_outbox",
                [  # `enqueued_at` orders the outbox: the time, then the position in the batch
                    {"id": e.event_id, "tenant_id": e.tenant_id, "enqueued_at": f"{at}#{i:06d}", "event": e.to_json()}
                    for i, e in enumerate(fresh.values())
                ],
            )
            conn.execute("UPDATE siem_state SET depth = depth + :n WHERE id = 1", {"n": len(fresh)})
            depth = int(conn.scalar("SELECT depth FROM siem_state WHERE id = 1"))
            if depth <= max_depth:
                return 0
            oldest = [
                r["id"]
                for r in conn.fetchall(
                    "SELECT id FROM siem_outbox ORDER BY enqueued_at, id LIMIT :n", {"n": depth - max_depth}
                )
            ]
            dropped = _delete(conn, oldest)
            conn.execute(
                "UPDATE siem_state SET depth = depth - :n, dropped = dropped + :n WHERE id = 1", {"n": dropped}
            )
            return dropped

        return await self.db.write(run)

    async def begin(self) -> None:
        """On the first start of forwarding, set every existing tenant's cursor at its chain head: the SIEM
        receives what happens from then on (a tenant created later starts at its first entry)."""

        def run(conn: Connection) -> None:
            if conn.scalar("SELECT started_at FROM siem_state WHERE id = 1") is not None:
                return
            conn.execute(
                "INSERT INTO siem_cursors (tenant_id, last_sequence) SELECT tenant_id, last_sequence FROM audit_chains"
                " WHERE tenant_id NOT IN (SELECT tenant_id FROM siem_cursors)"
            )
            conn.execute("UPDATE siem_state SET started_at = :at WHERE id = 1", {"at": now_iso()})

        await self.db.write(run)

    async def queued(self, limit: int) -> list[SiemEvent]:
        """The oldest `limit` outbox events, oldest first."""
        rows = await self.db.read(
            lambda c: c.fetchall("SELECT event FROM siem_outbox ORDER BY enqueued_at, id LIMIT :n", {"n": limit})
        )
        return [SiemEvent.from_json(r["event"]) for r in rows]

    async def lagging(self) -> list[Lag]:
        """Tenants whose chain head is past their cursor (a tenant without a cursor starts at 0)."""
        rows = await self.db.read(
            lambda c: c.fetchall(
                "SELECT a.tenant_id, a.last_sequence AS head, COALESCE(s.last_sequence, 0) AS cursor"
                " FROM audit_chains a LEFT JOIN siem_cursors s ON s.tenant_id = a.tenant_id"
                " WHERE a.last_sequence > COALESCE(s.last_sequence, 0) ORDER BY a.tenant_id"
            )
        )
        return [Lag(r["tenant_id"], int(r["cursor"]), int(r["head"])) for r in rows]

    async def entries_after(self, tenant_id: str, sequence: int, limit: int) -> list[AuditEntry]:
        rows = await self.db.read(
            lambda c: c.fetchall(
                "SELECT * FROM audit_entries WHERE tenant_id = :t AND sequence > :s ORDER BY sequence LIMIT :n",
                {"t": tenant_id, "s": sequence, "n": limit},
            )
        )
        return [AuditEntry.from_row(r) for r in rows]

    async def acknowledge(
        self, outbox_ids: Sequence[str], cursors: Mapping[str, int], sent: int, *, lease: tuple[str, int]
    ) -> None:
        """The destination accepted a batch: remove its outbox events, advance the cursors (never backwards),
        count `sent` and the time, fenced by `lease` (name, token). Raises `LeaseLost` (nothing recorded: the
        new owner sends the batch again)."""

        def run(conn: Connection) -> None:
            fence(conn, *lease)
            removed = _delete(conn, list(outbox_ids))
            for tenant_id, sequence in cursors.items():
                conn.execute(
                    "INSERT INTO siem_cursors (tenant_id, last_sequence) VALUES (:t, :s)"
                    " ON CONFLICT (tenant_id) DO UPDATE SET last_sequence = excluded.last_sequence"
                    " WHERE siem_cursors.last_sequence < excluded.last_sequence",
                    {"t": tenant_id, "s": sequence},
                )
            conn.execute(
                "UPDATE siem_state SET depth = depth - :removed, sent = sent + :sent, last_success_at = :at"
                " WHERE id = 1",
                {"removed": removed, "sent": sent, "at": now_iso()},
            )

        await self.db.write(run)

    async def record_failure(self, error: str, events: int) -> None:
        await self.db.write(
            lambda conn: conn.execute(
                "UPDATE siem_state SET failed = failed + :n, last_error = :e, last_error_at = :at WHERE id = 1",
                {"n": events, "e": error[:1000], "at": now_iso()},
            )
        )

    async def count_dropped(self, events: int) -> None:
        await self.db.write(
            lambda conn: conn.execute("UPDATE siem_state SET dropped = dropped + :n WHERE id = 1", {"n": events})
        )

    async def state(self) -> ForwarderState:
        def run(conn: Connection) -> ForwarderState:
            row = conn.fetchone("SELECT * FROM siem_state WHERE id = 1")
            assert row is not None  # inserted by the migration
            backlog = conn.scalar(
                "SELECT COALESCE(SUM(a.last_sequence - COALESCE(s.last_sequence, 0)), 0)"
                " FROM audit_chains a LEFT JOIN siem_cursors s ON s.tenant_id = a.tenant_id"
            )
            return ForwarderState(
                started_at=row["started_at"],
                outbox_depth=int(row["depth"]),
                audit_backlog=int(backlog or 0) if row["started_at"] else 0,
                sent=int(row["sent"]),
                failed=int(row["failed"]),
                dropped=int(row["dropped"]),
                last_success_at=row["last_success_at"],
                last_error=row["last_error"],
                last_error_at=row["last_error_at"],
            )

        return await self.db.read(run)


def _delete(conn: Connection, ids: list[str]) -> int:
    removed = 0
    for start in range(0, len(ids), 500):
        marks, params = _in(ids[start : start + 500])
        removed += conn.execute(f"DELETE FROM siem_outbox WHERE id IN ({marks})", params)
    return removed
