"""Cedar policy documents, their version history, @id claims and the per-tenant policy-set generation.

* ``policies`` -- the current state of each document; a delete is soft (``deleted_at`` set, inactive).
* ``policy_versions`` -- one row per create, update and delete: the full document as of that version.
* ``policy_ids`` -- the Cedar ``@id`` values of every *active* document; the unique key makes duplicate ids
  across active documents impossible, also between processes.
* ``policy_generations`` -- a counter bumped in the same transaction as every policy or default-decision
  write, so policy actors in other processes notice the change with one cheap read.
"""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    5,
    "cedar policies, versions, @id claims and policy-set generations",
    (
        """CREATE TABLE policies (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT,
            cedar TEXT NOT NULL,
            is_active INTEGER NOT NULL,
            version INTEGER NOT NULL,
            rules TEXT NOT NULL,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            updated_by TEXT NOT NULL,
            deleted_at TEXT
        )""",
        "CREATE INDEX policies_tenant ON policies (tenant_id, created_at)",
        """CREATE TABLE policy_versions (
            policy_id TEXT NOT NULL,
            version INTEGER NOT NULL,
            tenant_id TEXT NOT NULL,
            change TEXT NOT NULL,
            name TEXT NOT NULL,
            description TEXT,
            cedar TEXT NOT NULL,
            is_active INTEGER NOT NULL,
            rules TEXT NOT NULL,
            changed_at TEXT NOT NULL,
            changed_by TEXT NOT NULL,
            PRIMARY KEY (policy_id, version)
        )""",
        "CREATE INDEX policy_versions_tenant ON policy_versions (tenant_id, policy_id)",
        """CREATE TABLE policy_ids (
            tenant_id TEXT NOT NULL,
            cedar_id TEXT NOT NULL,
            policy_id TEXT NOT NULL,
            PRIMARY KEY (tenant_id, cedar_id)
        )""",
        "CREATE INDEX policy_ids_policy ON policy_ids (policy_id)",
        """CREATE TABLE policy_generations (
            tenant_id TEXT PRIMARY KEY,
            generation {bigint} NOT NULL
        )""",
    ),
)
