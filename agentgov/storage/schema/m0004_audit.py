"""The tamper-evident audit trail: per-tenant chain state (key salt and head) and the entries."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    4,
    "audit trail",
    (
        # One row per tenant: the random salt its chain key derives from (with AUDIT_SECRET, which is not
        # stored), a check value of that key, and the chain head (last sequence and signature) with its MAC.
        """CREATE TABLE audit_chains (
            tenant_id TEXT PRIMARY KEY,
            key_salt TEXT NOT NULL,
            key_check TEXT NOT NULL,
            last_sequence {bigint} NOT NULL,
            last_signature TEXT NOT NULL,
            head_mac TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        """CREATE TABLE audit_entries (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            sequence {bigint} NOT NULL,
            kind TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            actor TEXT NOT NULL,
            action TEXT NOT NULL,
            resource TEXT NOT NULL,
            input TEXT,
            output TEXT,
            reasoning TEXT,
            risk_score {real},
            is_approved INTEGER,
            decision TEXT,
            dedup_key TEXT,
            created_at TEXT NOT NULL,
            prev_signature TEXT NOT NULL,
            signature TEXT NOT NULL,
            UNIQUE (tenant_id, sequence),
            UNIQUE (tenant_id, dedup_key)
        )""",
        "CREATE INDEX audit_entries_agent ON audit_entries (tenant_id, agent_id, sequence)",
        "CREATE INDEX audit_entries_action ON audit_entries (tenant_id, action, sequence)",
        "CREATE INDEX audit_entries_signature ON audit_entries (tenant_id, signature)",
    ),
)
