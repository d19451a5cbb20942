"""The figures of `GET /stats`, each read from an index or a counter (never a scan of the audit trail):
agents by status and type, the audit trail's length (its chain head) and the last 24 hours' entries and
decisions (`activity_counts`), anomaly reports, pending approvals and discovery candidates by status.
One read transaction, so the figures are of one moment."""

from __future__ import annotations

import collections
from datetime import timedelta
from typing import Any

from agentgov.ml.guard.rules import CATEGORIES
from agentgov.storage.activity import DECISION_METRICS, ENTRIES
from agentgov.storage.database import Connection, Database
from agentgov.timeutil import now, to_iso


class DashboardRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def figures(self, tenant_id: str) -> dict[str, Any]:
        moment = now()
        day_ago = to_iso(moment - timedelta(hours=24))
        first_hour = to_iso(moment - timedelta(hours=23))[:13]

        def run(conn: Connection) -> dict[str, Any]:
            params = {"t": tenant_id, "day_ago": day_ago, "first_hour": first_hour}
            by_status: collections.Counter[str] = collections.Counter()
            by_type: collections.Counter[str] = collections.Counter()
            for row in conn.fetchall(
                "SELECT status, type, COUNT(*) AS n FROM agents WHERE tenant_id = :t GROUP BY status, type", params
            ):
                by_status[row["status"]] += int(row["n"])
                by_type[row["type"]] += int(row["n"])
            activity = {
                row["metric"]: int(row["n"])
                for row in conn.fetchall(
                    "SELECT metric, SUM(n) AS n FROM activity_counts WHERE tenant_id = :t AND hour >= :first_hour"
                    " GROUP BY metric",
                    params,
                )
            }
            total = conn.scalar("SELECT last_sequence FROM audit_chains WHERE tenant_id = :t", params)
            candidates = {
                row["status"]: int(row["n"])
                for row in conn.fetchall(
                    "SELECT status, COUNT(*) AS n FROM discovery_candidates WHERE tenant_id = :t GROUP BY status",
                    params,
                )
            }
            return {
                "agents": {
                    "total": sum(by_status.values()),
                    "by_status": dict(sorted(by_status.items())),
                    "by_type": dict(sorted(by_type.items())),
                },
                "decisions_24h": {
                    "allowed": activity.get(DECISION_METRICS[0], 0),
                    "denied": activity.get(DECISION_METRICS[1], 0),
                    "approval_required": activity.get(DECISION_METRICS[2], 0),
                    "total": sum(activity.get(m, 0) for m in DECISION_METRICS),
                },
                "audit": {"total": int(total or 0), "last_24h": activity.get(ENTRIES, 0)},
                "anomalies": {
                    "last_24h": int(
                        conn.scalar(
                            "SELECT COUNT(*) FROM anomaly_reports WHERE tenant_id = :t AND created_at >= :day_ago",
                            params,
                        )
                    ),
                    "total": int(conn.scalar("SELECT COUNT(*) FROM anomaly_reports WHERE tenant_id = :t", params)),
                },
                "approvals": {
                    "pending": int(
                        conn.scalar(
                            "SELECT COUNT(*) FROM hitl_requests WHERE tenant_id = :t AND status = 'pending'", params
                        )
                    )
                },
                "discovery": {"candidates": sum(candidates.values()), "by_status": dict(sorted(candidates.items()))},
                "guard": {
                    "validations": activity.get("guard_validations", 0),
                    "blocks": sum(activity.get(f"guard_blocks_{c}", 0) for c in CATEGORIES),
                    "blocks_by_category": {c: activity.get(f"guard_blocks_{c}", 0) for c in CATEGORIES},
                },
            }

        return await self.db.read(run)
