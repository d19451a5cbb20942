"""Discovery storage: candidates, the fingerprints that map to them, sample events and jobs (m0007).

A candidate is one suspected shadow agent. Every fingerprint (`agentgov.ml.discovery.fingerprint`) seen
in the tenant maps to exactly one live candidate (`discovery_fingerprints`); merging candidates re-points
their fingerprints at the one kept, so a lookup never has to follow a chain. Each candidate keeps its
first `SAMPLE_LIMIT` events as samples (for merging and for people to look at) and counts the rest.

Matching events to registered agents (done in the same transaction as the ingestion):

1. `metadata.agent_id` names an agent of this tenant -> the event is that agent's;
2. else `metadata.agent_name` equals an agent's name (case-insensitive, oldest agent first) -> that agent;
3. else the event's fingerprint belongs to a confirmed candidate whose agent still exists -> that agent.

Such events create no candidate. A fingerprint of a dismissed candidate stays dismissed: its events are
counted on that candidate and create nothing. Every call runs in one transaction and raises
`DatabaseError` when the database fails.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from typing import Any

from agentgov.storage.database import Connection, Database, IntegrityError
from agentgov.storage.discovery_ingest import ingest_events, merge_summary_value, select_in, trim_samples
from agentgov.storage.discovery_records import (
    CANDIDATE_STATUSES,
    CandidateConflict,
    DiscoveryCandidate,
    DiscoveryJob,
    IngestResult,
    PreparedEvent,
)
from agentgov.storage.leases import fence
from agentgov.storage.orphans import orphaned
from agentgov.timeutil import now_iso

#: The error of a job whose process stopped before it finished.
ORPHANED_JOB = "the process running this job stopped before it finished; start the job again"


def _get_candidate(conn: Connection, tenant_id: str, candidate_id: str) -> DiscoveryCandidate | None:
    row = conn.fetchone(
        "SELECT * FROM discovery_candidates WHERE tenant_id = :t AND id = :id", {"t": tenant_id, "id": candidate_id}
    )
    if row is None:
        return None
    fps = conn.fetchall(
        """SELECT fingerprint FROM discovery_fingerprints WHERE tenant_id = :t AND candidate_id = :c
           ORDER BY created_at, fingerprint""",
        {"t": tenant_id, "c": candidate_id},
    )
    return DiscoveryCandidate.from_row(row, [r["fingerprint"] for r in fps])


class DiscoveryRepo:
    """Persistence of discovery state; every call is one transaction filtered by tenant."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def ingest(
        self, tenant_id: str, events: Sequence[PreparedEvent], labels: Sequence[int] | None = None
    ) -> list[IngestResult]:
        """Record `events` (one result each, in order). With `labels` (one cluster label per event, from
        `cluster_events`), unknown events of one label become one candidate, or join the live candidate
        another event of that label already maps to. Raises `IntegrityError` when another process mapped
        one of the fingerprints at the same moment (nothing is written; retry)."""
        return await self.db.write(lambda conn: ingest_events(conn, tenant_id, events, labels))

    async def get(self, tenant_id: str, candidate_id: str) -> DiscoveryCandidate | None:
        return await self.db.read(lambda conn: _get_candidate(conn, tenant_id, candidate_id))

    async def list_page(
        self, tenant_id: str, *, status: str | None, limit: int, offset: int
    ) -> tuple[list[DiscoveryCandidate], int]:
        """Candidates oldest first; without `status`, every one but those merged into another."""
        where = "tenant_id = :t AND " + ("status = :status" if status else "status <> 'merged'")
        params: dict[str, Any] = {"t": tenant_id, "status": status, "limit": limit, "offset": offset}
        if not status:
            params.pop("status")

        def run(conn: Connection) -> tuple[list[DiscoveryCandidate], int]:
            total = int(conn.scalar(f"SELECT COUNT(*) FROM discovery_candidates WHERE {where}", params))
            rows = conn.fetchall(
                f"""SELECT * FROM discovery_candidates WHERE {where}
                    ORDER BY created_at, id LIMIT :limit OFFSET :offset""",
                params,
            )
            fps: dict[str, list[str]] = {}
            if rows:
                found = select_in(
                    conn,
                    """SELECT candidate_id, fingerprint FROM discovery_fingerprints
                       WHERE tenant_id = :t AND candidate_id IN ({in_}) ORDER BY created_at, fingerprint""",
                    [r["id"] for r in rows],
                    {"t": tenant_id},
                )
                for r in found:
                    fps.setdefault(r["candidate_id"], []).append(r["fingerprint"])
            return [DiscoveryCandidate.from_row(r, fps.get(r["id"], ())) for r in rows], total

        return await self.db.read(run)

    async def mark_confirmed(self, tenant_id: str, candidate_id: str, agent_id: str) -> DiscoveryCandidate:
        """Record that the candidate is the agent `agent_id`. Raises `CandidateConflict` if it was merged."""

        def run(conn: Connection) -> DiscoveryCandidate:
            current = _get_candidate(conn, tenant_id, candidate_id)
            if current is None or current.status == "merged":
                raise CandidateConflict("the candidate was merged into another one meanwhile")
            stamp = now_iso()
            conn.execute(
                """UPDATE discovery_candidates SET status = 'confirmed', agent_id = :a, resolved_at = :at,
                       updated_at = :at WHERE tenant_id = :t AND id = :id""",
                {"a": agent_id, "at": stamp, "t": tenant_id, "id": candidate_id},
            )
            return dataclasses.replace(
                current, status="confirmed", agent_id=agent_id, resolved_at=stamp, updated_at=stamp
            )

        return await self.db.write(run)

    async def dismiss(self, tenant_id: str, candidate_id: str) -> DiscoveryCandidate | None:
        """Dismiss a pending candidate (idempotent); None if there is none. Raises `CandidateConflict`
        for a confirmed or merged candidate."""

        def run(conn: Connection) -> DiscoveryCandidate | None:
            current = _get_candidate(conn, tenant_id, candidate_id)
            if current is None:
                return None
            if current.status == "dismissed":
                return current
            if current.status == "confirmed":
                raise CandidateConflict(f"the candidate is already confirmed as agent {current.agent_id}")
            if current.status == "merged":
                raise CandidateConflict(f"the candidate was merged into {current.merged_into}; dismiss that one")
            stamp = now_iso()
            conn.execute(
                """UPDATE discovery_candidates SET status = 'dismissed', resolved_at = :at, updated_at = :at
                   WHERE tenant_id = :t AND id = :id""",
                {"at": stamp, "t": tenant_id, "id": candidate_id},
            )
            return dataclasses.replace(current, status="dismissed", resolved_at=stamp, updated_at=stamp)

        return await self.db.write(run)

    # ------------------------------------------------------------------------------------------ merging

    async def merge_inputs(self, tenant_id: str, max_candidates: int) -> list[dict[str, Any]]:
        """Pending and confirmed candidates (most recently seen first, at most `max_candidates`) with the
        feature texts of their samples, as `merge_candidates` takes them, plus each one's status."""

        def run(conn: Connection) -> list[dict[str, Any]]:
            rows = conn.fetchall(
                """SELECT id, status, created_at FROM discovery_candidates
                   WHERE tenant_id = :t AND status IN ('pending', 'confirmed')
                   ORDER BY last_seen_at DESC, id LIMIT :n""",
                {"t": tenant_id, "n": max_candidates},
            )
            texts: dict[str, list[str]] = {}
            if rows:
                found = select_in(
                    conn,
                    """SELECT candidate_id, feature_text FROM discovery_samples
                       WHERE tenant_id = :t AND candidate_id IN ({in_}) ORDER BY created_at, id""",
                    [r["id"] for r in rows],
                    {"t": tenant_id},
                )
                for r in found:
                    texts.setdefault(r["candidate_id"], []).append(r["feature_text"])
            rows.sort(key=lambda r: (r["created_at"], r["id"]))
            return [{"id": r["id"], "status": r["status"], "feature_texts": texts.get(r["id"], [])} for r in rows]

        return await self.db.read(run)

    async def merge(
        self, tenant_id: str, target_id: str, source_ids: Sequence[str], *, lease: tuple[str, int] | None = None
    ) -> list[str]:
        """Fold pending `source_ids` into `target_id` (pending or confirmed): their fingerprints, counts,
        samples (up to the limit) and summary. Candidates no longer pending are skipped. Returns the ids
        merged. With `lease` (name, fencing token) the merge is fenced: it raises `LeaseLost`, writing
        nothing, when the lease changed owner."""

        def run(conn: Connection) -> list[str]:
            if lease is not None:
                fence(conn, *lease)
            t = {"t": tenant_id}
            target = conn.fetchone(
                "SELECT * FROM discovery_candidates WHERE tenant_id = :t AND id = :id", {**t, "id": target_id}
            )
            if target is None or target["status"] not in ("pending", "confirmed"):
                return []
            summary = json.loads(target["summary"])
            counts = int(target["event_count"])
            first, last = target["first_seen_at"], target["last_seen_at"]
            merged = []
            stamp = now_iso()
            for source_id in source_ids:
                src = conn.fetchone(
                    "SELECT * FROM discovery_candidates WHERE tenant_id = :t AND id = :id AND status = 'pending'",
                    {**t, "id": source_id},
                )
                if src is None or source_id == target_id:
                    continue
                counts += int(src["event_count"])
                first, last = min(first, src["first_seen_at"]), max(last, src["last_seen_at"])
                for key, values in json.loads(src["summary"]).items():
                    for value in values:
                        merge_summary_value(summary, key, value)
                params = {**t, "src": source_id, "dst": target_id, "at": stamp}
                conn.execute(
                    """UPDATE discovery_fingerprints SET candidate_id = :dst
                       WHERE tenant_id = :t AND candidate_id = :src""",
                    params,
                )
                conn.execute(
                    "UPDATE discovery_samples SET candidate_id = :dst WHERE tenant_id = :t AND candidate_id = :src",
                    params,
                )
                conn.execute(
                    """UPDATE discovery_candidates SET status = 'merged', merged_into = :dst, updated_at = :at,
                           resolved_at = :at WHERE tenant_id = :t AND id = :src""",
                    params,
                )
                merged.append(source_id)
            if merged:
                trim_samples(conn, tenant_id, target_id)
                conn.execute(
                    """UPDATE discovery_candidates SET summary = :s, event_count = :n, first_seen_at = :f,
                           last_seen_at = :l, updated_at = :at WHERE tenant_id = :t AND id = :id""",
                    {**t, "s": json.dumps(summary), "n": counts, "f": first, "l": last, "at": stamp, "id": target_id},
                )
            return merged

        return await self.db.write(run)

    # --------------------------------------------------------------------------------------------- jobs

    async def create_job(self, tenant_id: str, kind: str, params: dict[str, Any], *, owner: str) -> DiscoveryJob:
        """A new `queued` job, run by the process `owner` (which refreshes its heartbeat while it lives)."""
        stamp = now_iso()
        row = {
            "id": str(uuid.uuid4()),
            "tenant_id": tenant_id,
            "kind": kind,
            "status": "queued",
            "params": json.dumps(params),
            "result": None,
            "error": None,
            "created_at": stamp,
            "started_at": None,
            "finished_at": None,
            "owner": owner,
            "heartbeat_at": stamp,
        }

        def run(conn: Connection) -> None:
            conn.insert_rows("discovery_jobs", [row])

        await self.db.write(run)
        return DiscoveryJob.from_row(row)

    async def update_job(
        self,
        tenant_id: str,
        job_id: str,
        *,
        status: str,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        lease: tuple[str, int] | None = None,
    ) -> bool:
        """Move a live (`queued` or `running`) job to `status`; False when it is no longer live (it was failed
        as orphaned meanwhile). With `lease` the update is fenced as `merge` is (raises `LeaseLost`)."""
        stamp = now_iso()
        column = "started_at" if status == "running" else "finished_at"

        def run(conn: Connection) -> bool:
            if lease is not None:
                fence(conn, *lease)
            return (
                conn.execute(
                    f"""UPDATE discovery_jobs SET status = :s, result = :r, error = :e, {column} = :at,
                            heartbeat_at = :at
                        WHERE tenant_id = :t AND id = :id AND status IN ('queued', 'running')""",
                    {
                        "s": status,
                        "r": None if result is None else json.dumps(result),
                        "e": error,
                        "at": stamp,
                        "t": tenant_id,
                        "id": job_id,
                    },
                )
                == 1
            )

        return await self.db.write(run)

    async def heartbeat_jobs(self, job_ids: Sequence[str]) -> None:
        """Refresh the heartbeat of this process's live jobs (it is alive and still means to run them)."""
        if not job_ids:
            return
        stamp = now_iso()

        def run(conn: Connection) -> None:
            for job_id in job_ids:
                conn.execute(
                    "UPDATE discovery_jobs SET heartbeat_at = :at WHERE id = :id AND status IN ('queued', 'running')",
                    {"at": stamp, "id": job_id},
                )

        await self.db.write(run)

    async def fail_orphaned_jobs(self, *, lease_seconds: float, owner: str | None = None) -> int:
        """Fail live jobs whose heartbeat is older than `lease_seconds` (their process died) or, with `owner`,
        every live job not owned by it (one process owns an SQLite database). Returns how many."""
        where, params = orphaned(lease_seconds=lease_seconds, owner=owner)
        return await self.db.write(
            lambda conn: conn.execute(
                "UPDATE discovery_jobs SET status = 'failed', error = :e, finished_at = :at"
                f" WHERE status IN ('queued', 'running') AND {where}",
                {**params, "e": ORPHANED_JOB, "at": now_iso()},
            )
        )

    async def get_job(self, tenant_id: str, job_id: str) -> DiscoveryJob | None:
        row = await self.db.read(
            lambda conn: conn.fetchone(
                "SELECT * FROM discovery_jobs WHERE tenant_id = :t AND id = :id", {"t": tenant_id, "id": job_id}
            )
        )
        return None if row is None else DiscoveryJob.from_row(row)


__all__ = [
    "CANDIDATE_STATUSES",
    "ORPHANED_JOB",
    "CandidateConflict",
    "DiscoveryCandidate",
    "DiscoveryJob",
    "DiscoveryRepo",
    "IngestResult",
    "IntegrityError",
    "PreparedEvent",
]
