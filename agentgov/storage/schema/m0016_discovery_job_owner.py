"""Discovery jobs record the process running them and its heartbeat, so that a job whose process died is
failed rather than left `queued` or `running`."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    16,
    "discovery job owner and heartbeat",
    (
        "ALTER TABLE discovery_jobs ADD COLUMN owner TEXT",
        "ALTER TABLE discovery_jobs ADD COLUMN heartbeat_at TEXT",
    ),
)
