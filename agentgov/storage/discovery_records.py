"""Discovery storage records: candidates, ingestion results, jobs and the limits they are kept under."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from agentgov.storage.database import Row

CANDIDATE_STATUSES = ("pending", "confirmed", "dismissed", "merged")
#: Sample events kept per candidate.
SAMPLE_LIMIT = 20
#: Distinct values kept per summary field of a candidate.
SUMMARY_VALUES = 10
SUMMARY_FIELDS = ("sources", "hosts", "processes", "user_agents", "endpoints", "models", "client_addresses")


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
