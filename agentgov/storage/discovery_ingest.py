"""The unit of work that ingests a batch of discovery events in one transaction (see
`agentgov.storage.discovery` for the matching rules), and the statement helpers the repository shares."""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Sequence
from typing import Any

from agentgov.storage.database import Connection, Row, in_list
from agentgov.storage.discovery_records import (
    SAMPLE_LIMIT,
    SUMMARY_VALUES,
    IngestResult,
    PreparedEvent,
)
from agentgov.timeutil import now_iso

_IN_CHUNK = 500


def chunks(values: Sequence[str]) -> list[Sequence[str]]:
    """`values` in slices short enough for one `IN (...)` list."""
    return [values[i : i + _IN_CHUNK] for i in range(0, len(values), _IN_CHUNK)]


def select_in(conn: Connection, sql: str, column_values: Sequence[str], params: dict[str, Any]) -> list[Row]:
    """Run `sql` (with `{in}` where the IN list goes) over `column_values` in chunks."""
    rows: list[Row] = []
    for chunk in chunks(list(dict.fromkeys(column_values))):
        placeholders, more = in_list("v", chunk)
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
        mapping = select_in(
            self.conn,
            """SELECT fingerprint, candidate_id FROM discovery_fingerprints
               WHERE tenant_id = :t AND fingerprint IN ({in_})""",
            fps,
            t,
        )
        cand_ids = [r["candidate_id"] for r in mapping]
        rows = select_in(
            self.conn, "SELECT * FROM discovery_candidates WHERE tenant_id = :t AND id IN ({in_})", cand_ids, t
        )
        counts = {
            r["candidate_id"]: int(r["n"])
            for r in select_in(
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
            found = select_in(self.conn, "SELECT id FROM agents WHERE tenant_id = :t AND id IN ({in_})", ids, t)
            self.agent_ids = {r["id"] for r in found}
        names = [e.agent_ref_name.strip().lower() for e in events if e.agent_ref_name]
        if names:
            found = select_in(
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


def ingest_events(
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


def merge_summary_value(summary: dict[str, list[str]], key: str, value: str) -> None:
    values = summary.setdefault(key, [])
    if value not in values and len(values) < SUMMARY_VALUES:
        values.append(value)


def trim_samples(conn: Connection, tenant_id: str, candidate_id: str) -> None:
    """Keep the candidate's `SAMPLE_LIMIT` oldest samples."""
    rows = conn.fetchall(
        "SELECT id FROM discovery_samples WHERE tenant_id = :t AND candidate_id = :c ORDER BY created_at, id",
        {"t": tenant_id, "c": candidate_id},
    )
    extra = [r["id"] for r in rows[SAMPLE_LIMIT:]]
    for chunk in chunks(extra):
        placeholders, params = in_list("s", chunk)
        conn.execute(
            f"DELETE FROM discovery_samples WHERE tenant_id = :t AND id IN ({placeholders})", {"t": tenant_id, **params}
        )
