"""Policy documents with full version history, @id uniqueness and the per-tenant policy-set generation.

Contract
--------
* Every write (create, update, delete, default-decision change) runs in one transaction that also appends a
  row to ``policy_versions`` (documents only) and bumps the tenant's generation in ``policy_generations``.
  A reader that sees generation *g* therefore sees every write up to *g*.
* Deletes are soft: the document gets ``deleted_at``, becomes inactive, disappears from reads and lists, and
  its history (ending with a ``deleted`` version) stays readable through :meth:`PolicyRepo.versions`.
* The Cedar ``@id`` values of active documents are claimed in ``policy_ids``; a write whose ids are claimed
  by another active document raises :class:`DuplicatePolicyId` naming the id and its owner (the unique key
  also catches a concurrent writer in another process, reported the same way).
* Updates are serialised per document: :meth:`PolicyRepo.update` computes the new document from the current
  one inside the write transaction, under a row lock, so concurrent updates (also from other processes)
  apply one after the other and each becomes a version.

This module knows nothing of Cedar: callers pass the parsed rule metadata (``rules``) and the ``@id`` list.
Every query filters by tenant. All methods raise ``DatabaseError`` when the database is unreachable.
"""

from __future__ import annotations

import dataclasses
import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any, Literal

from agentgov.storage.database import Connection, Database, IntegrityError, Row
from agentgov.timeutil import now_iso

DefaultDecision = Literal["deny", "allow"]
DEFAULT_DECISION_KEY = "policy_default_decision"
"""The key of the tenant default decision in ``tenants.settings``."""

Change = Literal["created", "updated", "deleted"]


class PolicyNotFound(Exception):
    """No live (not deleted) policy with that id in the tenant."""


class DuplicatePolicyId(Exception):
    """A Cedar ``@id`` is already used by another active policy document of the tenant."""

    def __init__(self, cedar_id: str, owner_id: str | None, owner_name: str | None) -> None:
        if owner_id is None:
            text = f"@id {cedar_id!r} is already used by another active policy (concurrent write)"
        else:
            text = f"@id {cedar_id!r} is already used by active policy '{owner_name}' ({owner_id})"
        super().__init__(text)
        self.cedar_id = cedar_id
        self.owner_id = owner_id


class StaleVersion(Exception):
    """The document changed under an update holding its lock (a broken invariant; never expected)."""


@dataclasses.dataclass(frozen=True)
class PolicyWrite:
    """A complete document as it is to be stored; ``rules`` and ``cedar_ids`` come from validation."""

    name: str
    description: str | None
    cedar: str
    is_active: bool
    rules: tuple[dict[str, Any], ...]
    cedar_ids: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class StoredPolicy:
    id: str
    tenant_id: str
    name: str
    description: str | None
    cedar: str
    is_active: bool
    version: int
    rules: list[dict[str, Any]]
    created_at: str
    updated_at: str
    created_by: str
    updated_by: str

    @classmethod
    def from_row(cls, row: Row) -> StoredPolicy:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            name=row["name"],
            description=row["description"],
            cedar=row["cedar"],
            is_active=bool(row["is_active"]),
            version=int(row["version"]),
            rules=json.loads(row["rules"]),
            created_at=row["created_at"],
            updated_at=row["updated_at"],
            created_by=row["created_by"],
            updated_by=row["updated_by"],
        )


@dataclasses.dataclass(frozen=True)
class PolicyVersion:
    policy_id: str
    version: int
    change: Change
    name: str
    description: str | None
    cedar: str
    is_active: bool
    rules: list[dict[str, Any]]
    changed_at: str
    changed_by: str

    @classmethod
    def from_row(cls, row: Row) -> PolicyVersion:
        return cls(
            policy_id=row["policy_id"],
            version=int(row["version"]),
            change=row["change"],
            name=row["name"],
            description=row["description"],
            cedar=row["cedar"],
            is_active=bool(row["is_active"]),
            rules=json.loads(row["rules"]),
            changed_at=row["changed_at"],
            changed_by=row["changed_by"],
        )


@dataclasses.dataclass(frozen=True)
class PolicySnapshot:
    """What a policy actor compiles: the active documents, the default decision and their generation."""

    generation: int
    default_decision: DefaultDecision
    active: tuple[StoredPolicy, ...]


_LIVE = "tenant_id = :tenant_id AND deleted_at IS NULL"


def _bump_generation(conn: Connection, tenant_id: str) -> int:
    conn.execute(
        """INSERT INTO policy_generations (tenant_id, generation) VALUES (:t, 1)
           ON CONFLICT (tenant_id) DO UPDATE SET generation = policy_generations.generation + 1""",
        {"t": tenant_id},
    )
    return int(conn.scalar("SELECT generation FROM policy_generations WHERE tenant_id = :t", {"t": tenant_id}))


def _read_generation(conn: Connection, tenant_id: str) -> int:
    value = conn.scalar("SELECT generation FROM policy_generations WHERE tenant_id = :t", {"t": tenant_id})
    return 0 if value is None else int(value)


def _claim_ids(conn: Connection, tenant_id: str, policy_id: str, cedar_ids: Sequence[str]) -> None:
    """Replace the @id claims of `policy_id`. Raises `DuplicatePolicyId`."""
    conn.execute("DELETE FROM policy_ids WHERE policy_id = :p", {"p": policy_id})
    if not cedar_ids:
        return
    params = {f"i{n}": value for n, value in enumerate(cedar_ids)}
    taken = conn.fetchall(
        f"""SELECT c.cedar_id, c.policy_id, p.name FROM policy_ids c
            LEFT JOIN policies p ON p.id = c.policy_id
            WHERE c.tenant_id = :tenant_id AND c.cedar_id IN ({", ".join(":" + k for k in params)})
            ORDER BY c.cedar_id""",
        {"tenant_id": tenant_id, **params},
    )
    if taken:
        first = taken[0]
        raise DuplicatePolicyId(first["cedar_id"], first["policy_id"], first["name"])
    try:
        conn.executemany(
            "INSERT INTO policy_ids (tenant_id, cedar_id, policy_id) VALUES (:t, :c, :p)",
            [{"t": tenant_id, "c": value, "p": policy_id} for value in cedar_ids],
        )
    except IntegrityError:
        raise DuplicatePolicyId(cedar_ids[0], None, None) from None


def _append_version(conn: Connection, row: Row, change: Change, actor: str) -> None:
    conn.execute(
        """INSERT INTO policy_versions (policy_id, version, tenant_id, change, name, description, cedar,
               is_active, rules, changed_at, changed_by)
           VALUES (:id, :version, :tenant_id, :change, :name, :description, :cedar, :is_active, :rules,
               :changed_at, :changed_by)""",
        {
            "id": row["id"],
            "version": row["version"],
            "tenant_id": row["tenant_id"],
            "change": change,
            "name": row["name"],
            "description": row["description"],
            "cedar": row["cedar"],
            "is_active": row["is_active"],
            "rules": row["rules"],
            "changed_at": row["updated_at"],
            "changed_by": actor,
        },
    )


def _select_live(conn: Connection, tenant_id: str, policy_id: str, *, lock: bool = False) -> Row | None:
    """The live row; with `lock`, held until the transaction ends (SQLite's writer lock already is)."""
    suffix = " FOR UPDATE" if lock and conn.dialect == "postgres" else ""
    return conn.fetchone(
        f"SELECT * FROM policies WHERE id = :id AND {_LIVE}{suffix}", {"id": policy_id, "tenant_id": tenant_id}
    )


def settings_for_update(conn: Connection, tenant_id: str) -> dict[str, Any] | None:
    """The tenant's settings object, its row locked for the transaction on PostgreSQL; None for no such tenant."""
    lock = " FOR UPDATE" if conn.dialect == "postgres" else ""
    raw = conn.scalar(f"SELECT settings FROM tenants WHERE id = :id{lock}", {"id": tenant_id})
    return None if raw is None else dict(json.loads(raw))


def _default_from_settings(settings: dict[str, Any] | None) -> DefaultDecision:
    return "allow" if (settings or {}).get(DEFAULT_DECISION_KEY) == "allow" else "deny"


class PolicyRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, tenant_id: str, new: PolicyWrite, actor: str) -> tuple[StoredPolicy, int]:
        """Store a new document (version 1). Returns it and the new generation.

        Raises `DuplicatePolicyId` if an active document already uses one of its `@id`s.
        """

        def run(conn: Connection) -> tuple[StoredPolicy, int]:
            now = now_iso()
            row: Row = {
                "id": str(uuid.uuid4()),
                "tenant_id": tenant_id,
                "name": new.name,
                "description": new.description,
                "cedar": new.cedar,
                "is_active": int(new.is_active),
                "version": 1,
                "rules": json.dumps(list(new.rules)),
                "created_at": now,
                "updated_at": now,
                "created_by": actor,
                "updated_by": actor,
            }
            conn.execute(
                """INSERT INTO policies (id, tenant_id, name, description, cedar, is_active, version, rules,
                       created_at, updated_at, created_by, updated_by, deleted_at)
                   VALUES (:id, :tenant_id, :name, :description, :cedar, :is_active, :version, :rules,
                       :created_at, :updated_at, :created_by, :updated_by, NULL)""",
                row,
            )
            if new.is_active:
                _claim_ids(conn, tenant_id, row["id"], new.cedar_ids)
            _append_version(conn, row, "created", actor)
            return StoredPolicy.from_row(row), _bump_generation(conn, tenant_id)

        return await self.db.write(run)

    async def update(
        self,
        tenant_id: str,
        policy_id: str,
        prepare: Callable[[StoredPolicy], PolicyWrite | None],
        actor: str,
    ) -> tuple[StoredPolicy, int | None]:
        """Replace a live document by `prepare(current)` as the next version, under a row lock.

        `prepare` runs inside the write transaction (in a worker thread, so it must be synchronous and
        must not touch trio): it returns the complete new document, or None for "no change" (then nothing is
        written and the generation returned is None). An exception from it rolls the transaction back and
        propagates. Concurrent updates of one document are serialised, so each sees the other's result.

        Raises `PolicyNotFound` or `DuplicatePolicyId`.
        """

        def run(conn: Connection) -> tuple[StoredPolicy, int | None]:
            current = _select_live(conn, tenant_id, policy_id, lock=True)
            if current is None:
                raise PolicyNotFound(policy_id)
            new = prepare(StoredPolicy.from_row(current))
            if new is None:
                return StoredPolicy.from_row(current), None
            row: Row = {
                **current,
                "name": new.name,
                "description": new.description,
                "cedar": new.cedar,
                "is_active": int(new.is_active),
                "version": int(current["version"]) + 1,
                "rules": json.dumps(list(new.rules)),
                "updated_at": now_iso(),
                "updated_by": actor,
            }
            changed = conn.execute(
                f"""UPDATE policies SET name = :name, description = :description, cedar = :cedar,
                        is_active = :is_active, version = :version, rules = :rules, updated_at = :updated_at,
                        updated_by = :updated_by
                    WHERE id = :id AND {_LIVE} AND version = :expected""",
                {**row, "expected": current["version"]},
            )
            if changed != 1:
                raise StaleVersion(policy_id)
            _claim_ids(conn, tenant_id, policy_id, new.cedar_ids if new.is_active else ())
            _append_version(conn, row, "updated", actor)
            return StoredPolicy.from_row(row), _bump_generation(conn, tenant_id)

        return await self.db.write(run)

    async def delete(self, tenant_id: str, policy_id: str, actor: str) -> int:
        """Soft-delete a live document (a last `deleted` version keeps it in history). Returns the new
        generation. Raises `PolicyNotFound`."""

        def run(conn: Connection) -> int:
            current = _select_live(conn, tenant_id, policy_id, lock=True)
            if current is None:
                raise PolicyNotFound(policy_id)
            now = now_iso()
            row = {**current, "is_active": 0, "version": int(current["version"]) + 1, "updated_at": now}
            conn.execute(
                f"""UPDATE policies SET is_active = 0, version = :version, updated_at = :updated_at,
                        updated_by = :actor, deleted_at = :updated_at
                    WHERE id = :id AND {_LIVE}""",
                {**row, "actor": actor},
            )
            conn.execute("DELETE FROM policy_ids WHERE policy_id = :p", {"p": policy_id})
            _append_version(conn, row, "deleted", actor)
            return _bump_generation(conn, tenant_id)

        return await self.db.write(run)

    async def get(self, tenant_id: str, policy_id: str) -> StoredPolicy | None:
        """The live document, or None if absent, deleted or another tenant's."""
        row = await self.db.read(lambda c: _select_live(c, tenant_id, policy_id))
        return None if row is None else StoredPolicy.from_row(row)

    async def list_live(
        self, tenant_id: str, *, active_only: bool, limit: int, offset: int
    ) -> tuple[list[StoredPolicy], int]:
        """Live documents, oldest first, and how many there are in all."""
        where = _LIVE + (" AND is_active = 1" if active_only else "")

        def run(conn: Connection) -> tuple[list[StoredPolicy], int]:
            rows = conn.fetchall(
                f"SELECT * FROM policies WHERE {where} ORDER BY created_at, id LIMIT :limit OFFSET :offset",
                {"tenant_id": tenant_id, "limit": limit, "offset": offset},
            )
            total = conn.scalar(f"SELECT COUNT(*) FROM policies WHERE {where}", {"tenant_id": tenant_id})
            return [StoredPolicy.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def versions(
        self, tenant_id: str, policy_id: str, *, limit: int, offset: int
    ) -> tuple[list[PolicyVersion], int] | None:
        """The document's versions, newest first, and their count; None if the tenant never had it.

        Deleted documents keep their history here.
        """

        def run(conn: Connection) -> tuple[list[PolicyVersion], int] | None:
            params = {"tenant_id": tenant_id, "p": policy_id}
            total = int(
                conn.scalar(
                    "SELECT COUNT(*) FROM policy_versions WHERE tenant_id = :tenant_id AND policy_id = :p",
                    params,
                )
            )
            if total == 0:
                return None
            rows = conn.fetchall(
                """SELECT * FROM policy_versions WHERE tenant_id = :tenant_id AND policy_id = :p
                   ORDER BY version DESC LIMIT :limit OFFSET :offset""",
                {**params, "limit": limit, "offset": offset},
            )
            return [PolicyVersion.from_row(r) for r in rows], total

        return await self.db.read(run)

    async def get_version(self, tenant_id: str, policy_id: str, version: int) -> PolicyVersion | None:
        row = await self.db.read(
            lambda c: c.fetchone(
                """SELECT * FROM policy_versions
                   WHERE tenant_id = :tenant_id AND policy_id = :p AND version = :v""",
                {"tenant_id": tenant_id, "p": policy_id, "v": version},
            )
        )
        return None if row is None else PolicyVersion.from_row(row)

    async def generation(self, tenant_id: str) -> int:
        """The tenant's policy-set generation (0 before the first write). One indexed read."""
        return await self.db.read(lambda c: _read_generation(c, tenant_id))

    async def snapshot(self, tenant_id: str) -> PolicySnapshot:
        """The active documents, default decision and generation, read in one transaction."""

        def run(conn: Connection) -> PolicySnapshot:
            generation = _read_generation(conn, tenant_id)
            raw = conn.scalar("SELECT settings FROM tenants WHERE id = :id", {"id": tenant_id})
            rows = conn.fetchall(
                f"SELECT * FROM policies WHERE {_LIVE} AND is_active = 1 ORDER BY created_at, id",
                {"tenant_id": tenant_id},
            )
            return PolicySnapshot(
                generation=generation,
                default_decision=_default_from_settings(None if raw is None else json.loads(raw)),
                active=tuple(StoredPolicy.from_row(r) for r in rows),
            )

        return await self.db.read(run)

    async def default_decision(self, tenant_id: str) -> DefaultDecision:
        raw = await self.db.read(lambda c: c.scalar("SELECT settings FROM tenants WHERE id = :id", {"id": tenant_id}))
        return _default_from_settings(None if raw is None else json.loads(raw))

    async def set_default_decision(self, tenant_id: str, decision: DefaultDecision) -> int:
        """Store the default decision in `tenants.settings` (other keys untouched, read-modify-write under a
        row lock) and bump the generation. Returns the new generation. Raises `KeyError` for an unknown
        tenant."""

        def run(conn: Connection) -> int:
            settings = settings_for_update(conn, tenant_id)
            if settings is None:
                raise KeyError(tenant_id)
            settings[DEFAULT_DECISION_KEY] = decision
            conn.execute(
                "UPDATE tenants SET settings = :s WHERE id = :id", {"s": json.dumps(settings), "id": tenant_id}
            )
            return _bump_generation(conn, tenant_id)

        return await self.db.write(run)
