"""Leases: which process owns a platform-wide duty (approval expiry, SIEM delivery), until when, and a fencing
token that grows with every change of owner."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    15,
    "leases",
    (
        """CREATE TABLE leases (
            name TEXT PRIMARY KEY,
            owner TEXT NOT NULL,
            token {bigint} NOT NULL,
            expires_at TEXT NOT NULL
        )""",
    ),
)
