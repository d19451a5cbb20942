"""Agents and the discovery of unknown ("shadow") agents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgov_client.models._base import Model, list_of


@dataclass(frozen=True)
class Agent(Model):
    """A registered agent. `type` is llm, tool, workflow or custom; `status` active, inactive or error.
    `score` is set by `search_agents` only (cosine similarity to the query, -1..1)."""

    id: str
    name: str
    type: str
    status: str
    description: str = ""
    capabilities: list[str] = field(default_factory=list)
    owner: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    predicted_type: str | None = None
    predicted_type_confidence: float | None = None
    risk_score: float | None = None
    last_heartbeat_at: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    score: float | None = None


@dataclass(frozen=True)
class AgentDetails(Agent):
    """An agent with its audit `activity` counts and a summary of its search `embedding`."""

    activity: dict[str, Any] = field(default_factory=dict)
    embedding: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DiscoveryCandidate(Model):
    """A group of unknown-agent events that may be one agent: pending, confirmed, dismissed or merged."""

    id: str
    status: str
    suggested_name: str = ""
    fingerprint: str = ""
    fingerprints: list[str] = field(default_factory=list)
    event_count: int = 0
    first_seen_at: str | None = None
    last_seen_at: str | None = None
    summary: dict[str, list[str]] = field(default_factory=dict)
    agent_id: str | None = None
    merged_into: str | None = None
    created_at: str | None = None
    updated_at: str | None = None
    resolved_at: str | None = None


@dataclass(frozen=True)
class IngestResult(Model):
    """What one ingested event did: candidate_created, candidate_updated, known_agent or dismissed."""

    outcome: str
    fingerprint: str = ""
    candidate_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True)
class BatchIngestResult(Model):
    """A batch ingest: events `accepted`, whether they were `clustered`, new candidates, each event's result."""

    accepted: int
    clustered: bool = False
    candidates_created: int = 0
    results: list[IngestResult] = field(default_factory=list)

    _nested = {"results": list_of(IngestResult.from_json)}


@dataclass(frozen=True)
class DiscoveryJob(Model):
    """A background clustering job: queued, running, succeeded (with `result`) or failed (with `error`)."""

    id: str
    status: str
    kind: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    error: str | None = None
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    status_url: str | None = None
