"""Audit export jobs: a file written in the background, downloaded later."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    11,
    "export jobs",
    (
        """CREATE TABLE export_jobs (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            status TEXT NOT NULL,
            format TEXT NOT NULL,
            filters TEXT NOT NULL,
            requested_by TEXT NOT NULL,
            rows_written {bigint} NOT NULL DEFAULT 0,
            size {bigint},
            sha256 TEXT,
            error TEXT,
            owner TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT,
            expires_at TEXT
        )""",
        "CREATE INDEX export_jobs_tenant ON export_jobs (tenant_id, created_at)",
        "CREATE INDEX export_jobs_status ON export_jobs (status, heartbeat_at)",
    ),
)
