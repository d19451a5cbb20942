"""SIEM forwarding: the request id of each audit entry, the outbox of events that are not audit entries, each
tenant's forwarding cursor in its audit chain, and the forwarder's shared state (one row)."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    13,
    "siem forwarding",
    (
        "ALTER TABLE audit_entries ADD COLUMN request_id TEXT",
        """CREATE TABLE siem_outbox (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            enqueued_at TEXT NOT NULL,
            event TEXT NOT NULL
        )""",
        "CREATE INDEX siem_outbox_order ON siem_outbox (enqueued_at, id)",
        # The last sequence of each tenant's chain the SIEM has accepted (entries are read from the trail,
        # not copied into the outbox).
        """CREATE TABLE siem_cursors (
            tenant_id TEXT PRIMARY KEY,
            last_sequence {bigint} NOT NULL
        )""",
        """CREATE TABLE siem_state (
            id INTEGER PRIMARY KEY,
            started_at TEXT,
            depth {bigint} NOT NULL,
            sent {bigint} NOT NULL,
            failed {bigint} NOT NULL,
            dropped {bigint} NOT NULL,
            last_success_at TEXT,
            last_error TEXT,
            last_error_at TEXT
        )""",
        "INSERT INTO siem_state (id, depth, sent, failed, dropped) VALUES (1, 0, 0, 0, 0)",
    ),
)
