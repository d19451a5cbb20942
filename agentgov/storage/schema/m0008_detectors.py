"""Detectors (anomaly, guard): training tasks, immutable model versions, the active version; event time and
anomaly annotations on audit entries; anomaly reports."""

from agentgov.storage.migrations import Migration

MIGRATION = Migration(
    8,
    "detectors, anomaly reports, audit event time",
    (
        # The time the agent says the action happened (ISO 8601, UTC); NULL means the receipt time.
        "ALTER TABLE audit_entries ADD COLUMN occurred_at TEXT",
        # The detector's verdict on the entry (JSON), written after the entry is committed; not chained.
        "ALTER TABLE audit_entries ADD COLUMN anomaly TEXT",
        "CREATE INDEX audit_entries_agent_time ON audit_entries (tenant_id, agent_id, occurred_at)",
        """CREATE TABLE detector_tasks (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            detector TEXT NOT NULL,
            status TEXT NOT NULL,
            phase TEXT NOT NULL DEFAULT 'queued',
            progress {real} NOT NULL DEFAULT 0,
            params TEXT NOT NULL DEFAULT '{}',
            requested_by TEXT NOT NULL,
            trigger TEXT NOT NULL,
            version INTEGER,
            error TEXT,
            owner TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL,
            created_at TEXT NOT NULL,
            started_at TEXT,
            finished_at TEXT
        )""",
        "CREATE INDEX detector_tasks_tenant ON detector_tasks (tenant_id, detector, created_at)",
        # One queued or running task per tenant and detector, whichever process asked for it.
        """CREATE UNIQUE INDEX detector_tasks_single_flight ON detector_tasks (tenant_id, detector)
            WHERE status IN ('queued', 'running')""",
        """CREATE TABLE detector_versions (
            tenant_id TEXT NOT NULL,
            detector TEXT NOT NULL,
            version INTEGER NOT NULL,
            task_id TEXT,
            trained_by TEXT NOT NULL,
            created_at TEXT NOT NULL,
            window_start TEXT,
            window_end TEXT,
            rows INTEGER NOT NULL,
            params TEXT NOT NULL,
            metrics TEXT NOT NULL,
            threshold {real} NOT NULL,
            model TEXT NOT NULL,
            PRIMARY KEY (tenant_id, detector, version)
        )""",
        # The active version and a generation that moves on every change, polled by every process.
        """CREATE TABLE detector_state (
            tenant_id TEXT NOT NULL,
            detector TEXT NOT NULL,
            active_version INTEGER,
            threshold {real},
            generation INTEGER NOT NULL,
            updated_at TEXT NOT NULL,
            PRIMARY KEY (tenant_id, detector)
        )""",
        """CREATE TABLE anomaly_reports (
            id TEXT PRIMARY KEY,
            tenant_id TEXT NOT NULL,
            agent_id TEXT NOT NULL,
            audit_log_id TEXT,
            type TEXT NOT NULL,
            severity TEXT NOT NULL,
            score {real},
            description TEXT NOT NULL,
            reasons TEXT NOT NULL DEFAULT '[]',
            source TEXT NOT NULL,
            model_version INTEGER,
            reported_by TEXT NOT NULL,
            occurred_at TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
        "CREATE INDEX anomaly_reports_tenant ON anomaly_reports (tenant_id, created_at, id)",
        "CREATE INDEX anomaly_reports_agent ON anomaly_reports (tenant_id, agent_id, created_at)",
        # The detector reports an entry at most once (a manual report of the same entry is another report).
        """CREATE UNIQUE INDEX anomaly_reports_entry ON anomaly_reports (tenant_id, audit_log_id)
            WHERE source = 'detector'""",
    ),
)
