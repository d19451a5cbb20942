"""Human-in-the-loop approval requests."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    6,
    "human-in-the-loop approval requests",
    (
        """CREATE TABLE hitl_requests (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            action TEXT NOT NULL,
            resource TEXT NOT NULL,
            context TEXT NOT NULL DEFAULT '{}',
            dedupe_key TEXT NOT NULL,
            policy_ids TEXT NOT NULL DEFAULT '[]',
            reason TEXT NOT NULL DEFAULT '',
            risk_score {real},
            requested_by TEXT NOT NULL,
            status TEXT NOT NULL,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            decided_at TEXT,
            decided_by TEXT,
            comment TEXT
        )""",
        "CREATE INDEX hitl_requests_tenant_status ON hitl_requests (tenant_id, status, created_at, id)",
        "CREATE INDEX hitl_requests_status_expiry ON hitl_requests (status, expires_at)",
        # At most one pending request per identical (agent, action, resource, context) in a tenant.
        """CREATE UNIQUE INDEX hitl_requests_pending_dedupe ON hitl_requests (tenant_id, dedupe_key)
            WHERE status = 'pending'""",
    ),
)
