"""Discovery of unknown ("shadow") agents: ingest events, cluster, confirm or dismiss candidates."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import (
    DEFAULT_PAGE_SIZE,
    Pager,
    as_list,
    body,
    iso_time,
    model,
    page_of,
    page_query,
    seg,
)
from agentgov_client.models import Agent, BatchIngestResult, DiscoveryCandidate, DiscoveryJob, IngestResult, Page


def ingest_event(
    core: ClientCore,
    source: str,
    *,
    host: str | None = None,
    process: str | None = None,
    user_agent: str | None = None,
    endpoint: str | None = None,
    model_name: str | None = None,
    client_address: str | None = None,
    observed_at: datetime | str | None = None,
    metadata: Mapping[str, Any] | None = None,
) -> Flow[IngestResult]:
    """``POST /discovery/ingest`` (``agents:update``): one observation of a possibly unknown agent; needs
    `source` and one of host, process, user_agent, endpoint or client_address. `model_name` is sent as the
    event's ``model``. Says whether it made or joined a candidate, or names the known agent. Not retried."""
    payload = body(
        source=source,
        host=host,
        process=process,
        user_agent=user_agent,
        endpoint=endpoint,
        model=model_name,
        client_address=client_address,
        observed_at=iso_time(observed_at),
        metadata=None if metadata is None else dict(metadata),
    )
    return core.execute(Call("POST", "/discovery/ingest", model(IngestResult), json=payload))


def ingest_events(
    core: ClientCore, events: Iterable[Mapping[str, Any]], *, cluster: bool = False
) -> Flow[BatchIngestResult]:
    """``POST /discovery/ingest/batch``: up to 1000 events (objects with the fields of `ingest_event`, the
    model as ``model``) in one transaction; with `cluster`, similar events form one candidate. Not retried."""
    payload = {"events": [dict(e) for e in events], "cluster": cluster}
    return core.execute(Call("POST", "/discovery/ingest/batch", model(BatchIngestResult), json=payload))


def cluster_candidates(core: ClientCore, *, distance_threshold: float | None = None) -> Flow[DiscoveryJob]:
    """``POST /discovery/cluster``: schedule a background merge of candidates describing the same agent (202);
    follow it with `get_discovery_job`. Not retried."""
    payload = body(distance_threshold=distance_threshold) or None
    return core.execute(Call("POST", "/discovery/cluster", model(DiscoveryJob), json=payload))


def get_discovery_job(core: ClientCore, job_id: str) -> Flow[DiscoveryJob]:
    """``GET /discovery/jobs/{id}``: a clustering job's state and result. Raises `NotFoundError`. Retried."""
    return core.execute(Call("GET", f"/discovery/jobs/{seg(job_id)}", model(DiscoveryJob)))


def list_candidates(
    core: ClientCore, *, status: str | None = None, limit: int = 50, offset: int = 0
) -> Flow[Page[DiscoveryCandidate]]:
    """``GET /discovery/candidates``: oldest first; `status` pending, confirmed, dismissed or merged (default:
    all but merged). Retried."""
    query = page_query("offset", offset, limit, status=status)
    return core.execute(Call("GET", "/discovery/candidates", page_of(DiscoveryCandidate), params=query))


def iter_candidates(
    core: ClientCore, *, status: str | None = None, page_size: int = DEFAULT_PAGE_SIZE
) -> Pager[DiscoveryCandidate]:
    """Every candidate with `status`, page after page (see `list_candidates`)."""
    return Pager(lambda offset, limit: list_candidates(core, status=status, limit=limit, offset=offset), page_size)


def get_candidate(core: ClientCore, candidate_id: str) -> Flow[DiscoveryCandidate]:
    """``GET /discovery/candidates/{id}``. Raises `NotFoundError`. Retried."""
    return core.execute(Call("GET", f"/discovery/candidates/{seg(candidate_id)}", model(DiscoveryCandidate)))


def confirm_candidate(
    core: ClientCore,
    candidate_id: str,
    *,
    name: str | None = None,
    type: str | None = None,
    description: str | None = None,
    owner: str | None = None,
    capabilities: Iterable[str] | None = None,
) -> Flow[Agent]:
    """``POST /discovery/candidates/{id}/confirm``: register the candidate as an agent (the given fields
    override the suggested ones) and return it; confirming again returns the same agent. Raises
    `ConflictError` for a dismissed or merged candidate. Not retried."""
    payload = body(name=name, type=type, description=description, owner=owner, capabilities=as_list(capabilities))
    path = f"/discovery/candidates/{seg(candidate_id)}/confirm"
    return core.execute(Call("POST", path, model(Agent), json=payload or None))


def dismiss_candidate(core: ClientCore, candidate_id: str) -> Flow[DiscoveryCandidate]:
    """``POST /discovery/candidates/{id}/dismiss``: later events with its fingerprints stay dismissed.
    Raises `ConflictError` for a confirmed candidate. Not retried."""
    path = f"/discovery/candidates/{seg(candidate_id)}/dismiss"
    return core.execute(Call("POST", path, model(DiscoveryCandidate)))
