"""The per-tenant discovery actor (`discovery:<tenant_id>`): shadow-agent candidates from unknown-agent events.

Messages (declared below): `IngestEvents`, `ListCandidates`, `GetCandidate`, `ConfirmCandidate`,
`DismissCandidate`, `StartClustering`, `GetJob`, `WatchJob`. Unknown ids raise `CandidateNotFound` /
`JobNotFound`; a change the candidate's state forbids raises `CandidateConflict`; bad input `ValueError`.

Ingestion. Each event is fingerprinted (`agentgov.ml.discovery.fingerprint`) and resolved in one
transaction (`agentgov.storage.discovery` documents how an event is matched to a registered agent): it is
a registered agent's, a dismissed candidate's (and stays dismissed), part of a pending candidate, or the
first of a new one. With `cluster=True` the batch is first grouped with `cluster_events`, so one agent's
events with different fingerprints (seen by different sensors) become one candidate. Consecutive
single-event messages waiting in the mailbox are ingested together in one transaction.

Confirming registers an agent through the registry actor (this actor asks the registry; the registry never
asks this one). The agent's id is derived from the candidate's id and registration with a given id is
idempotent, so confirming twice, or retrying after a failure between the two writes, returns the same
agent.

Clustering job. `StartClustering` records a job and runs it in the actor's nursery: it proposes merges of
pending candidates (into a confirmed one when the group has one, else into the oldest) with
`merge_candidates`, run in a worker process, and applies each merge in one transaction. Jobs run one at a
time per tenant, also across processes sharing the database: a job holds the tenant's lease
`discovery-clustering:<tenant_id>` while it runs (`agentgov.leasehold`), waiting `queued` while another
process's job holds it, and every merge is fenced with the lease's token. The process refreshes its live jobs'
heartbeat; a job whose process died is failed by the `orphaned-jobs` duty (`agentgov.duties`) once its
heartbeat is older than `LEASE_SECONDS`, and at start with SQLite. Pending candidates are never merged into
dismissed ones: a dismissal covers its own fingerprints only.

Cancellation. Cancelling a caller's `ask` abandons the reply; the message is still handled. Database
calls run in threads that are waited for (a write commits or rolls back whole). When the actor stops, a
running clustering job is cancelled: its worker process is killed, merges already applied stay applied
(each is its own transaction), and the job is marked failed ("cancelled") within a short shielded
timeout.
"""

from __future__ import annotations

import dataclasses
import logging
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import trio
import trio_parallel
from outcome import Error, Value

from agentgov.actors.registry import AgentNotFound, GetAgent, RegisterAgent, registry
from agentgov.actors.runtime import Actor, ActorContext, InvalidMessage, Outcome, Request
from agentgov.leasehold import held_lease
from agentgov.ml.agent_type import default_type_classifier
from agentgov.ml.discovery import (
    DEFAULT_MERGE_THRESHOLD,
    cluster_events,
    event_feature_text,
    event_tokens,
    fingerprint,
    merge_candidates,
)
from agentgov.storage.agents import Agent
from agentgov.storage.database import IntegrityError
from agentgov.storage.discovery import (
    CandidateConflict,
    DiscoveryCandidate,
    DiscoveryJob,
    DiscoveryRepo,
    IngestResult,
    PreparedEvent,
)
from agentgov.timeutil import now_iso, to_iso

if TYPE_CHECKING:
    from agentgov.actors.runtime import ActorRef
    from agentgov.services import Services

log = logging.getLogger("agentgov.discovery")

#: At most this many candidates (most recently seen first) are considered by one clustering job.
MAX_MERGE_CANDIDATES = 1000
#: Sample events (distinct feature texts) one clustering job compares in all, shared evenly among the
#: candidates; below `agentgov.ml.discovery.MAX_DISTINCT_EVENTS`, which bounds the dense distance matrix.
MERGE_REPRESENTATIVES = 1800
#: Events accepted by one `IngestEvents` message.
MAX_BATCH_EVENTS = 1000
_AGENT_NAMESPACE = uuid.UUID("5d0c6a8e-3f0b-4c55-9a57-2f1e0d7c4b11")
_EVENT_FIELDS = ("source", "host", "process", "user_agent", "endpoint", "model", "client_address")


class CandidateNotFound(Exception):
    def __init__(self, candidate_id: str) -> None:
        super().__init__(f"candidate {candidate_id} not found")


class JobNotFound(Exception):
    def __init__(self, job_id: str) -> None:
        super().__init__(f"job {job_id} not found")


# ------------------------------------------------------------------------------------------- messages


@dataclasses.dataclass(frozen=True)
class IngestEvents(Request[list[IngestResult]]):
    """Record unknown-agent events (mappings with the `UnknownAgentEvent` keys) -> one `IngestResult` each.

    `observed_at` may be a `datetime` or an ISO-8601 string (default: now).
    """

    events: tuple[Mapping[str, Any], ...]
    cluster: bool = False


@dataclasses.dataclass(frozen=True)
class ListCandidates(Request["CandidatePage"]):
    """-> `CandidatePage` (oldest first; without `status`, all but merged ones)."""

    status: str | None = None
    limit: int = 50
    offset: int = 0


@dataclasses.dataclass(frozen=True)
class GetCandidate(Request[DiscoveryCandidate]):
    candidate_id: str


@dataclasses.dataclass(frozen=True)
class ConfirmCandidate(Request["Confirmation"]):
    """Register the candidate as an agent -> `Confirmation`. Unset fields come from the candidate."""

    candidate_id: str
    name: str | None = None
    type: str | None = None
    description: str | None = None
    owner: str | None = None
    capabilities: tuple[str, ...] | None = None


@dataclasses.dataclass(frozen=True)
class DismissCandidate(Request[DiscoveryCandidate]):
    """-> the dismissed `DiscoveryCandidate` (idempotent)."""

    candidate_id: str


@dataclasses.dataclass(frozen=True)
class StartClustering(Request[DiscoveryJob]):
    """Schedule a merge of similar candidates -> the queued `DiscoveryJob`."""

    distance_threshold: float = DEFAULT_MERGE_THRESHOLD


@dataclasses.dataclass(frozen=True)
class GetJob(Request[DiscoveryJob]):
    job_id: str


@dataclasses.dataclass(frozen=True)
class WatchJob:
    """-> a `trio.Event` set when the job (running in this process) ends, or None if it is not running here."""

    job_id: str


DiscoveryMessage = (
    IngestEvents
    | ListCandidates
    | GetCandidate
    | ConfirmCandidate
    | DismissCandidate
    | StartClustering
    | GetJob
    | WatchJob
)


@dataclasses.dataclass(frozen=True)
class CandidatePage:
    items: list[DiscoveryCandidate]
    total: int


@dataclasses.dataclass(frozen=True)
class Confirmation:
    agent: Agent
    candidate: DiscoveryCandidate
    created: bool


# ------------------------------------------------------------------------------------- pure helpers


def _observed(value: Any) -> str:
    if value is None or value == "":
        return now_iso()
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if not isinstance(value, datetime):
        raise InvalidMessage("observed_at must be an ISO-8601 timestamp")
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return to_iso(value)


def suggested_name(tokens: Sequence[str]) -> str:
    """A readable name for the agent behind an event's tokens: what runs, and where."""
    first: dict[str, str] = {}
    for token in tokens:
        prefix, _, value = token.partition(":")
        first.setdefault(prefix, value)
    what = first.get("script") or first.get("exe") or first.get("ua") or first.get("model") or first.get("ephost")
    where = first.get("hostname") or first.get("ip")
    if what and where:
        return f"{what} on {where}"[:200]
    return (what or where or "unknown agent")[:200]


def prepare(raw: Mapping[str, Any]) -> PreparedEvent:
    """Derive everything ingestion stores from one event. Raises `ValueError` for a bad `observed_at`."""
    event: dict[str, Any] = {key: raw.get(key) or None for key in _EVENT_FIELDS}
    event["source"] = str(raw.get("source") or "")
    metadata = raw.get("metadata") or {}
    if not isinstance(metadata, Mapping):
        raise InvalidMessage("metadata must be an object")
    event["metadata"] = dict(metadata)
    agent_ref_id = None
    ref = metadata.get("agent_id")
    if isinstance(ref, str):
        try:
            agent_ref_id = str(uuid.UUID(ref))
        except ValueError:
            agent_ref_id = None
    name = metadata.get("agent_name")
    tokens = event_tokens(event)
    return PreparedEvent(
        event=event,
        observed_at=_observed(raw.get("observed_at")),
        fingerprint=fingerprint(event),
        feature_text=event_feature_text(event),
        suggested_name=suggested_name(tokens),
        agent_ref_id=agent_ref_id,
        agent_ref_name=name.strip() if isinstance(name, str) and name.strip() else None,
    )


def _prepare_all(events: Sequence[Mapping[str, Any]], cluster: bool) -> tuple[list[PreparedEvent], list[int] | None]:
    prepared = [prepare(e) for e in events]
    labels = cluster_events([p.event for p in prepared]) if cluster and prepared else None
    return prepared, labels


def _merge_groups(inputs: list[dict[str, Any]], threshold: float) -> list[list[str]]:
    """Run in a worker process: `merge_candidates` over plain dicts."""
    return merge_candidates(inputs, distance_threshold=threshold)


def _plain_ingest(message: DiscoveryMessage) -> bool:
    return isinstance(message, IngestEvents) and not message.cluster


def clustering_lease(tenant_id: str) -> str:
    """The lease a tenant's clustering job holds while it runs: one job per tenant at a time, in any process."""
    return f"discovery-clustering:{tenant_id}"


def agent_id_for(candidate_id: str) -> str:
    """The id the agent confirmed from `candidate_id` gets (stable, so confirming is idempotent)."""
    return str(uuid.uuid5(_AGENT_NAMESPACE, candidate_id))


# ----------------------------------------------------------------------------------------------- actor


class DiscoveryActor(Actor[DiscoveryMessage]):
    """Owns one tenant's discovery: see the module docstring."""

    max_batch = 32

    def __init__(self, services: Services, tenant_id: str) -> None:
        self.services = services
        self.tenant_id = tenant_id
        self.repo = DiscoveryRepo(services.db)
        self._jobs: dict[str, trio.Event] = {}
        self._job_lock = trio.Lock()
        self._nursery: trio.Nursery | None = None

    async def on_start(self, ctx: ActorContext) -> None:
        self._nursery = ctx.nursery

    async def handle_batch(self, messages: list[DiscoveryMessage]) -> list[Outcome]:
        """Consecutive unclustered `IngestEvents` are written in one transaction; the rest one by one."""
        outcomes: list[Outcome] = []
        i = 0
        while i < len(messages):
            j = i
            run: list[IngestEvents] = []
            while j < len(messages) and _plain_ingest(messages[j]):
                run.append(messages[j])  # type: ignore[arg-type]
                j += 1
            if len(run) > 1:
                outcomes.extend(await self._ingest_many(run))
                i = j
                continue
            try:
                outcomes.append(Value(await self.handle(messages[i])))
            except Exception as exc:
                outcomes.append(Error(exc))
            i += 1
        return outcomes

    async def handle(self, message: DiscoveryMessage) -> Any:
        match message:
            case IngestEvents(events, cluster):
                return await self._ingest(events, cluster)
            case ListCandidates(status, limit, offset):
                items, total = await self.repo.list_page(self.tenant_id, status=status, limit=limit, offset=offset)
                return CandidatePage(items, total)
            case GetCandidate(candidate_id):
                return await self._candidate(candidate_id)
            case ConfirmCandidate():
                return await self._confirm(message)
            case DismissCandidate(candidate_id):
                candidate = await self.repo.dismiss(self.tenant_id, candidate_id)
                if candidate is None:
                    raise CandidateNotFound(candidate_id)
                return candidate
            case StartClustering(threshold):
                return await self._start_clustering(threshold)
            case GetJob(job_id):
                job = await self.repo.get_job(self.tenant_id, job_id)
                if job is None:
                    raise JobNotFound(job_id)
                return job
            case WatchJob(job_id):
                return self._jobs.get(job_id)
            case _:
                raise TypeError(f"discovery does not handle {type(message).__name__}")

    # ----------------------------------------------------------------------------------------- ingest

    async def _ingest(self, events: Sequence[Mapping[str, Any]], cluster: bool) -> list[IngestResult]:
        if len(events) > MAX_BATCH_EVENTS:
            raise InvalidMessage(f"at most {MAX_BATCH_EVENTS} events per batch")
        prepared, labels = await trio.to_thread.run_sync(_prepare_all, events, cluster)
        return await self._write(prepared, labels)

    async def _ingest_many(self, messages: list[IngestEvents]) -> list[Outcome]:
        """Ingest several messages' events in one transaction; a bad message fails alone."""
        log.debug("ingesting queued messages together", extra={"tenant_id": self.tenant_id, "messages": len(messages)})
        outcomes: list[Outcome | None] = [None] * len(messages)
        prepared: list[PreparedEvent] = []
        spans: list[tuple[int, int, int]] = []
        for k, msg in enumerate(messages):
            try:
                if len(msg.events) > MAX_BATCH_EVENTS:
                    raise InvalidMessage(f"at most {MAX_BATCH_EVENTS} events per batch")
                these = [prepare(e) for e in msg.events]
            except Exception as exc:
                outcomes[k] = Error(exc)
                continue
            spans.append((k, len(prepared), len(prepared) + len(these)))
            prepared.extend(these)
        try:
            results = await self._write(prepared, None) if prepared else []
        except Exception as exc:
            for k, _, _ in spans:
                outcomes[k] = Error(exc)
        else:
            for k, start, end in spans:
                outcomes[k] = Value(results[start:end])
        return [o if o is not None else Error(RuntimeError("not handled")) for o in outcomes]

    async def _write(self, prepared: list[PreparedEvent], labels: list[int] | None) -> list[IngestResult]:
        try:
            return await self.repo.ingest(self.tenant_id, prepared, labels)
        except IntegrityError:  # another process mapped a fingerprint at the same moment: theirs stands
            return await self.repo.ingest(self.tenant_id, prepared, labels)

    # ---------------------------------------------------------------------------------------- resolve

    async def _candidate(self, candidate_id: str) -> DiscoveryCandidate:
        candidate = await self.repo.get(self.tenant_id, candidate_id)
        if candidate is None:
            raise CandidateNotFound(candidate_id)
        return candidate

    async def _confirm(self, msg: ConfirmCandidate) -> Confirmation:
        candidate = await self._candidate(msg.candidate_id)
        if candidate.status == "merged":
            raise CandidateConflict(f"the candidate was merged into {candidate.merged_into}; confirm that one")
        registry_ref = registry(self.services, self.tenant_id)
        agent_id = agent_id_for(candidate.id)
        try:
            agent = await registry_ref.ask(GetAgent(agent_id))
            created = False
        except AgentNotFound:
            name = msg.name or candidate.suggested_name
            description = msg.description if msg.description is not None else _describe(candidate)
            capabilities = msg.capabilities or ()
            agent_type = msg.type or await _predict_type(name, description, capabilities)
            agent = await registry_ref.ask(
                RegisterAgent(
                    name=name,
                    type=agent_type,
                    description=description,
                    capabilities=tuple(capabilities),
                    owner=msg.owner,
                    metadata={
                        "discovery": {
                            "candidate_id": candidate.id,
                            "fingerprints": list(candidate.fingerprints[:20]),
                            "first_seen_at": candidate.first_seen_at,
                            "last_seen_at": candidate.last_seen_at,
                        }
                    },
                    agent_id=agent_id,
                )
            )
            created = True
        if candidate.status != "confirmed" or candidate.agent_id != agent.id:
            candidate = await self.repo.mark_confirmed(self.tenant_id, candidate.id, agent.id)
        return Confirmation(agent, candidate, created)

    # ------------------------------------------------------------------------------------- clustering

    async def _start_clustering(self, threshold: float) -> DiscoveryJob:
        if not 0.0 < threshold <= 2.0:
            raise InvalidMessage("distance_threshold must be within (0, 2]")
        if self._nursery is None:
            raise RuntimeError("the discovery actor is not started")
        job = await self.repo.create_job(
            self.tenant_id, "cluster", {"distance_threshold": threshold}, owner=self.services.instance_id
        )
        self._jobs[job.id] = trio.Event()
        self._nursery.start_soon(self._run_clustering, job.id, threshold)
        return job

    async def _run_clustering(self, job_id: str, threshold: float) -> None:
        assert self._nursery is not None
        try:
            async with (
                self._job_lock,
                held_lease(
                    self.services, clustering_lease(self.tenant_id), self._nursery, heartbeat=self._heartbeat
                ) as token,
            ):
                lease = (clustering_lease(self.tenant_id), token)
                if not await self.repo.update_job(self.tenant_id, job_id, status="running", lease=lease):
                    return  # failed as orphaned while it waited (this process stalled)
                result = await self._cluster(threshold, lease)
                await self.repo.update_job(self.tenant_id, job_id, status="succeeded", result=result, lease=lease)
        except trio.Cancelled:
            with trio.move_on_after(2, shield=True):
                await self.repo.update_job(
                    self.tenant_id, job_id, status="failed", error="cancelled: the service stopped"
                )
            raise
        except Exception as exc:
            log.exception("clustering job failed", extra={"tenant_id": self.tenant_id, "job_id": job_id})
            with trio.move_on_after(5, shield=True):
                try:
                    await self.repo.update_job(self.tenant_id, job_id, status="failed", error=str(exc)[:500])
                except Exception:
                    log.exception("could not record the failure of job %s", job_id)
        finally:
            event = self._jobs.pop(job_id, None)
            if event is not None:
                event.set()

    async def _heartbeat(self) -> None:
        """This process still means to run its live jobs (also those queued behind the running one)."""
        await self.repo.heartbeat_jobs(list(self._jobs))

    async def _cluster(self, threshold: float, lease: tuple[str, int]) -> dict[str, Any]:
        inputs = await self.repo.merge_inputs(self.tenant_id, MAX_MERGE_CANDIDATES)
        status = {c["id"]: c["status"] for c in inputs}
        # share the representative budget of one merge evenly: each candidate's first distinct samples
        per_candidate = max(1, MERGE_REPRESENTATIVES // max(1, len(inputs)))
        payload = [
            {"id": c["id"], "feature_texts": list(dict.fromkeys(c["feature_texts"]))[:per_candidate]} for c in inputs
        ]
        groups: list[list[str]] = []
        if len(payload) >= 2:
            groups = await trio_parallel.run_sync(_merge_groups, payload, threshold, kill_on_cancel=True)
        merged = 0
        for group in groups:
            confirmed = [c for c in group if status[c] == "confirmed"]
            target = confirmed[0] if confirmed else group[0]
            sources = [c for c in group if status[c] == "pending" and c != target]
            if sources:
                merged += len(await self.repo.merge(self.tenant_id, target, sources, lease=lease))
        return {"candidates_considered": len(inputs), "groups": len(groups), "candidates_merged": merged}


async def _predict_type(name: str, description: str, capabilities: Sequence[str]) -> str:
    def predict() -> str:
        label, _ = default_type_classifier().predict(name, description, list(capabilities))
        return str(label)

    return await trio.to_thread.run_sync(predict)


def _describe(candidate: DiscoveryCandidate) -> str:
    parts = [f"Discovered from {candidate.event_count} unknown-agent events"]
    summary = candidate.summary
    if summary.get("endpoints"):
        parts.append("calling " + ", ".join(summary["endpoints"][:3]))
    if summary.get("hosts"):
        parts.append("on " + ", ".join(summary["hosts"][:3]))
    if summary.get("models"):
        parts.append("using " + ", ".join(summary["models"][:3]))
    return (" ".join(parts) + ".")[:4000]


def discovery(services: Services, tenant_id: str) -> ActorRef[DiscoveryMessage]:
    """The tenant's discovery actor (`discovery:<tenant_id>`), spawned on first use."""
    return services.actors.get_or_spawn(f"discovery:{tenant_id}", lambda: DiscoveryActor(services, tenant_id))


__all__ = [
    "CandidateConflict",
    "CandidateNotFound",
    "CandidatePage",
    "ConfirmCandidate",
    "Confirmation",
    "DiscoveryActor",
    "DismissCandidate",
    "GetCandidate",
    "GetJob",
    "IngestEvents",
    "JobNotFound",
    "ListCandidates",
    "StartClustering",
    "WatchJob",
    "discovery",
]
