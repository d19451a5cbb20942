"""Background work whose process stopped: training tasks, export jobs and clustering jobs.

Each kind keeps, on its row, the process running it (`owner`) and when that process last showed it was
still at it (`heartbeat_at`), while the row is live (`queued` or `running`). A live row whose process is gone
is failed, so that nothing stays `running` forever; `orphaned` is the condition that picks those rows.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from agentgov.timeutil import now, to_iso


def orphaned(*, lease_seconds: float, owner: str | None) -> tuple[str, dict[str, Any]]:
    """(SQL condition, its parameters) picking the rows whose process is gone: with `owner` (one process owns
    an SQLite database, so no other can be running anything) every row not owned by `owner`; without, the
    rows whose heartbeat is older than `lease_seconds`. The caller adds the live-status condition."""
    if owner is not None:
        return "(owner IS NULL OR owner <> :orphan_owner)", {"orphan_owner": owner}
    stale = to_iso(now() - timedelta(seconds=lease_seconds))
    return "(heartbeat_at IS NULL OR heartbeat_at < :orphan_stale)", {"orphan_stale": stale}


def owner_at_start(dialect: str, instance_id: str) -> str | None:
    """The `owner` with which a process starting up fails what was left live: itself with SQLite (one process
    owns the database, so every live row of another owner is orphaned); none with PostgreSQL (other processes
    may be running, so only rows with a stale heartbeat are)."""
    return instance_id if dialect == "sqlite" else None
