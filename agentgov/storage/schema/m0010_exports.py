"""Audit exports: the signed manifest of each finished export."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    10,
    "export manifests",
    (
        """CREATE TABLE export_manifests (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            manifest TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX export_manifests_tenant ON export_manifests (tenant_id, created_at)",
    ),
)
