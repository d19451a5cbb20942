"""The agent record and its repository (table `agents`, `agent_embeddings`; migration m0003)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from typing import Any

from agentgov.storage.database import Connection, Database, Row, in_list

AGENT_TYPES = ("llm", "tool", "workflow", "custom")
AGENT_STATUSES = ("active", "inactive", "error")


@dataclasses.dataclass(frozen=True)
class Agent:
    """One registered agent of one tenant. Immutable: updates produce a new record."""

    id: str
    tenant_id: str
    name: str
    type: str
    description: str
    capabilities: tuple[str, ...]
    owner: str | None
    metadata: dict[str, Any]
    status: str
    risk_score: float | None
    predicted_type: str | None
    predicted_type_confidence: float | None
    last_heartbeat_at: str | None
    created_at: str
    updated_at: str

    def to_public(self) -> dict[str, Any]:
        """The JSON shape of an agent in API answers (no tenant id)."""
        return {
            "id": self.id,
            "name": self.name,
            "type": self.type,
            "description": self.description,
            "capabilities": list(self.capabilities),
            "owner": self.owner,
            "metadata": dict(self.metadata),
            "status": self.status,
            "predicted_type": self.predicted_type,
            "predicted_type_confidence": self.predicted_type_confidence,
            "risk_score": self.risk_score,
            "last_heartbeat_at": self.last_heartbeat_at,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }

    @classmethod
    def from_row(cls, row: Row) -> Agent:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            name=row["name"],
            type=row["type"],
            description=row["description"],
            capabilities=tuple(json.loads(row["capabilities"])),
            owner=row["owner"],
            metadata=json.loads(row["metadata"]),
            status=row["status"],
            risk_score=None if row["risk_score"] is None else float(row["risk_score"]),
            predicted_type=row["predicted_type"],
            predicted_type_confidence=(
                None if row["predicted_type_confidence"] is None else float(row["predicted_type_confidence"])
            ),
            last_heartbeat_at=row["last_heartbeat_at"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )


@dataclasses.dataclass(frozen=True)
class StoredEmbedding:
    """One agent's stored vector and what it was computed from."""

    agent_id: str
    model: str
    dimension: int
    content_hash: str
    vector: bytes
    updated_at: str


@dataclasses.dataclass(frozen=True)
class EmbeddingSummary:
    """What `GET /agents/{id}/details` shows about an agent's embedding (no vector)."""

    model: str | None
    dimension: int | None
    updated_at: str | None
    stale: bool
    content_hash: str | None

    def to_public(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "dimension": self.dimension,
            "updated": self.updated_at,
            "stale": self.stale,
            "content_hash": self.content_hash,
        }


@dataclasses.dataclass(frozen=True)
class ActivityCounts:
    """Audit-trail activity of one agent. `available` is False while the audit trail has no table."""

    available: bool
    total: int
    last_24h: int
    last_7d: int
    last_activity_at: str | None

    def to_public(self) -> dict[str, Any]:
        return {
            "available": self.available,
            "total": self.total,
            "last_24h": self.last_24h,
            "last_7d": self.last_7d,
            "last_activity_at": self.last_activity_at,
        }


# ------------------------------------------------------------------------------------------ repository

_COLUMNS = (
    "id, tenant_id, name, type, description, capabilities, owner, metadata, status, risk_score, "
    "predicted_type, predicted_type_confidence, last_heartbeat_at, created_at, updated_at"
)
_A_COLUMNS = ", ".join(f"a.{c.strip()}" for c in _COLUMNS.split(","))


def _bump_generation(conn: Connection, tenant_id: str) -> int:
    """Count one more change of the tenant's registry; return the new generation."""
    conn.execute(
        """INSERT INTO agent_registry_state (tenant_id, generation) VALUES (:t, 1)
           ON CONFLICT (tenant_id) DO UPDATE SET generation = agent_registry_state.generation + 1""",
        {"t": tenant_id},
    )
    return int(conn.scalar("SELECT generation FROM agent_registry_state WHERE tenant_id = :t", {"t": tenant_id}))


def _generation(conn: Connection, tenant_id: str) -> int:
    value = conn.scalar("SELECT generation FROM agent_registry_state WHERE tenant_id = :t", {"t": tenant_id})
    return 0 if value is None else int(value)


def _row_params(agent: Agent, text_hash: str) -> dict[str, Any]:
    return {
        "id": agent.id,
        "tenant_id": agent.tenant_id,
        "name": agent.name,
        "name_key": agent.name.strip().lower(),
        "type": agent.type,
        "description": agent.description,
        "capabilities": json.dumps(list(agent.capabilities)),
        "owner": agent.owner,
        "metadata": json.dumps(agent.metadata),
        "status": agent.status,
        "risk_score": agent.risk_score,
        "predicted_type": agent.predicted_type,
        "predicted_type_confidence": agent.predicted_type_confidence,
        "text_hash": text_hash,
        "last_heartbeat_at": agent.last_heartbeat_at,
        "created_at": agent.created_at,
        "updated_at": agent.updated_at,
    }


def _get(conn: Connection, tenant_id: str, agent_id: str) -> Agent | None:
    row = conn.fetchone(
        f"SELECT {_COLUMNS} FROM agents WHERE tenant_id = :t AND id = :id", {"t": tenant_id, "id": agent_id}
    )
    return None if row is None else Agent.from_row(row)


class AgentRepo:
    """Persistence of agents and their embeddings. Every call is one transaction, filtered by tenant.

    Writes that change what search ranks (insert, update, delete, saved embeddings) also advance the
    tenant's registry generation and return it, so an in-memory copy of the embeddings can tell whether
    anything else changed the registry meanwhile. Raises `DatabaseError` when the database fails.
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    async def insert(self, agent: Agent, text_hash: str) -> int:
        """Store a new agent; return the new generation."""

        def run(conn: Connection) -> int:
            conn.execute(
                """INSERT INTO agents (id, tenant_id, name, name_key, type, description, capabilities, owner,
                       metadata, status, risk_score, predicted_type, predicted_type_confidence, text_hash,
                       last_heartbeat_at, created_at, updated_at)
                   VALUES (:id, :tenant_id, :name, :name_key, :type, :description, :capabilities, :owner,
                       :metadata, :status, :risk_score, :predicted_type, :predicted_type_confidence,
                       :text_hash, :last_heartbeat_at, :created_at, :updated_at)""",
                _row_params(agent, text_hash),
            )
            return _bump_generation(conn, agent.tenant_id)

        return await self.db.write(run)

    async def replace(self, agent: Agent, text_hash: str) -> int | None:
        """Overwrite every field of an existing agent; the new generation, or None if it is gone."""

        def run(conn: Connection) -> int | None:
            changed = conn.execute(
                """UPDATE agents SET name = :name, name_key = :name_key, type = :type,
                       description = :description, capabilities = :capabilities, owner = :owner,
                       metadata = :metadata, status = :status, risk_score = :risk_score,
                       predicted_type = :predicted_type, predicted_type_confidence = :predicted_type_confidence,
                       text_hash = :text_hash, last_heartbeat_at = :last_heartbeat_at,
                       updated_at = :updated_at
                   WHERE tenant_id = :tenant_id AND id = :id""",
                _row_params(agent, text_hash),
            )
            return _bump_generation(conn, agent.tenant_id) if changed else None

        return await self.db.write(run)

    async def get(self, tenant_id: str, agent_id: str) -> Agent | None:
        return await self.db.read(lambda conn: _get(conn, tenant_id, agent_id))

    async def get_many(self, tenant_id: str, agent_ids: Sequence[str]) -> dict[str, Agent]:
        """The agents among `agent_ids` that exist in this tenant, by id."""
        if not agent_ids:
            return {}
        placeholders, params = in_list("id", agent_ids)
        rows = await self.db.read(
            lambda conn: conn.fetchall(
                f"SELECT {_COLUMNS} FROM agents WHERE tenant_id = :t AND id IN ({placeholders})",
                {"t": tenant_id, **params},
            )
        )
        return {row["id"]: Agent.from_row(row) for row in rows}

    async def list_page(
        self, tenant_id: str, *, agent_type: str | None, status: str | None, limit: int, offset: int
    ) -> tuple[list[Agent], int]:
        """A page of agents (oldest first) matching the filters, and how many match in all."""
        where = "tenant_id = :t"
        params: dict[str, Any] = {"t": tenant_id, "limit": limit, "offset": offset}
        if agent_type is not None:
            where += " AND type = :type"
            params["type"] = agent_type
        if status is not None:
            where += " AND status = :status"
            params["status"] = status

        def run(conn: Connection) -> tuple[list[Agent], int]:
            total = int(conn.scalar(f"SELECT COUNT(*) FROM agents WHERE {where}", params))
            rows = conn.fetchall(
                f"""SELECT {_COLUMNS} FROM agents WHERE {where}
                    ORDER BY created_at, id LIMIT :limit OFFSET :offset""",
                params,
            )
            return [Agent.from_row(r) for r in rows], total

        return await self.db.read(run)

    async def delete(self, tenant_id: str, agent_id: str) -> int | None:
        """Delete the agent and its embedding; the new generation, or None if there was no such agent."""

        def run(conn: Connection) -> int | None:
            params = {"t": tenant_id, "id": agent_id}
            if not conn.execute("DELETE FROM agents WHERE tenant_id = :t AND id = :id", params):
                return None
            conn.execute("DELETE FROM agent_embeddings WHERE tenant_id = :t AND agent_id = :id", params)
            return _bump_generation(conn, tenant_id)

        return await self.db.write(run)

    async def heartbeat(self, tenant_id: str, agent_id: str, status: str | None, at: str) -> Agent | None:
        """Record a heartbeat (and a status if given); the updated agent, or None if there is none.

        `updated_at` moves only when the status changes.
        """

        def run(conn: Connection) -> Agent | None:
            current = _get(conn, tenant_id, agent_id)
            if current is None:
                return None
            new_status = status or current.status
            updated_at = at if new_status != current.status else current.updated_at
            conn.execute(
                """UPDATE agents SET last_heartbeat_at = :at, status = :status, updated_at = :updated_at
                   WHERE tenant_id = :t AND id = :id""",
                {"at": at, "status": new_status, "updated_at": updated_at, "t": tenant_id, "id": agent_id},
            )
            return dataclasses.replace(current, last_heartbeat_at=at, status=new_status, updated_at=updated_at)

        return await self.db.write(run)

    async def set_risk_score(self, tenant_id: str, agent_id: str, risk_score: float | None) -> Agent | None:
        """Store the agent's current risk score; the updated agent, or None if there is none."""

        def run(conn: Connection) -> Agent | None:
            conn.execute(
                "UPDATE agents SET risk_score = :r WHERE tenant_id = :t AND id = :id",
                {"r": risk_score, "t": tenant_id, "id": agent_id},
            )
            return _get(conn, tenant_id, agent_id)

        return await self.db.write(run)

    # ------------------------------------------------------------------------------------ embeddings

    async def generation(self, tenant_id: str) -> int:
        """The tenant's registry generation (0 before the first change)."""
        return await self.db.read(lambda conn: _generation(conn, tenant_id))

    async def needing_embedding(
        self, tenant_id: str, model: str, agent_ids: Sequence[str] | None = None
    ) -> list[tuple[Agent, str]]:
        """(agent, its current text hash) for each agent whose embedding is missing or stale.

        Stale means: made by another model, or from a text other than the agent's current one. With
        `agent_ids`, only those agents are considered.
        """
        where = "a.tenant_id = :t AND (e.agent_id IS NULL OR e.text_hash <> a.text_hash)"
        params: dict[str, Any] = {"t": tenant_id, "m": model}
        if agent_ids is not None:
            if not agent_ids:
                return []
            placeholders, more = in_list("id", agent_ids)
            where += f" AND a.id IN ({placeholders})"
            params.update(more)
        rows = await self.db.read(
            lambda conn: conn.fetchall(
                f"""SELECT {_A_COLUMNS}, a.text_hash AS current_text_hash FROM agents a
                    LEFT JOIN agent_embeddings e
                      ON e.tenant_id = a.tenant_id AND e.agent_id = a.id AND e.model = :m
                    WHERE {where} ORDER BY a.created_at, a.id""",
                params,
            )
        )
        return [(Agent.from_row(r), r["current_text_hash"]) for r in rows]

    async def save_embeddings(
        self, tenant_id: str, embeddings: Sequence[StoredEmbedding], text_hashes: Sequence[str]
    ) -> tuple[list[str], int]:
        """Store each embedding whose agent still has the text it was computed from (`text_hashes[i]`).

        Returns the ids stored and the tenant's generation afterwards (advanced if anything was stored).
        """

        def run(conn: Connection) -> tuple[list[str], int]:
            saved = []
            for emb, text_hash in zip(embeddings, text_hashes, strict=True):
                params = {"t": tenant_id, "id": emb.agent_id}
                current = conn.scalar("SELECT text_hash FROM agents WHERE tenant_id = :t AND id = :id", params)
                if current != text_hash:
                    continue
                conn.execute("DELETE FROM agent_embeddings WHERE tenant_id = :t AND agent_id = :id", params)
                conn.execute(
                    """INSERT INTO agent_embeddings (tenant_id, agent_id, model, dimension, content_hash,
                           text_hash, vector, updated_at)
                       VALUES (:t, :id, :model, :dimension, :content_hash, :text_hash, :vector, :updated_at)""",
                    {
                        **params,
                        "model": emb.model,
                        "dimension": emb.dimension,
                        "content_hash": emb.content_hash,
                        "text_hash": text_hash,
                        "vector": emb.vector,
                        "updated_at": emb.updated_at,
                    },
                )
                saved.append(emb.agent_id)
            generation = _bump_generation(conn, tenant_id) if saved else _generation(conn, tenant_id)
            return saved, generation

        return await self.db.write(run)

    async def load_embeddings(self, tenant_id: str, model: str) -> tuple[int, list[tuple[str, bytes]]]:
        """The generation and every stored (agent id, vector) of `model` in this tenant, read together."""

        def run(conn: Connection) -> tuple[int, list[tuple[str, bytes]]]:
            generation = _generation(conn, tenant_id)
            rows = conn.fetchall(
                """SELECT agent_id, vector FROM agent_embeddings WHERE tenant_id = :t AND model = :m
                   ORDER BY agent_id""",
                {"t": tenant_id, "m": model},
            )
            return generation, [(r["agent_id"], bytes(r["vector"])) for r in rows]

        return await self.db.read(run)

    async def embedding_summary(self, tenant_id: str, agent_id: str, model: str) -> EmbeddingSummary:
        """The agent's stored embedding as details show it; `stale` if missing, of another model or text."""

        def run(conn: Connection) -> EmbeddingSummary:
            row = conn.fetchone(
                """SELECT e.model, e.dimension, e.updated_at, e.content_hash, e.text_hash,
                          a.text_hash AS current_text_hash
                   FROM agents a LEFT JOIN agent_embeddings e ON e.tenant_id = a.tenant_id AND e.agent_id = a.id
                   WHERE a.tenant_id = :t AND a.id = :id""",
                {"t": tenant_id, "id": agent_id},
            )
            if row is None or row["model"] is None:
                return EmbeddingSummary(None, None, None, True, None)
            stale = row["model"] != model or row["text_hash"] != row["current_text_hash"]
            return EmbeddingSummary(row["model"], int(row["dimension"]), row["updated_at"], stale, row["content_hash"])

        return await self.db.read(run)

    async def activity(self, tenant_id: str, agent_id: str, since_24h: str, since_7d: str) -> ActivityCounts:
        """Counts of the agent's audit entries; `available=False` until the audit trail's table exists."""

        def exists(conn: Connection) -> bool:
            if conn.dialect == "postgres":
                sql = (
                    "SELECT COUNT(*) FROM information_schema.tables "
                    "WHERE table_schema = current_schema() AND table_name = 'audit_entries'"
                )
            else:
                sql = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit_entries'"
            return bool(conn.scalar(sql))

        def run(conn: Connection) -> ActivityCounts:
            if not exists(conn):
                return ActivityCounts(False, 0, 0, 0, None)
            row = conn.fetchone(
                """SELECT COUNT(*) AS total,
                          SUM(CASE WHEN created_at >= :d1 THEN 1 ELSE 0 END) AS last_24h,
                          SUM(CASE WHEN created_at >= :d7 THEN 1 ELSE 0 END) AS last_7d,
                          MAX(created_at) AS last_at
                   FROM audit_entries WHERE tenant_id = :t AND agent_id = :a""",
                {"t": tenant_id, "a": agent_id, "d1": since_24h, "d7": since_7d},
            )
            assert row is not None
            return ActivityCounts(
                True,
                int(row["total"] or 0),
                int(row["last_24h"] or 0),
                int(row["last_7d"] or 0),
                None if row["last_at"] is None else str(row["last_at"]),
            )

        return await self.db.read(run)
