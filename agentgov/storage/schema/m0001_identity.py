"""Tenants, users and API keys."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    1,
    "tenants, users and api keys",
    (
        """CREATE TABLE tenants (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            name_key TEXT NOT NULL UNIQUE,
            settings TEXT NOT NULL DEFAULT '{}',
            created_at TEXT NOT NULL
        )""",
        """CREATE TABLE users (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            email TEXT NOT NULL,
            email_key TEXT NOT NULL,
            full_name TEXT NOT NULL DEFAULT '',
            password_hash TEXT,
            role TEXT NOT NULL,
            is_active INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            last_login_at TEXT,
            UNIQUE (tenant_id, email_key)
        )""",
        "CREATE INDEX users_email_key ON users (email_key)",
        """CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            user_id TEXT,
            kind TEXT NOT NULL,
            name TEXT NOT NULL,
            role TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            created_at TEXT NOT NULL,
            last_used_at TEXT,
            expires_at TEXT,
            revoked_at TEXT
        )""",
        "CREATE INDEX api_keys_tenant ON api_keys (tenant_id)",
        "CREATE INDEX api_keys_user ON api_keys (user_id)",
    ),
)
