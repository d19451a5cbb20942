"""The per-tenant agent registry actor (`registry:<tenant_id>`): agents, predicted types, semantic search.

Interface used by other modules::

    ref = registry(services, tenant_id)          # started on first use, stops itself when idle
    agent = await ref.ask(GetAgent(agent_id))    # -> Agent; AgentNotFound if unknown in this tenant
    agent = await ref.ask(Heartbeat(agent_id, status="error"))
        # -> the updated Agent; AgentNotFound, or ValueError if status is not active|inactive|error

The other messages (declared in `agentgov.actors.registry_messages`, re-exported here) are `RegisterAgent`,
`UpdateAgent`, `DeleteAgent`, `ListAgents`, `SearchAgents`, `GetAgentDetails` and `SetRiskScore`. Invalid
input in a message raises `ValueError` (the HTTP layer validates first, so this only guards other callers).
`ask` also raises the runtime's `MailboxFull` / `ActorStopped`, and storage's `DatabaseError`.

State. The database is the source of truth for agents: reads go to it, so several processes sharing one
database see each other's changes. The exception is the agent lookup: `GetAgent` answers from, and
fills, `RecentAgents`, a view the actor publishes so that checks and audit writes look agents up without
a message (`lookup_agent`); an entry lives `AGENT_CACHE_SECONDS`, and the actor clears the view before
and after each of its writes. The actor keeps only a cache of the tenant's embedding
vectors for search, tagged with the tenant's registry *generation* (a counter every write that changes
what search ranks advances, in the same transaction). A search first compares the stored generation
with the cached one; when another process changed the registry, it embeds whatever is missing or stale
and reloads the vectors. After its own writes the actor updates the cache in place when the new
generation is exactly one more than the cached one, and otherwise drops the cache.

Embeddings. Registration and updates do not wait for the model: the agent's id goes to a pending set
that a background task (in the actor's nursery) embeds in a worker thread and stores with the model
name, dimension and content hash. A search first embeds what is still pending (under the same lock as
the background task, so it waits for a batch in flight), so an agent is found right after it is
registered. A heartbeat re-embeds the agent at once if its stored embedding is stale (missing, made by
another model, or from a text the agent no longer has), or queues it when a batch is being embedded.

Cancellation. Cancelling a caller's `ask` abandons the reply; the message is still handled. Database
calls and model inference run in worker threads that are waited for, never abandoned, so a write is
committed or rolled back as a whole. When the actor stops (idle timeout or shutdown) the background
embedding task is cancelled after its current batch; pending ids are forgotten, and the next search
(which starts with an empty cache) finds and embeds those agents from the database.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import uuid
from collections.abc import Mapping, Sequence
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import trio

from agentgov.actors.registry_messages import (
    AgentDetails,
    AgentNotFound,
    AgentPage,
    DeleteAgent,
    GetAgent,
    GetAgentDetails,
    Heartbeat,
    ListAgents,
    RegisterAgent,
    RegistryMessage,
    SearchAgents,
    SearchHit,
    SetRiskScore,
    UpdateAgent,
)
from agentgov.actors.runtime import Actor, ActorContext, ActorRef, InvalidMessage
from agentgov.ml.agent_type import default_type_classifier
from agentgov.ml.embedding import (
    Embedder,
    agent_text,
    content_hash,
    default_embedder,
    from_bytes,
    to_bytes,
)
from agentgov.ml.embedding.index import VectorIndex
from agentgov.storage.agents import (
    AGENT_STATUSES,
    AGENT_TYPES,
    Agent,
    AgentRepo,
    StoredEmbedding,
)
from agentgov.storage.database import IntegrityError
from agentgov.timeutil import now, now_iso, to_iso

if TYPE_CHECKING:
    from agentgov.services import Services

log = logging.getLogger("agentgov.registry")

#: Texts embedded per model call (and per transaction storing them).
EMBED_BATCH = 64
#: Seconds the background task waits before retrying after a failure (e.g. the database is down).
RETRY_DELAY = 2.0
#: Fields `UpdateAgent.changes` may hold.
UPDATABLE_FIELDS = frozenset({"name", "type", "description", "capabilities", "owner", "metadata", "status"})
_TEXT_FIELDS = frozenset({"name", "type", "description", "capabilities", "owner"})
_DAY = timedelta(days=1)


# ------------------------------------------------------------------------------------- pure helpers


def embedding_text(agent: Agent) -> str:
    """The text an agent is embedded as (its name, type, description, capabilities and owner)."""
    return agent_text(
        name=agent.name,
        agent_type=agent.type,
        description=agent.description,
        capabilities=agent.capabilities,
        owner=agent.owner or "",
    )


def text_hash(agent: Agent) -> str:
    """A model-independent hash of the agent's embedding text: it changes exactly when the text does."""
    return hashlib.sha256(embedding_text(agent).encode("utf-8", "surrogatepass")).hexdigest()


def _check_type(value: Any) -> str:
    if value not in AGENT_TYPES:
        raise InvalidMessage(f"type must be one of {', '.join(AGENT_TYPES)}, got {value!r}")
    return str(value)


def _check_status(value: Any) -> str:
    if value not in AGENT_STATUSES:
        raise InvalidMessage(f"status must be one of {', '.join(AGENT_STATUSES)}, got {value!r}")
    return str(value)


def _check_name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidMessage("name must be a non-blank string")
    return value.strip()


def _check_capabilities(value: Any) -> tuple[str, ...]:
    if isinstance(value, str) or not all(isinstance(c, str) for c in value):
        raise InvalidMessage("capabilities must be a list of strings")
    return tuple(dict.fromkeys(c.strip() for c in value if c.strip()))


def _check_risk(value: float | None) -> float | None:
    if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise InvalidMessage("risk_score must be between 0.0 and 1.0")
    return value


# ----------------------------------------------------------------------------------------------- actor


#: How long a looked-up agent may be served from memory (bounds staleness across processes).
AGENT_CACHE_SECONDS = 1.0
AGENT_CACHE_SIZE = 10_000


class RecentAgents:
    """Agents the tenant's registry actor read recently: a view it publishes for lookups without a message.

    Only the registry actor writes it (on reads from the database, and by clearing it around its own
    writes); any task may call `get`. An entry is served for `AGENT_CACHE_SECONDS` after it was read, so a
    write made by another process sharing the database is seen within that time, and a write made through
    this process's actor is seen as soon as the write is answered.
    """

    def __init__(self) -> None:
        self._items: dict[str, tuple[float, Agent]] = {}

    def get(self, agent_id: str) -> Agent | None:
        """The agent if it was read less than `AGENT_CACHE_SECONDS` ago, else None."""
        cached = self._items.get(agent_id)
        if cached is not None and trio.current_time() - cached[0] < AGENT_CACHE_SECONDS:
            return cached[1]
        return None

    def put(self, agent: Agent) -> None:
        if len(self._items) >= AGENT_CACHE_SIZE:
            self._items.clear()
        self._items[agent.id] = (trio.current_time(), agent)

    def drop(self, agent_id: str) -> None:
        self._items.pop(agent_id, None)

    def clear(self) -> None:
        self._items.clear()


async def lookup_agent(services: Services, tenant_id: str, agent_id: str) -> Agent:
    """The agent, from the published view when fresh, else asked of the registry actor.

    Raises `AgentNotFound`, and the runtime's `MailboxFull` / `ActorStopped`.
    """
    recent = services.actors.view(f"registry:{tenant_id}", RecentAgents)
    agent = None if recent is None else recent.get(agent_id)
    if agent is None:
        agent = await registry(services, tenant_id).ask(GetAgent(agent_id))
    return agent


class RegistryActor(Actor[RegistryMessage]):
    """Owns one tenant's registry: see the module docstring."""

    def __init__(
        self,
        tenant_id: str,
        repo: AgentRepo,
        embedder: Embedder | None = None,
    ) -> None:
        self.tenant_id = tenant_id
        self.repo = repo
        self.embedder: Embedder = embedder or default_embedder()
        self._index = VectorIndex()  # the tenant's embeddings, as of `_generation`
        self._generation: int | None = None  # the registry generation the cached vectors reflect
        self._pending: set[str] = set()
        self._recent = RecentAgents()  # published for lookups without a message, see _get
        self._wakeup = trio.Event()
        self._embed_lock = trio.Lock()

    async def on_start(self, ctx: ActorContext) -> None:
        ctx.publish(self._recent)
        ctx.nursery.start_soon(self._embed_in_background)

    async def handle(self, message: RegistryMessage) -> Any:
        if isinstance(message, GetAgent | ListAgents | SearchAgents | GetAgentDetails):
            return await self._read(message)
        # A write: nothing read before it (including by the write itself) may be served after it.
        self._recent.clear()
        try:
            return await self._write(message)
        finally:
            self._recent.clear()

    async def _read(self, message: GetAgent | ListAgents | SearchAgents | GetAgentDetails) -> Any:
        match message:
            case GetAgent(agent_id):
                return await self._get(agent_id)
            case ListAgents(agent_type, status, limit, offset):
                items, total = await self.repo.list_page(
                    self.tenant_id, agent_type=agent_type, status=status, limit=limit, offset=offset
                )
                return AgentPage(items, total)
            case SearchAgents(query, limit):
                return await self._search(query, limit)
            case GetAgentDetails(agent_id):
                return await self._details(agent_id)
        raise TypeError(f"not a read: {type(message).__name__}")

    async def _write(self, message: RegistryMessage) -> Any:
        match message:
            case Heartbeat(agent_id, status):
                return await self._heartbeat(agent_id, status)
            case RegisterAgent():
                return await self._register(message)
            case UpdateAgent(agent_id, changes):
                return await self._update(agent_id, changes)
            case DeleteAgent(agent_id):
                return await self._delete(agent_id)
            case SetRiskScore(agent_id, risk_score):
                agent = await self.repo.set_risk_score(self.tenant_id, agent_id, _check_risk(risk_score))
                if agent is None:
                    raise AgentNotFound(agent_id)
                return agent
            case _:
                raise TypeError(f"the registry does not handle {type(message).__name__}")

    # --------------------------------------------------------------------------------------- handlers

    async def _get(self, agent_id: str) -> Agent:
        """The agent, from a read at most `AGENT_CACHE_SECONDS` old.

        Policy checks and audit writes look agents up on every request; serving repeated lookups from
        memory saves a database round trip each. Writes through this actor clear the cache at once, so
        in this process a read never returns an agent older than the last write; a write made by another
        process sharing the database is seen within `AGENT_CACHE_SECONDS`.
        """
        cached = self._recent.get(agent_id)
        if cached is not None:
            return cached
        agent = await self.repo.get(self.tenant_id, agent_id)
        if agent is None:
            self._recent.drop(agent_id)
            raise AgentNotFound(agent_id)
        self._recent.put(agent)
        return agent

    async def _register(self, msg: RegisterAgent) -> Agent:
        if msg.agent_id is not None:
            agent_id = str(uuid.UUID(msg.agent_id))
            existing = await self.repo.get(self.tenant_id, agent_id)
            if existing is not None:
                return existing
        else:
            agent_id = str(uuid.uuid4())
        stamp = now_iso()
        agent = Agent(
            id=agent_id,
            tenant_id=self.tenant_id,
            name=_check_name(msg.name),
            type=_check_type(msg.type),
            description=(msg.description or "").strip(),
            capabilities=_check_capabilities(msg.capabilities),
            owner=msg.owner,
            metadata=dict(msg.metadata),
            status=_check_status(msg.status),
            risk_score=None,
            predicted_type=None,
            predicted_type_confidence=None,
            last_heartbeat_at=None,
            created_at=stamp,
            updated_at=stamp,
        )
        agent = await self._with_prediction(agent)
        try:
            generation = await self.repo.insert(agent, text_hash(agent))
        except IntegrityError:
            existing = await self.repo.get(self.tenant_id, agent_id) if msg.agent_id is not None else None
            if existing is None:  # the id is taken in another tenant (or a fresh uuid4 collided)
                raise InvalidMessage(f"agent id {agent_id} is not available") from None
            return existing
        self._advance(generation, lambda: None)
        self._queue(agent.id)
        return agent

    async def _update(self, agent_id: str, changes: Mapping[str, Any]) -> Agent:
        unknown = set(changes) - UPDATABLE_FIELDS
        if unknown:
            raise InvalidMessage(f"cannot update {', '.join(sorted(unknown))}")
        current = await self._get(agent_id)
        fields: dict[str, Any] = {}
        for key, value in changes.items():
            if key == "name":
                fields[key] = _check_name(value)
            elif key == "type":
                fields[key] = _check_type(value)
            elif key == "status":
                fields[key] = _check_status(value)
            elif key == "capabilities":
                fields[key] = _check_capabilities(value)
            elif key == "description":
                fields[key] = (value or "").strip()
            elif key == "metadata":
                fields[key] = dict(value or {})
            else:
                fields[key] = value
        updated = dataclasses.replace(current, **fields, updated_at=now_iso())
        if _TEXT_FIELDS & set(fields):
            updated = await self._with_prediction(updated)
        generation = await self.repo.replace(updated, text_hash(updated))
        if generation is None:
            raise AgentNotFound(agent_id)
        self._advance(generation, lambda: None)
        if text_hash(updated) != text_hash(current):
            self._queue(agent_id)
        return updated

    async def _delete(self, agent_id: str) -> None:
        generation = await self.repo.delete(self.tenant_id, agent_id)
        if generation is None:
            raise AgentNotFound(agent_id)
        self._pending.discard(agent_id)
        self._advance(generation, lambda: self._index.forget(agent_id))

    async def _heartbeat(self, agent_id: str, status: str | None) -> Agent:
        if status is not None:
            _check_status(status)
        agent = await self.repo.heartbeat(self.tenant_id, agent_id, status, now_iso())
        if agent is None:
            raise AgentNotFound(agent_id)
        if self._embed_lock.locked():  # a batch is being embedded: don't wait for it, queue this one
            self._queue(agent_id)
            return agent
        async with self._embed_lock:
            stale = await self.repo.needing_embedding(self.tenant_id, self.embedder.model_name, [agent_id])
            if stale:
                await self._embed_and_save(stale)
                self._pending.discard(agent_id)
        return agent

    async def _details(self, agent_id: str) -> AgentDetails:
        agent = await self._get(agent_id)
        summary = await self.repo.embedding_summary(self.tenant_id, agent_id, self.embedder.model_name)
        moment = now()
        activity = await self.repo.activity(
            self.tenant_id,
            agent_id,
            since_24h=to_iso(moment - _DAY),
            since_7d=to_iso(moment - 7 * _DAY),
        )
        return AgentDetails(agent, summary, activity)

    async def _search(self, query: str, limit: int) -> list[SearchHit]:
        if not query.strip():
            raise InvalidMessage("the search query must not be blank")
        if limit < 1:
            raise InvalidMessage("limit must be at least 1")
        await self._sync()
        vector = (await trio.to_thread.run_sync(self.embedder.embed, [query]))[0]
        hits = self._index.search(vector, limit)
        agents = await self.repo.get_many(self.tenant_id, [agent_id for agent_id, _ in hits])
        return [SearchHit(agents[a], round(score, 6)) for a, score in hits if a in agents]

    # ------------------------------------------------------------------------------------- embeddings

    async def _with_prediction(self, agent: Agent) -> Agent:
        """The agent with `predicted_type` from the classifier (trained on first use, in a thread)."""

        def predict() -> tuple[str, float]:
            label, confidence = default_type_classifier().predict(
                agent.name, agent.description, list(agent.capabilities)
            )
            return str(label), float(confidence)

        label, confidence = await trio.to_thread.run_sync(predict)
        return dataclasses.replace(agent, predicted_type=label, predicted_type_confidence=round(confidence, 4))

    def _queue(self, agent_id: str) -> None:
        self._pending.add(agent_id)
        self._wakeup.set()

    async def _embed_in_background(self) -> None:
        """Embed pending agents as they are queued; failures are logged and retried."""
        while True:
            await self._wakeup.wait()
            self._wakeup = trio.Event()
            try:
                async with self._embed_lock:
                    await self._flush_pending()
            except Exception:
                log.exception("embedding agents failed; retrying", extra={"tenant_id": self.tenant_id})
                await trio.sleep(RETRY_DELAY)
                self._wakeup.set()

    async def _flush_pending(self) -> None:
        """Embed and store every pending agent (caller holds the lock). Ids leave the set once stored."""
        while self._pending:
            batch = sorted(self._pending)[:EMBED_BATCH]
            items = await self.repo.needing_embedding(self.tenant_id, self.embedder.model_name, batch)
            if items:
                await self._embed_and_save(items)
            self._pending.difference_update(batch)

    async def _sync(self) -> None:
        """Bring the cached vectors up to date with the database (embedding what is missing or stale)."""
        async with self._embed_lock:
            await self._flush_pending()
            generation = await self.repo.generation(self.tenant_id)
            if generation == self._generation:
                return
            model = self.embedder.model_name
            stale = await self.repo.needing_embedding(self.tenant_id, model)
            for start in range(0, len(stale), EMBED_BATCH):
                await self._embed_and_save(stale[start : start + EMBED_BATCH])
            generation, rows = await self.repo.load_embeddings(self.tenant_id, model)
            dim = self.embedder.dimension
            self._index.replace({agent_id: from_bytes(blob, dim) for agent_id, blob in rows})
            self._generation = generation

    async def _embed_and_save(self, items: Sequence[tuple[Agent, str]]) -> None:
        model = self.embedder.model_name
        texts = [embedding_text(agent) for agent, _ in items]
        vectors = await trio.to_thread.run_sync(self.embedder.embed, texts)
        stamp = now_iso()
        stored = [
            StoredEmbedding(
                agent_id=agent.id,
                model=model,
                dimension=int(vector.shape[0]),
                content_hash=content_hash(text, model_name=model),
                vector=to_bytes(vector),
                updated_at=stamp,
            )
            for (agent, _), text, vector in zip(items, texts, vectors, strict=True)
        ]
        saved, generation = await self.repo.save_embeddings(self.tenant_id, stored, [hash_ for _, hash_ in items])
        by_id = {agent.id: vector for (agent, _), vector in zip(items, vectors, strict=True)}

        self._advance(generation, lambda: self._index.put({agent_id: by_id[agent_id] for agent_id in saved}))

    def _advance(self, generation: int, apply: Any) -> None:
        """After an own write that left the registry at `generation`: update the cache or drop it."""
        if self._generation is None or generation == self._generation:
            return
        if generation == self._generation + 1:
            apply()
            self._generation = generation
        else:  # another process changed the registry meanwhile: reload on the next search
            self._generation = None
            self._index.clear()


def registry(services: Services, tenant_id: str) -> ActorRef[RegistryMessage]:
    """The tenant's registry actor (`registry:<tenant_id>`), spawned on first use."""
    return services.actors.get_or_spawn(
        f"registry:{tenant_id}",
        lambda: RegistryActor(tenant_id, AgentRepo(services.db)),
    )


__all__ = [
    "Agent",
    "AgentDetails",
    "AgentNotFound",
    "AgentPage",
    "DeleteAgent",
    "GetAgent",
    "GetAgentDetails",
    "Heartbeat",
    "ListAgents",
    "RegisterAgent",
    "RegistryActor",
    "SearchAgents",
    "SearchHit",
    "SetRiskScore",
    "UpdateAgent",
    "registry",
]
