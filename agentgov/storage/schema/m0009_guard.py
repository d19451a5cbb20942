"""The prompt guard: each tenant's labelled feedback (false positives and missed attacks)."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    9,
    "guard feedback",
    (
        """CREATE TABLE guard_feedback (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            validation_id TEXT,
            text TEXT NOT NULL,
            sha256 TEXT NOT NULL,
            label TEXT NOT NULL,
            category TEXT NOT NULL,
            created_by TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX guard_feedback_tenant ON guard_feedback (tenant_id, created_at)",
    ),
)
