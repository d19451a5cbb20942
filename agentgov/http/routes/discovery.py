"""Discovery of unknown ("shadow") agents: ingest events, cluster them into candidates, confirm or dismiss.

Thin handlers over the tenant's discovery actor (`agentgov.actors.discovery`). Reads need `agents:read`;
writes need `agents:update`. Unknown or other tenants' ids are 404, malformed ids 422.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, Field, StrictBool, model_validator
from quart import Blueprint, request
from quart_schema import document_request, document_response, tag

from agentgov.actors.discovery import (
    MAX_BATCH_EVENTS,
    CandidateConflict,
    CandidateNotFound,
    CandidatePage,
    Confirmation,
    ConfirmCandidate,
    DismissCandidate,
    GetCandidate,
    GetJob,
    IngestEvents,
    JobNotFound,
    ListCandidates,
    StartClustering,
    discovery,
)
from agentgov.actors.registry import AgentNotFound
from agentgov.actors.runtime import InvalidMessage
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.routes.agents import AgentOut, AgentType
from agentgov.http.schemas import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, RequestModel, bounded_name, page, storable_json
from agentgov.http.validation import json_body, parse_model, query, read_json
from agentgov.ml.discovery import DEFAULT_MERGE_THRESHOLD
from agentgov.security.roles import Permission
from agentgov.storage.discovery import DiscoveryCandidate, DiscoveryJob, IngestResult

bp = Blueprint("discovery", __name__)

MAX_METADATA_BYTES = 8 * 1024
_IDENTIFYING = ("host", "process", "user_agent", "endpoint", "client_address")
_V6_WITH_PORT = re.compile(r"^\[([0-9A-Fa-f:.]+)\](?::(\d{1,5}))?$")


def _address(value: str | None) -> str | None:
    """An IP address, optionally with a port (`10.0.0.5:51234`, `[2001:db8::1]:443`)."""
    if value is None:
        return None
    text = value.strip()
    match = _V6_WITH_PORT.match(text)
    host, port = (match.group(1), match.group(2)) if match else (text, None)
    if not match and text.count(":") == 1:
        host, port = text.split(":")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ValueError("must be an IP address, optionally with :port") from None
    if port is not None and not (port.isascii() and port.isdigit() and 0 < int(port) < 65536):
        raise ValueError("port must be 1-65535")
    return text


def _metadata_size(value: dict[str, Any]) -> dict[str, Any]:
    return storable_json(value, MAX_METADATA_BYTES, "metadata")


def _text(max_length: int) -> Any:
    return Annotated[str | None, Field(max_length=max_length)]


class EventIn(RequestModel):
    """One observation of an agent that may not be registered. `source` and one identifying field
    (host, process, user_agent, endpoint or client_address) are required."""

    source: bounded_name(100)  # type: ignore[valid-type]
    host: _text(255) = None  # type: ignore[valid-type]
    process: _text(2000) = None  # type: ignore[valid-type]
    user_agent: _text(1000) = None  # type: ignore[valid-type]
    endpoint: _text(2000) = None  # type: ignore[valid-type]
    model: _text(200) = None  # type: ignore[valid-type]
    client_address: Annotated[str | None, Field(default=None, max_length=100), AfterValidator(_address)] = None
    observed_at: datetime | None = Field(default=None, description="ISO-8601; UTC when no offset; default now")
    metadata: Annotated[dict[str, Any], AfterValidator(_metadata_size)] = Field(
        default_factory=dict,
        description="free-form; `agent_id` or `agent_name` attribute the event to a registered agent",
    )

    @model_validator(mode="after")
    def _identifiable(self) -> EventIn:
        if not any((getattr(self, f) or "").strip() for f in _IDENTIFYING):
            raise ValueError(f"an event needs at least one of {', '.join(_IDENTIFYING)}")
        return self

    def as_event(self) -> dict[str, Any]:
        return self.model_dump()


class BatchIn(RequestModel):
    events: list[EventIn] = Field(min_length=1, max_length=MAX_BATCH_EVENTS)
    cluster: StrictBool = Field(default=False, description="group the batch's events into candidates by similarity")


class ClusterIn(RequestModel):
    distance_threshold: float = Field(strict=True, default=DEFAULT_MERGE_THRESHOLD, gt=0.0, le=2.0)


class ConfirmIn(RequestModel):
    """Optional overrides for the agent registered from the candidate."""

    name: bounded_name(200) | None = None  # type: ignore[valid-type]
    type: AgentType | None = None
    description: str | None = Field(default=None, max_length=4000)
    owner: str | None = Field(default=None, max_length=200)
    capabilities: list[Annotated[str, Field(min_length=1, max_length=200)]] | None = Field(default=None, max_length=100)


class CandidateQuery(BaseModel):
    status: Literal["pending", "confirmed", "dismissed", "merged"] | None = None
    limit: int = Field(default=DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)
    offset: int = Field(default=0, ge=0)


class IngestResultOut(BaseModel):
    outcome: Literal["candidate_created", "candidate_updated", "known_agent", "dismissed"]
    fingerprint: str
    candidate_id: str | None
    agent_id: str | None


class BatchOut(BaseModel):
    accepted: int
    clustered: bool
    candidates_created: int
    results: list[IngestResultOut]


class CandidateOut(BaseModel):
    id: str
    status: str
    suggested_name: str
    fingerprint: str
    fingerprints: list[str]
    event_count: int
    first_seen_at: str
    last_seen_at: str
    summary: dict[str, list[str]]
    agent_id: str | None
    merged_into: str | None
    created_at: str
    updated_at: str
    resolved_at: str | None


class CandidatePageOut(BaseModel):
    items: list[CandidateOut]
    total: int
    limit: int
    offset: int


class JobOut(BaseModel):
    id: str
    kind: str
    status: Literal["queued", "running", "succeeded", "failed"]
    params: dict[str, Any]
    result: dict[str, Any] | None
    error: str | None
    created_at: str
    started_at: str | None
    finished_at: str | None


class JobAccepted(JobOut):
    status_url: str


_ERRORS = {
    CandidateNotFound: lambda _: ApiError(404, "Candidate not found"),
    JobNotFound: lambda _: ApiError(404, "Job not found"),
    AgentNotFound: lambda _: ApiError(404, "Agent not found"),
    CandidateConflict: lambda exc: ApiError(409, str(exc)),
    InvalidMessage: lambda exc: ApiError(422, f"Invalid request: {exc}"),
}


async def _ask(message: Any) -> Any:
    """Ask the tenant's discovery actor (`ask_actor`), its domain errors mapped by `_ERRORS`."""
    return await ask_actor(discovery(services(), tenant_id()), message, what="Discovery", errors=_ERRORS)


async def _optional_body(model: type[Any]) -> Any:
    """The body parsed as `model`, or the model's defaults when the request has no body."""
    if await request.get_data(as_text=False):
        return parse_model(model, await read_json())
    return model()


@bp.post("/discovery/ingest")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_UPDATE)
@tag(["discovery"])
@json_body(EventIn)
@document_response(IngestResultOut, 200)
async def ingest(data: EventIn) -> dict[str, Any]:
    """Record one unknown-agent event; says whether it made or joined a candidate, or whose it is."""
    results: list[IngestResult] = await _ask(IngestEvents((data.as_event(),)))
    return results[0].to_public()


@bp.post("/discovery/ingest/batch")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_UPDATE)
@tag(["discovery"])
@json_body(BatchIn)
@document_response(BatchOut, 200)
async def ingest_batch(data: BatchIn) -> dict[str, Any]:
    """Record up to 1000 events in one transaction; with `cluster`, similar events form one candidate."""
    results: list[IngestResult] = await _ask(
        IngestEvents(tuple(e.as_event() for e in data.events), cluster=data.cluster)
    )
    return {
        "accepted": len(results),
        "clustered": data.cluster,
        "candidates_created": len({r.candidate_id for r in results if r.outcome == "candidate_created"}),
        "results": [r.to_public() for r in results],
    }


@bp.post("/discovery/cluster")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_UPDATE)
@tag(["discovery"])
@document_request(ClusterIn)
@document_response(JobAccepted, 202)
async def start_clustering() -> tuple[dict[str, Any], int, dict[str, str]]:
    """Schedule a background merge of candidates that describe the same agent (202 with the job)."""
    body: ClusterIn = await _optional_body(ClusterIn)
    job: DiscoveryJob = await _ask(StartClustering(body.distance_threshold))
    url = f"/api/v1/discovery/jobs/{job.id}"
    return {**job.to_public(), "status_url": url}, 202, {"Location": url}


@bp.get("/discovery/jobs/<job_id>")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["discovery"])
@document_response(JobOut, 200)
async def get_job(job_id: str) -> dict[str, Any]:
    """A clustering job's state and, once it succeeded, its result."""
    job: DiscoveryJob = await _ask(GetJob(parse_uuid(job_id, "job_id")))
    return job.to_public()


@bp.get("/discovery/candidates")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["discovery"])
@query(CandidateQuery)
@document_response(CandidatePageOut, 200)
async def list_candidates(query: CandidateQuery) -> dict[str, Any]:
    """Candidates, oldest first; filter by `status` (by default all but merged ones)."""
    result: CandidatePage = await _ask(ListCandidates(query.status, query.limit, query.offset))
    return page([c.to_public() for c in result.items], result.total, query.limit, query.offset)


@bp.get("/discovery/candidates/<candidate_id>")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_READ)
@tag(["discovery"])
@document_response(CandidateOut, 200)
async def get_candidate(candidate_id: str) -> dict[str, Any]:
    """One candidate (a merged one names the candidate it was merged into)."""
    candidate: DiscoveryCandidate = await _ask(GetCandidate(parse_uuid(candidate_id, "candidate_id")))
    return candidate.to_public()


@bp.post("/discovery/candidates/<candidate_id>/confirm")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_UPDATE)
@tag(["discovery"])
@document_request(ConfirmIn)
@document_response(AgentOut, 201)
async def confirm_candidate(candidate_id: str) -> tuple[dict[str, Any], int]:
    """Register the candidate as an agent and return it (201; 200 with the same agent when repeated)."""
    checked = parse_uuid(candidate_id, "candidate_id")
    body: ConfirmIn = await _optional_body(ConfirmIn)
    result: Confirmation = await _ask(
        ConfirmCandidate(
            checked,
            name=body.name,
            type=body.type,
            description=body.description,
            owner=body.owner,
            capabilities=None if body.capabilities is None else tuple(body.capabilities),
        )
    )
    return result.agent.to_public(), 201 if result.created else 200


@bp.post("/discovery/candidates/<candidate_id>/dismiss")
@authorize(Scheme.API_KEY, permission=Permission.AGENTS_UPDATE)
@tag(["discovery"])
@document_response(CandidateOut, 200)
async def dismiss_candidate(candidate_id: str) -> dict[str, Any]:
    """Dismiss the candidate; later events with its fingerprints stay dismissed."""
    candidate: DiscoveryCandidate = await _ask(DismissCandidate(parse_uuid(candidate_id, "candidate_id")))
    return candidate.to_public()
