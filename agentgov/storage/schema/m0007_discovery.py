"""Shadow-agent discovery: candidates, the fingerprints that map to them, sample events and jobs."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    7,
    "discovery candidates, fingerprints, samples and jobs",
    (
        """CREATE TABLE discovery_candidates (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            status TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            suggested_name TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '{}',
            event_count {bigint} NOT NULL DEFAULT 0,
            first_seen_at TEXT NOT NULL,
            last_seen_at TEXT NOT NULL,
            agent_id TEXT,
            merged_into TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            resolved_at TEXT
        )""",
        "CREATE INDEX discovery_candidates_tenant ON discovery_candidates (tenant_id, status, created_at, id)",
        """CREATE TABLE discovery_fingerprints (
            tenant_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            candidate_id TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, fingerprint)
        )""",
        "CREATE INDEX discovery_fingerprints_candidate ON discovery_fingerprints (tenant_id, candidate_id)",
        """CREATE TABLE discovery_samples (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            candidate_id TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            event TEXT NOT NULL,
            feature_text TEXT NOT NULL,
            observed_at TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX discovery_samples_candidate ON discovery_samples (tenant_id, candidate_id)",
        """CREATE TABLE discovery_jobs (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            kind TEXT NOT NULL,
            status TEXT NOT NULL,
            params TEXT NOT NULL DEFAULT '{}',
            result TEXT,
            error TEXT,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT
        )""",
        "CREATE INDEX discovery_jobs_tenant ON discovery_jobs (tenant_id, created_at)",
    ),
)
