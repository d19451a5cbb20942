"""Which agents each tenant runs through each framework integration, and when each was last seen (the
integrations' check and action counts are hourly `activity_counts` metrics)."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    14,
    "integration usage",
    (
        """CREATE TABLE integration_agents (
            tenant_id TEXT NOT NULL,
            integration TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            PRIMARY KEY (tenant_id, integration, agent_id)
        )""",
    ),
)
