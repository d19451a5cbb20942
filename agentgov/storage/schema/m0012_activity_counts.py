"""Hourly activity counters per tenant (audit entries, policy decisions by outcome), kept by the audit
writer in the same transaction as the entries, so dashboard figures never scan the trail."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    12,
    "activity counters",
    (
        """CREATE TABLE activity_counts (
            tenant_id TEXT NOT NULL,
            hour TEXT NOT NULL,
            metric TEXT NOT NULL,
            n {bigint} NOT NULL,
            PRIMARY KEY (tenant_id, hour, metric)
        )""",
        # Entries written before the counters existed (their decisions' outcomes are not back-filled).
        """INSERT INTO activity_counts (tenant_id, hour, metric, n)
            SELECT tenant_id, substr(created_at, 1, 13), 'entries', COUNT(*) FROM audit_entries
            GROUP BY tenant_id, substr(created_at, 1, 13)""",
    ),
)
