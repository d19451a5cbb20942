"""Registered agents, their stored embeddings, and a per-tenant change counter of the registry."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    3,
    "agents, agent embeddings and registry generations",
    (
        """CREATE TABLE agents (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL,
            type TEXT NOT NULL,
            description TEXT NOT NULL DEFAULT '',
            capabilities TEXT NOT NULL DEFAULT '[]',
            owner TEXT,
            metadata TEXT NOT NULL DEFAULT '{}',
            status TEXT NOT NULL,
            risk_score {real},
            predicted_type TEXT,
            predicted_type_confidence {real},
            text_hash TEXT NOT NULL,
            last_heartbeat_at TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX agents_tenant_created ON agents (tenant_id, created_at, id)",
        "CREATE INDEX agents_tenant_name ON agents (tenant_id, name_key)",
        """CREATE TABLE agent_embeddings (
            tenant_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            model TEXT NOT NULL,
            dimension INTEGER NOT NULL,
            content_hash TEXT NOT NULL,
            text_hash TEXT NOT NULL,
            vector {blob} NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, agent_id)
        )""",
        """CREATE TABLE agent_registry_state (
            tenant_id TEXT PRIMARY KEY,
            generation {bigint} NOT NULL
        )""",
    ),
)
