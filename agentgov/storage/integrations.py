"""A tenant's use of one framework integration: agents seen through it (`integration_agents`, m0014) and its
hourly check and action counts (`activity_counts` metrics `integration.<name>.checks|actions`)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

from agentgov.storage.database import Connection, Database
from agentgov.timeutil import now, to_iso


@dataclasses.dataclass(frozen=True)
class IntegrationUsage:
    agents: int
    agents_last_24h: int
    checks_last_24h: int
    actions_last_24h: int
    last_seen_at: str | None


class IntegrationRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def usage(self, tenant_id: str, integration: str) -> IntegrationUsage:
        """Figures of the last 24 hours: the current UTC hour and the 23 before it (as `/stats` counts)."""
        moment = now()
        since = to_iso(moment - timedelta(hours=24))
        since_hour = to_iso(moment - timedelta(hours=23))[:13]
        checks, actions = f"integration.{integration}.checks", f"integration.{integration}.actions"
        params = {"t": tenant_id, "i": integration, "since": since, "hour": since_hour, "c": checks, "a": actions}

        def run(conn: Connection) -> IntegrationUsage:
            agents = conn.fetchone(
                "SELECT COUNT(*) AS total, SUM(CASE WHEN last_seen >= :since THEN 1 ELSE 0 END) AS recent,"
                " MAX(last_seen) AS last_seen FROM integration_agents WHERE tenant_id = :t AND integration = :i",
                params,
            )
            counts = {
                row["metric"]: int(row["n"])
                for row in conn.fetchall(
                    "SELECT metric, SUM(n) AS n FROM activity_counts WHERE tenant_id = :t AND hour >= :hour"
                    " AND metric IN (:checks, :actions) GROUP BY metric",
                    {
                        **params,
                        "checks": f"integration.{integration}.checks",
                        "actions": f"integration.{integration}.actions",
                    },
                )
            }
            assert agents is not None
            return IntegrationUsage(
                agents=int(agents["total"] or 0),
                agents_last_24h=int(agents["recent"] or 0),
                checks_last_24h=counts.get(checks, 0),
                actions_last_24h=counts.get(actions, 0),
                last_seen_at=agents["last_seen"],
            )

        return await self.db.read(run)
