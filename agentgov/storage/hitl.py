"""Human-in-the-loop approval requests: the record and its repository (table `hitl_requests`, m0006).

States: `pending` -> `approved` | `rejected` | `expired`; the three outcomes are final. `expired` means no
reviewer decided before `expires_at` and counts as a rejection: the action must not proceed (`approved` in
the public shape is `false` for both). Every transition is a conditional update (`WHERE status =
'pending'`), so two deciders (or a decider and the expiry timer, even in different processes) cannot both
win: exactly one transition happens, the other sees the request already resolved.

At most one request is pending per identical (tenant, agent, action, resource, canonical context): the
`dedupe_key` is a hash of those, guarded by a partial unique index, so a second identical request while the
first is pending gets the first back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from typing import Any

from agentgov.storage.database import Connection, Database, IntegrityError, Row

PENDING = "pending"
APPROVED = "approved"
REJECTED = "rejected"
EXPIRED = "expired"
STATUSES = (PENDING, APPROVED, REJECTED, EXPIRED)
#: Who "decides" an expired request.
EXPIRY_DECIDER = "system:timeout"


def canonical_json(value: Any) -> str:
    """A stable text form of a JSON value: sorted keys, no insignificant whitespace."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def dedupe_key(agent_id: str, action: str, resource: str, context: dict[str, Any]) -> str:
    """What makes two requests identical: agent, action, resource and the canonical context."""
    text = "\x00".join((agent_id, action, resource, canonical_json(context)))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class ApprovalRequest:
    """One approval request. Immutable: a transition produces a new record.

    `reused` is not stored: it is true on the record answered to a request that found an identical pending
    one.
    """

    id: str
    tenant_id: str
    agent_id: str
    action: str
    resource: str
    context: dict[str, Any]
    policy_ids: tuple[str, ...]
    reason: str
    risk_score: float | None
    requested_by: str
    status: str
    created_at: str
    expires_at: str
    decided_at: str | None = None
    decided_by: str | None = None
    comment: str | None = None
    reused: bool = dataclasses.field(default=False, compare=False)

    @property
    def is_pending(self) -> bool:
        return self.status == PENDING

    def to_public(self) -> dict[str, Any]:
        """The JSON shape in API answers and events (no tenant id)."""
        return {
            "id": self.id,
            "agent_id": self.agent_id,
            "action": self.action,
            "resource": self.resource,
            "context": dict(self.context),
            "policy_ids": list(self.policy_ids),
            "reason": self.reason,
            "risk_score": self.risk_score,
            "requested_by": self.requested_by,
            "status": self.status,
            "approved": None if self.status == PENDING else self.status == APPROVED,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "decided_at": self.decided_at,
            "decided_by": self.decided_by,
            "comment": self.comment,
        }

    @classmethod
    def from_row(cls, row: Row) -> ApprovalRequest:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            agent_id=row["agent_id"],
            action=row["action"],
            resource=row["resource"],
            context=json.loads(row["context"]),
            policy_ids=tuple(json.loads(row["policy_ids"])),
            reason=row["reason"],
            risk_score=None if row["risk_score"] is None else float(row["risk_score"]),
            requested_by=row["requested_by"],
            status=row["status"],
            created_at=row["created_at"],
            expires_at=row["expires_at"],
            decided_at=row["decided_at"],
            decided_by=row["decided_by"],
            comment=row["comment"],
        )


@dataclasses.dataclass(frozen=True)
class NewApproval:
    agent_id: str
    action: str
    resource: str
    context: dict[str, Any]
    policy_ids: tuple[str, ...]
    reason: str
    risk_score: float | None
    requested_by: str


@dataclasses.dataclass(frozen=True)
class Created:
    """What `HitlRepo.create` did: the request answered, whether it is new, and any request it expired."""

    request: ApprovalRequest
    created: bool
    expired: ApprovalRequest | None = None


_SELECT = "SELECT * FROM hitl_requests"


def _resolve(
    conn: Connection,
    tenant_id: str,
    request_id: str,
    status: str,
    by: str,
    comment: str | None,
    now: str,
    *,
    before_expiry: bool = False,
) -> bool:
    """Move one pending request to `status`; with `before_expiry`, only if it is not past `expires_at`."""
    sql = """UPDATE hitl_requests SET status = :status, decided_at = :now, decided_by = :by, comment = :comment
             WHERE tenant_id = :tenant_id AND id = :id AND status = 'pending'"""
    if before_expiry:
        sql += " AND expires_at > :now"
    changed = conn.execute(
        sql,
        {"status": status, "now": now, "by": by, "comment": comment, "tenant_id": tenant_id, "id": request_id},
    )
    return changed == 1


def _get(conn: Connection, tenant_id: str, request_id: str) -> ApprovalRequest | None:
    row = conn.fetchone(
        f"{_SELECT} WHERE tenant_id = :tenant_id AND id = :id", {"tenant_id": tenant_id, "id": request_id}
    )
    return None if row is None else ApprovalRequest.from_row(row)


class HitlRepo:
    """Approval requests of every tenant; every method is scoped to one tenant except `tenants_with_pending`."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def create(self, tenant_id: str, new: NewApproval, *, now: str, expires_at: str) -> Created:
        """Store a new pending request, or return the identical pending one (unless it is past `expires_at`,
        in which case it is expired first and reported in `Created.expired`)."""
        key = dedupe_key(new.agent_id, new.action, new.resource, new.context)

        def run(conn: Connection) -> Created:
            row = conn.fetchone(
                f"{_SELECT} WHERE tenant_id = :tenant_id AND dedupe_key = :key AND status = 'pending'",
                {"tenant_id": tenant_id, "key": key},
            )
            expired = None
            if row is not None:
                existing = ApprovalRequest.from_row(row)
                if existing.expires_at > now:
                    return Created(dataclasses.replace(existing, reused=True), created=False)
                _resolve(conn, tenant_id, existing.id, EXPIRED, EXPIRY_DECIDER, None, now)
                expired = _get(conn, tenant_id, existing.id)
            record = {
                "id": str(uuid.uuid4()),
                "tenant_id": tenant_id,
                "agent_id": new.agent_id,
                "action": new.action,
                "resource": new.resource,
                "context": canonical_json(new.context),
                "dedupe_key": key,
                "policy_ids": json.dumps(list(new.policy_ids)),
                "reason": new.reason,
                "risk_score": new.risk_score,
                "requested_by": new.requested_by,
                "status": PENDING,
                "created_at": now,
                "expires_at": expires_at,
                "decided_at": None,
                "decided_by": None,
                "comment": None,
            }
            conn.execute(
                """INSERT INTO hitl_requests (id, tenant_id, agent_id, action, resource, context, dedupe_key,
                       policy_ids, reason, risk_score, requested_by, status, created_at, expires_at, decided_at,
                       decided_by, comment)
                   VALUES (:id, :tenant_id, :agent_id, :action, :resource, :context, :dedupe_key, :policy_ids,
                       :reason, :risk_score, :requested_by, :status, :created_at, :expires_at, :decided_at,
                       :decided_by, :comment)""",
                record,
            )
            return Created(ApprovalRequest.from_row(record), created=True, expired=expired)

        try:
            return await self.db.write(run)
        except IntegrityError:
            # Another process inserted the identical request between our read and insert: answer it.
            return await self.db.write(run)

    async def get(self, tenant_id: str, request_id: str) -> ApprovalRequest | None:
        return await self.db.read(lambda conn: _get(conn, tenant_id, request_id))

    async def decide(
        self, tenant_id: str, request_id: str, status: str, *, by: str, comment: str | None, now: str
    ) -> tuple[bool, ApprovalRequest | None]:
        """Approve or reject a request that is pending and not past `expires_at` (as of `now`).

        Returns (whether this call decided it, the current record); the record is None when the id is unknown
        in this tenant. A request still pending but past `expires_at` is left for the caller to expire.
        """
        if status not in (APPROVED, REJECTED):
            raise ValueError(f"a decision is approved or rejected, not {status!r}")

        def run(conn: Connection) -> tuple[bool, ApprovalRequest | None]:
            changed = _resolve(conn, tenant_id, request_id, status, by, comment, now, before_expiry=True)
            return changed, _get(conn, tenant_id, request_id)

        return await self.db.write(run)

    async def expire(self, tenant_id: str, request_ids: list[str], *, now: str) -> list[ApprovalRequest]:
        """Expire those of `request_ids` still pending; return the requests this call expired."""

        def run(conn: Connection) -> list[ApprovalRequest]:
            done = []
            for request_id in request_ids:
                if _resolve(conn, tenant_id, request_id, EXPIRED, EXPIRY_DECIDER, None, now):
                    record = _get(conn, tenant_id, request_id)
                    if record is not None:
                        done.append(record)
            return done

        if not request_ids:
            return []
        return await self.db.write(run)

    async def all_pending(self, tenant_id: str) -> list[ApprovalRequest]:
        """Every pending request of the tenant (whatever its expiry), oldest first."""
        rows = await self.db.read(
            lambda conn: conn.fetchall(
                f"{_SELECT} WHERE tenant_id = :tenant_id AND status = 'pending' ORDER BY created_at, id",
                {"tenant_id": tenant_id},
            )
        )
        return [ApprovalRequest.from_row(r) for r in rows]

    async def list_pending(
        self, tenant_id: str, *, now: str, limit: int, offset: int, agent_id: str | None = None
    ) -> tuple[list[ApprovalRequest], int]:
        """Pending requests not yet past `expires_at`, oldest first, and how many there are."""
        where = "tenant_id = :tenant_id AND status = 'pending' AND expires_at > :now"
        params: dict[str, Any] = {"tenant_id": tenant_id, "now": now}
        if agent_id is not None:
            where += " AND agent_id = :agent_id"
            params["agent_id"] = agent_id

        def run(conn: Connection) -> tuple[list[ApprovalRequest], int]:
            rows = conn.fetchall(
                f"{_SELECT} WHERE {where} ORDER BY created_at, id LIMIT :limit OFFSET :offset",
                {**params, "limit": limit, "offset": offset},
            )
            total = conn.scalar(f"SELECT COUNT(*) FROM hitl_requests WHERE {where}", params)
            return [ApprovalRequest.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def expire_overdue(self, *, now: str, limit: int, lease: tuple[str, int]) -> list[ApprovalRequest]:
        """Expire up to `limit` pending requests of any tenant past their `expires_at`, oldest first, in one
        transaction fenced by `lease` (name, token). Returns them. Raises `LeaseLost` (nothing expired)."""
        from agentgov.storage.leases import fence

        def run(conn: Connection) -> list[ApprovalRequest]:
            fence(conn, *lease)
            rows = conn.fetchall(
                f"{_SELECT} WHERE status = 'pending' AND expires_at <= :now ORDER BY expires_at, id LIMIT :limit",
                {"now": now, "limit": limit},
            )
            done = []
            for row in rows:
                record = ApprovalRequest.from_row(row)
                if _resolve(conn, record.tenant_id, record.id, EXPIRED, EXPIRY_DECIDER, None, now):
                    done.append(_get(conn, record.tenant_id, record.id) or record)
            return done

        return await self.db.write(run)

    async def tenants_with_pending(self) -> list[str]:
        """The tenants that have at least one pending request (to start their expiry timers)."""
        rows = await self.db.read(
            lambda conn: conn.fetchall("SELECT DISTINCT tenant_id FROM hitl_requests WHERE status = 'pending'")
        )
        return sorted(r["tenant_id"] for r in rows)
