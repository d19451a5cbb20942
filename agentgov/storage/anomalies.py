"""Anomaly reports (table `anomaly_reports`, m0008) and what the anomaly detector reads and writes of the
audit trail: the history it trains on, the recent actions it scores in, and the verdicts it adds to entries.

A verdict is written into `audit_entries.anomaly` after the entry was committed; it is an annotation outside
the chain (the chain covers what the agent and the service recorded, not the detector's opinion of it, which
a retrained model may revise). Reports are immutable; the detector reports an entry at most once.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from agentgov.storage.database import Connection, Database, IntegrityError, Row
from agentgov.timeutil import now_iso, parse_iso, to_iso

SEVERITIES = ("low", "medium", "high", "critical")
_EVENT_TIME = "COALESCE(occurred_at, created_at)"
_ACTION_COLUMNS = f"id, agent_id, action, resource, input, output, reasoning, {_EVENT_TIME} AS ts"


@dataclasses.dataclass(frozen=True)
class AnomalyReport:
    id: str
    tenant_id: str
    agent_id: str
    audit_log_id: str | None
    type: str
    severity: str
    score: float | None
    description: str
    reasons: list[str]
    source: str
    model_version: int | None
    reported_by: str
    occurred_at: str
    created_at: str

    @classmethod
    def from_row(cls, row: Row) -> AnomalyReport:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            agent_id=row["agent_id"],
            audit_log_id=row["audit_log_id"],
            type=row["type"],
            severity=row["severity"],
            score=None if row["score"] is None else float(row["score"]),
            description=row["description"],
            reasons=json.loads(row["reasons"]),
            source=row["source"],
            model_version=None if row["model_version"] is None else int(row["model_version"]),
            reported_by=row["reported_by"],
            occurred_at=row["occurred_at"],
            created_at=row["created_at"],
        )

    def to_public(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data.pop("tenant_id")
        return data


@dataclasses.dataclass(frozen=True)
class NewReport:
    agent_id: str
    audit_log_id: str | None
    type: str
    severity: str
    score: float | None
    description: str
    reasons: Sequence[str]
    source: str  # "detector" or "manual"
    model_version: int | None
    reported_by: str
    occurred_at: str


@dataclasses.dataclass(frozen=True)
class ReportFilter:
    agent_id: str | None = None
    severity: str | None = None
    type: str | None = None
    since: str | None = None
    until: str | None = None

    def where(self, tenant_id: str) -> tuple[str, dict[str, Any]]:
        clauses, params = ["tenant_id = :t"], {"t": tenant_id}
        for name in ("agent_id", "severity", "type"):
            value = getattr(self, name)
            if value is not None:
                clauses.append(f"{name} = :{name}")
                params[name] = value
        if self.since is not None:
            clauses.append("occurred_at >= :since")
            params["since"] = self.since
        if self.until is not None:
            clauses.append("occurred_at < :until")
            params["until"] = self.until
        return " AND ".join(clauses), params


def _insert(conn: Connection, tenant_id: str, new: NewReport) -> AnomalyReport:
    row = {
        "id": str(uuid.uuid4()),
        "tenant_id": tenant_id,
        "agent_id": new.agent_id,
        "audit_log_id": new.audit_log_id,
        "type": new.type,
        "severity": new.severity,
        "score": new.score,
        "description": new.description,
        "reasons": json.dumps(list(new.reasons)),
        "source": new.source,
        "model_version": new.model_version,
        "reported_by": new.reported_by,
        "occurred_at": new.occurred_at,
        "created_at": now_iso(),
    }
    conn.insert_rows("anomaly_reports", [row])
    return AnomalyReport.from_row(row)


class AnomalyRepo:
    """Every call is one transaction scoped to a tenant."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # ------------------------------------------------------------------------------------ the audit trail

    async def training_rows(self, tenant_id: str, *, window_days: float, limit: int) -> list[Row]:
        """The newest `limit` action entries of the `window_days` before the newest one (by event time),
        oldest first: columns id, agent_id, action, resource, input, output, reasoning (JSON texts) and ts."""

        def run(conn: Connection) -> list[Row]:
            newest = conn.scalar(
                f"SELECT MAX({_EVENT_TIME}) FROM audit_entries WHERE tenant_id = :t AND kind = 'action'",
                {"t": tenant_id},
            )
            if newest is None:
                return []
            since = to_iso(parse_iso(newest) - timedelta(days=window_days))
            rows = conn.fetchall(
                f"""SELECT {_ACTION_COLUMNS} FROM audit_entries
                    WHERE tenant_id = :t AND kind = 'action' AND {_EVENT_TIME} >= :since
                    ORDER BY {_EVENT_TIME} DESC, sequence DESC LIMIT :l""",
                {"t": tenant_id, "since": since, "l": limit},
            )
            rows.reverse()
            return rows

        return await self.db.read(run)

    async def recent_actions(self, tenant_id: str, limit: int, *, before_sequence: int | None = None) -> list[Row]:
        """The newest `limit` action entries by event time (of those before `before_sequence` in the chain),
        oldest first: to prime a scorer's context with what preceded the entries it is about to score."""
        bound = "" if before_sequence is None else " AND sequence < :before"
        rows = await self.db.read(
            lambda conn: conn.fetchall(
                f"""SELECT {_ACTION_COLUMNS} FROM audit_entries WHERE tenant_id = :t AND kind = 'action'{bound}
                    ORDER BY {_EVENT_TIME} DESC, sequence DESC LIMIT :l""",
                {"t": tenant_id, "l": limit, "before": before_sequence},
            )
        )
        rows.reverse()
        return rows

    async def count_actions(self, tenant_id: str, *, received_after: str | None = None) -> int:
        """Action entries of the tenant (received after `received_after`, if given)."""
        clause = " AND created_at > :after" if received_after is not None else ""
        return int(
            await self.db.read(
                lambda conn: conn.scalar(
                    f"SELECT COUNT(*) FROM audit_entries WHERE tenant_id = :t AND kind = 'action'{clause}",
                    {"t": tenant_id, "after": received_after},
                )
            )
        )

    async def annotate(
        self, tenant_id: str, verdicts: Sequence[tuple[str, dict[str, Any]]], reports: Sequence[NewReport]
    ) -> list[AnomalyReport]:
        """Write each (entry id, verdict) and insert `reports` in one transaction; returns the reports stored
        (an entry the detector already reported is not reported twice)."""

        def run(conn: Connection) -> list[AnomalyReport]:
            if verdicts:
                conn.executemany(
                    "UPDATE audit_entries SET anomaly = :a WHERE tenant_id = :t AND id = :id",
                    [{"a": json.dumps(v, sort_keys=True), "t": tenant_id, "id": i} for i, v in verdicts],
                )
            stored = []
            for new in reports:
                if new.audit_log_id is not None and conn.scalar(
                    """SELECT COUNT(*) FROM anomaly_reports
                       WHERE tenant_id = :t AND audit_log_id = :e AND source = 'detector'""",
                    {"t": tenant_id, "e": new.audit_log_id},
                ):
                    continue
                stored.append(_insert(conn, tenant_id, new))
            return stored

        return await self.db.write(run)

    # ------------------------------------------------------------------------------------------ reports

    async def create_report(self, tenant_id: str, new: NewReport) -> AnomalyReport:
        """Raises `IntegrityError` if the detector already reported that entry (detector reports only)."""
        return await self.db.write(lambda conn: _insert(conn, tenant_id, new))

    async def list_reports(
        self, tenant_id: str, where: ReportFilter, *, limit: int, offset: int
    ) -> tuple[list[AnomalyReport], int]:
        clause, params = where.where(tenant_id)

        def run(conn: Connection) -> tuple[list[AnomalyReport], int]:
            rows = conn.fetchall(
                f"""SELECT * FROM anomaly_reports WHERE {clause}
                    ORDER BY occurred_at DESC, id DESC LIMIT :limit OFFSET :offset""",
                {**params, "limit": limit, "offset": offset},
            )
            total = conn.scalar(f"SELECT COUNT(*) FROM anomaly_reports WHERE {clause}", params)
            return [AnomalyReport.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def stats(self, tenant_id: str, where: ReportFilter) -> dict[str, Any]:
        """Counts by type, severity, agent, source and day (UTC) of the reports matching `where`."""
        clause, params = where.where(tenant_id)

        def run(conn: Connection) -> dict[str, Any]:
            out: dict[str, Any] = {
                "total": int(conn.scalar(f"SELECT COUNT(*) FROM anomaly_reports WHERE {clause}", params))
            }
            for name, expression in (
                ("by_type", "type"),
                ("by_severity", "severity"),
                ("by_agent", "agent_id"),
                ("by_source", "source"),
                ("by_day", "SUBSTR(occurred_at, 1, 10)"),
            ):
                rows = conn.fetchall(
                    f"""SELECT {expression} AS k, COUNT(*) AS n FROM anomaly_reports WHERE {clause}
                        GROUP BY {expression} ORDER BY {expression}""",
                    params,
                )
                out[name] = {r["k"]: int(r["n"]) for r in rows}
            return out

        return await self.db.read(run)

    async def manual_reports_since(self, tenant_id: str, since: str) -> list[AnomalyReport]:
        rows = await self.db.read(
            lambda conn: conn.fetchall(
                """SELECT * FROM anomaly_reports WHERE tenant_id = :t AND source = 'manual' AND occurred_at >= :s""",
                {"t": tenant_id, "s": since},
            )
        )
        return [AnomalyReport.from_row(r) for r in rows]


__all__ = ["SEVERITIES", "AnomalyRepo", "AnomalyReport", "IntegrityError", "NewReport", "ReportFilter"]
