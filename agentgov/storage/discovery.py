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

from agentgov.storage.database import Connection, Database, IntegrityError, Row
from agentgov.timeutil import now_iso

CANDIDATE_STATUSES = ("pending", "confirmed", "dismissed", "merged")
#: Sample events kept per candidate.
SAMPLE_LIMIT = 20
#: Distinct values kept per summary field of a candidate.
SUMMARY_VALUES = 10
SUMMARY_FIELDS = ("sources", "hosts", "processes", "user_agents", "endpoints", "models", "client_addresses")
_IN_CHUNK = 500


class CandidateConflict(Exception):
    """The candidate is in a state that does not allow the change; the message says why."""


@dataclasses.dataclass(frozen=True)
class PreparedEvent:
    """One validated unknown-agent event with what the pure layer derived from it."""

    event: dict[str, Any]  # source, host, process, user_agent, endpoint, model, client_address, metadata
    observed_at: str
    fingerprint: str
    feature_text: str
    suggested_name: str
    agent_ref_id: str | None = None
    agent_ref_name: str | None = None


@dataclasses.dataclass(frozen=True)
class IngestResult:
    """What became of one event: `candidate_created`, `candidate_updated`, `known_agent` or `dismissed`."""

    outcome: str
    fingerprint: str
    candidate_id: str | None = None
    agent_id: str | None = None

    def to_public(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class DiscoveryCandidate:
    id: str
    tenant_id: str
    status: str
    fingerprint: str
    suggested_name: str
    summary: dict[str, list[str]]
    event_count: int
    first_seen_at: str
    last_seen_at: str
    agent_id: str | None
    merged_into: str | None
    created_at: str
    updated_at: str
    resolved_at: str | None
    fingerprints: tuple[str, ...] = ()

    @classmethod
    def from_row(cls, row: Row, fingerprints: Sequence[str] = ()) -> DiscoveryCandidate:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            status=row["status"],
            fingerprint=row["fingerprint"],
            suggested_name=row["suggested_name"],
            summary=json.loads(row["summary"]),
            event_count=int(row["event_count"]),
            first_seen_at=row["first_seen_at"],
            last_seen_at=row["last_seen_at"],
            agent_id=row["agent_id"],
            merged_into=row["merged_into"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            resolved_at=row["resolved_at"],
            fingerprints=tuple(fingerprints),
        )

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "status": self.status,
            "suggested_name": self.suggested_name,
            "fingerprint": self.fingerprint,
            "fingerprints": list(self.fingerprints),
            "event_count": self.event_count,
            "first_seen_at": self.first_seen_at,
            "last_seen_at": self.last_seen_at,
            "summary": self.summary,
            "agent_id": self.agent_id,
            "merged_into": self.merged_into,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "resolved_at": self.resolved_at,
        }


@dataclasses.dataclass(frozen=True)
class DiscoveryJob:
    id: str
    tenant_id: str
    kind: str
    status: str  # queued | running | succeeded | failed
    params: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None

    @classmethod
    def from_row(cls, row: Row) -> DiscoveryJob:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            kind=row["kind"],
            status=row["status"],
            params=json.loads(row["params"]),
            result=None if row["result"] is None else json.loads(row["result"]),
            error=row["error"],
            created_at=row["created_at"],
            started_at=row["started_at"],
            finished_at=row["finished_at"],
        )

    def to_public(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "params": self.params,
            "result": self.result,
            "error": self.error,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }


# ------------------------------------------------------------------------------------------ ingestion


def _chunks(values: Sequence[str]) -> list[Sequence[str]]:
    return [values[i : i + _IN_CHUNK] for i in range(0, len(values), _IN_CHUNK)]


def _in(prefix: str, values: Sequence[str]) -> tuple[str, dict[str, Any]]:
    names = [f"{prefix}{i}" for i in range(len(values))]
    return ", ".join(f":{n}" for n in names), dict(zip(names, values, strict=True))


def _select_in(conn: Connection, sql: str, column_values: Sequence[str], params: dict[str, Any]) -> list[Row]:
    """Run `sql` (with `{in}` where the IN list goes) over `column_values` in chunks."""
    rows: list[Row] = []
    for chunk in _chunks(list(dict.fromkeys(column_values))):
        placeholders, more = _in("v", chunk)
        rows.extend(conn.fetchall(sql.format(in_=placeholders), {**params, **more}))
    return rows


@dataclasses.dataclass
class _Cand:
    """A candidate row being changed inside one ingestion transaction."""

    row: dict[str, Any]
    summary: dict[str, list[str]]
    samples: int
    new: bool = False
    dirty: bool = False


def _merge_summary(summary: dict[str, list[str]], event: dict[str, Any]) -> None:
    pairs = {
        "sources": event.get("source"),
        "hosts": event.get("host"),
        "processes": event.get("process"),
        "user_agents": event.get("user_agent"),
        "endpoints": event.get("endpoint"),
        "models": event.get("model"),
        "client_addresses": event.get("client_address"),
    }
    for key, value in pairs.items():
        if not value:
            continue
        values = summary.setdefault(key, [])
        text = str(value)[:200]
        if text not in values and len(values) < SUMMARY_VALUES:
            values.append(text)


class _Ingestion:
    """One transaction's worth of events: resolves each to an agent, a candidate or a dismissal."""

    def __init__(self, conn: Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self.now = now_iso()
        self.by_fp: dict[str, _Cand | None] = {}
        self.cands: dict[str, _Cand] = {}
        self.new_fps: list[dict[str, Any]] = []
        self.samples: list[dict[str, Any]] = []
        self.agent_ids: set[str] = set()
        self.agent_by_name: dict[str, str] = {}

    def preload(self, events: Sequence[PreparedEvent]) -> None:
        """Read, in a few queries, every candidate, agent and sample count the events can touch."""
        t = {"t": self.tenant_id}
        fps = [e.fingerprint for e in events]
        mapping = _select_in(
            self.conn,
            """SELECT fingerprint, candidate_id FROM discovery_fingerprints
               WHERE tenant_id = :t AND fingerprint IN ({in_})""",
            fps,
            t,
        )
        cand_ids = [r["candidate_id"] for r in mapping]
        rows = _select_in(
            self.conn, "SELECT * FROM discovery_candidates WHERE tenant_id = :t AND id IN ({in_})", cand_ids, t
        )
        counts = {
            r["candidate_id"]: int(r["n"])
            for r in _select_in(
                self.conn,
                """SELECT candidate_id, COUNT(*) AS n FROM discovery_samples
                   WHERE tenant_id = :t AND candidate_id IN ({in_}) GROUP BY candidate_id""",
                cand_ids,
                t,
            )
        }
        for row in rows:
            fields = {k: row[k] for k in _CANDIDATE_COLUMNS}
            self.cands[row["id"]] = _Cand(
                row=fields, summary=json.loads(row["summary"]), samples=counts.get(row["id"], 0)
            )
        self.by_fp = {fp: None for fp in fps}
        for r in mapping:
            self.by_fp[r["fingerprint"]] = self.cands.get(r["candidate_id"])
        ids = [e.agent_ref_id for e in events if e.agent_ref_id]
        ids += [c.row["agent_id"] for c in self.cands.values() if c.row["agent_id"]]
        if ids:
            found = _select_in(self.conn, "SELECT id FROM agents WHERE tenant_id = :t AND id IN ({in_})", ids, t)
            self.agent_ids = {r["id"] for r in found}
        names = [e.agent_ref_name.strip().lower() for e in events if e.agent_ref_name]
        if names:
            found = _select_in(
                self.conn,
                """SELECT id, name_key FROM agents WHERE tenant_id = :t AND name_key IN ({in_})
                   ORDER BY created_at DESC, id DESC""",
                names,
                t,
            )
            self.agent_by_name = {r["name_key"]: r["id"] for r in found}  # the oldest wins (written last)

    def known_agent(self, event: PreparedEvent) -> str | None:
        if event.agent_ref_id and event.agent_ref_id in self.agent_ids:
            return event.agent_ref_id
        if event.agent_ref_name:
            return self.agent_by_name.get(event.agent_ref_name.strip().lower())
        return None

    def create(self, event: PreparedEvent) -> _Cand:
        cand_id = str(uuid.uuid4())
        row = {
            "id": cand_id,
            "tenant_id": self.tenant_id,
            "status": "pending",
            "fingerprint": event.fingerprint,
            "suggested_name": event.suggested_name,
            "summary": "{}",
            "event_count": 0,
            "first_seen_at": event.observed_at,
            "last_seen_at": event.observed_at,
            "agent_id": None,
            "merged_into": None,
            "created_at": self.now,
            "updated_at": self.now,
            "resolved_at": None,
        }
        cand = _Cand(row=row, summary={}, samples=0, new=True, dirty=True)
        self.cands[cand_id] = cand
        return cand

    def attach(self, cand: _Cand, event: PreparedEvent) -> None:
        """Map the event's fingerprint to `cand` if it is new."""
        if self.by_fp.get(event.fingerprint) is None:
            self.by_fp[event.fingerprint] = cand
            self.new_fps.append(
                {
                    "t": self.tenant_id,
                    "fp": event.fingerprint,
                    "c": cand.row["id"],
                    "at": self.now,
                }
            )

    def count(self, cand: _Cand, event: PreparedEvent, *, sample: bool) -> None:
        row = cand.row
        row["event_count"] = int(row["event_count"]) + 1
        row["first_seen_at"] = min(row["first_seen_at"], event.observed_at)
        row["last_seen_at"] = max(row["last_seen_at"], event.observed_at)
        row["updated_at"] = self.now
        cand.dirty = True
        if sample:
            _merge_summary(cand.summary, event.event)
            if cand.samples < SAMPLE_LIMIT:
                cand.samples += 1
                self.samples.append(
                    {
                        "id": str(uuid.uuid4()),
                        "t": self.tenant_id,
                        "c": row["id"],
                        "fp": event.fingerprint,
                        "event": json.dumps(event.event),
                        "ft": event.feature_text,
                        "obs": event.observed_at,
                        "at": self.now,
                    }
                )

    def flush(self) -> None:
        for cand in self.cands.values():
            if not cand.dirty:
                continue
            params = {**cand.row, "summary": json.dumps(cand.summary)}
            if cand.new:
                self.conn.execute(
                    f"INSERT INTO discovery_candidates ({', '.join(_CANDIDATE_COLUMNS)}) "
                    f"VALUES ({', '.join(':' + c for c in _CANDIDATE_COLUMNS)})",
                    params,
                )
            else:
                self.conn.execute(
                    """UPDATE discovery_candidates SET status = :status, summary = :summary,
                           event_count = :event_count, first_seen_at = :first_seen_at,
                           last_seen_at = :last_seen_at, agent_id = :agent_id, updated_at = :updated_at,
                           resolved_at = :resolved_at
                       WHERE tenant_id = :tenant_id AND id = :id""",
                    params,
                )
        if self.new_fps:
            self.conn.executemany(
                """INSERT INTO discovery_fingerprints (tenant_id, fingerprint, candidate_id, created_at)
                   VALUES (:t, :fp, :c, :at)""",
                self.new_fps,
            )
        if self.samples:
            self.conn.executemany(
                """INSERT INTO discovery_samples (id, tenant_id, candidate_id, fingerprint, event, feature_text,
                       observed_at, created_at) VALUES (:id, :t, :c, :fp, :event, :ft, :obs, :at)""",
                self.samples,
            )


_CANDIDATE_COLUMNS = (
    "id",
    "tenant_id",
    "status",
    "fingerprint",
    "suggested_name",
    "summary",
    "event_count",
    "first_seen_at",
    "last_seen_at",
    "agent_id",
    "merged_into",
    "created_at",
    "updated_at",
    "resolved_at",
)


def _ingest(
    conn: Connection, tenant_id: str, events: Sequence[PreparedEvent], labels: Sequence[int] | None
) -> list[IngestResult]:
    job = _Ingestion(conn, tenant_id)
    job.preload(events)
    # a cluster of this batch joins a live candidate one of its events already maps to (confirmed first)
    by_label: dict[int, _Cand] = {}
    if labels is not None:
        for event, label in zip(events, labels, strict=True):
            cand = job.by_fp.get(event.fingerprint)
            if cand is None or cand.row["status"] not in ("pending", "confirmed"):
                continue
            current = by_label.get(label)
            if current is None or (cand.row["status"] == "confirmed" and current.row["status"] != "confirmed"):
                by_label[label] = cand
    results = []
    for i, event in enumerate(events):
        agent_id = job.known_agent(event)
        if agent_id is not None:
            results.append(IngestResult("known_agent", event.fingerprint, agent_id=agent_id))
            continue
        cand = job.by_fp.get(event.fingerprint)
        outcome = "candidate_updated"
        if cand is None:
            event_label = None if labels is None else labels[i]
            cand = by_label.get(event_label) if event_label is not None else None
            if cand is None:
                cand = job.create(event)
                outcome = "candidate_created"
                if event_label is not None:
                    by_label[event_label] = cand
            job.attach(cand, event)
        status = cand.row["status"]
        if status == "dismissed":
            job.count(cand, event, sample=False)
            results.append(IngestResult("dismissed", event.fingerprint, candidate_id=cand.row["id"]))
            continue
        if status == "confirmed":
            if cand.row["agent_id"] in job.agent_ids:
                job.count(cand, event, sample=False)
                results.append(IngestResult("known_agent", event.fingerprint, cand.row["id"], cand.row["agent_id"]))
                continue
            # its agent was deleted since: the candidate is open again
            cand.row.update(status="pending", agent_id=None, resolved_at=None)
        job.count(cand, event, sample=True)
        results.append(IngestResult(outcome, event.fingerprint, candidate_id=cand.row["id"]))
    job.flush()
    return results


# ----------------------------------------------------------------------------------------- repository


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
        return await self.db.write(lambda conn: _ingest(conn, tenant_id, events, labels))

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
                found = _select_in(
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
                found = _select_in(
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

    async def merge(self, tenant_id: str, target_id: str, source_ids: Sequence[str]) -> list[str]:
        """Fold pending `source_ids` into `target_id` (pending or confirmed): their fingerprints, counts,
        samples (up to the limit) and summary. Candidates no longer pending are skipped. Returns the ids
        merged."""

        def run(conn: Connection) -> list[str]:
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
                        _merge_summary_value(summary, key, value)
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
                _trim_samples(conn, tenant_id, target_id)
                conn.execute(
                    """UPDATE discovery_candidates SET summary = :s, event_count = :n, first_seen_at = :f,
                           last_seen_at = :l, updated_at = :at WHERE tenant_id = :t AND id = :id""",
                    {**t, "s": json.dumps(summary), "n": counts, "f": first, "l": last, "at": stamp, "id": target_id},
                )
            return merged

        return await self.db.write(run)

    # --------------------------------------------------------------------------------------------- jobs

    async def create_job(self, tenant_id: str, kind: str, params: dict[str, Any]) -> DiscoveryJob:
        row = {
            "id": str(uuid.uuid4()),
            "tenant_id": tenant_id,
            "kind": kind,
            "status": "queued",
            "params": json.dumps(params),
            "result": None,
            "error": None,
            "created_at": now_iso(),
            "started_at": None,
            "finished_at": None,
        }

        def run(conn: Connection) -> None:
            conn.execute(
                """INSERT INTO discovery_jobs (id, tenant_id, kind, status, params, result, error, created_at,
                       started_at, finished_at)
                   VALUES (:id, :tenant_id, :kind, :status, :params, :result, :error, :created_at, :started_at,
                       :finished_at)""",
                row,
            )

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
    ) -> None:
        stamp = now_iso()
        column = "started_at" if status == "running" else "finished_at"
        await self.db.write(
            lambda conn: conn.execute(
                f"""UPDATE discovery_jobs SET status = :s, result = :r, error = :e, {column} = :at
                    WHERE tenant_id = :t AND id = :id""",
                {
                    "s": status,
                    "r": None if result is None else json.dumps(result),
                    "e": error,
                    "at": stamp,
                    "t": tenant_id,
                    "id": job_id,
                },
            )
        )

    async def get_job(self, tenant_id: str, job_id: str) -> DiscoveryJob | None:
        row = await self.db.read(
            lambda conn: conn.fetchone(
                "SELECT * FROM discovery_jobs WHERE tenant_id = :t AND id = :id", {"t": tenant_id, "id": job_id}
            )
        )
        return None if row is None else DiscoveryJob.from_row(row)


def _merge_summary_value(summary: dict[str, list[str]], key: str, value: str) -> None:
    values = summary.setdefault(key, [])
    if value not in values and len(values) < SUMMARY_VALUES:
        values.append(value)


def _trim_samples(conn: Connection, tenant_id: str, candidate_id: str) -> None:
    """Keep the candidate's `SAMPLE_LIMIT` oldest samples."""
    rows = conn.fetchall(
        "SELECT id FROM discovery_samples WHERE tenant_id = :t AND candidate_id = :c ORDER BY created_at, id",
        {"t": tenant_id, "c": candidate_id},
    )
    extra = [r["id"] for r in rows[SAMPLE_LIMIT:]]
    for chunk in _chunks(extra):
        placeholders, params = _in("s", chunk)
        conn.execute(
            f"DELETE FROM discovery_samples WHERE tenant_id = :t AND id IN ({placeholders})", {"t": tenant_id, **params}
        )


__all__ = [
    "CANDIDATE_STATUSES",
    "CandidateConflict",
    "DiscoveryCandidate",
    "DiscoveryJob",
    "DiscoveryRepo",
    "IngestResult",
    "IntegrityError",
    "PreparedEvent",
]
