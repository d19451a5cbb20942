"""Audit trail storage: the per-tenant chain record and the append-only entries.

Writes happen only through `append_batch` (called by the tenant's audit actor inside one write
transaction) and `open_chain`; nothing updates or deletes an entry. Reads (`AuditRepo.get`, `list_entries`,
`entries_after`) are plain tenant-filtered queries; `AuditRepo.verify` checks a whole chain inside one
read snapshot. The chain rules themselves (canonical form, keys, signatures, verification) are in
`agentgov.audit_chain`.

Several processes may append to the same tenant's chain: `append_batch` advances the head with a
compare-and-set on the chain record, and when another process moved it first, re-reads it (locked on
PostgreSQL; SQLite write transactions are exclusive) and chains the batch after the real head.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
from typing import Any

from agentgov.audit_chain import (
    CHAIN_FIELDS,
    ChainHead,
    ChainRow,
    ChainVerifier,
    Located,
    Report,
    derive_key,
    extend,
    genesis_head,
    key_check,
    key_mismatch_report,
    missing_record_report,
)
from agentgov.storage.activity import count_batch
from agentgov.storage.database import Connection, Database, Row
from agentgov.storage.text import unstorable_reason
from agentgov.timeutil import now_iso

#: Rows read per query while verifying.
VERIFY_PAGE = 1000
_IN_CHUNK = 200


@dataclasses.dataclass(frozen=True)
class AuditEntry:
    """One stored audit entry. `duplicate` is not stored: it marks an entry returned for a repeated
    `dedup_key` instead of a new one."""

    id: str
    tenant_id: str
    sequence: int
    kind: str
    agent_id: str
    actor: str
    action: str
    resource: str
    input: str | None
    output: str | None
    reasoning: str | None
    risk_score: float | None
    is_approved: bool | None
    decision: str | None
    dedup_key: str | None
    created_at: str
    prev_signature: str
    signature: str
    occurred_at: str | None = None
    anomaly: str | None = None  # the detector's verdict (JSON text): stored with the entry, or added soon after
    request_id: str | None = None  # the API request that wrote it (not chained; forwarded to the SIEM)
    duplicate: bool = dataclasses.field(default=False, compare=False)

    @classmethod
    def from_row(cls, row: Row) -> AuditEntry:
        return cls(
            id=row["id"],
            tenant_id=row["tenant_id"],
            sequence=int(row["sequence"]),
            kind=row["kind"],
            agent_id=row["agent_id"],
            actor=row["actor"],
            action=row["action"],
            resource=row["resource"],
            input=row["input"],
            output=row["output"],
            reasoning=row["reasoning"],
            risk_score=None if row["risk_score"] is None else float(row["risk_score"]),
            is_approved=None if row["is_approved"] is None else bool(row["is_approved"]),
            decision=row["decision"],
            dedup_key=row["dedup_key"],
            created_at=row["created_at"],
            prev_signature=row["prev_signature"],
            signature=row["signature"],
            occurred_at=row.get("occurred_at"),
            anomaly=row.get("anomaly"),
            request_id=row.get("request_id"),
        )

    @property
    def timestamp(self) -> str:
        """The event time: the one the agent gave, else the receipt time."""
        return self.occurred_at or self.created_at

    @classmethod
    def from_chain_row(cls, row: ChainRow) -> AuditEntry:
        return cls(**{name: getattr(row, name) for name in CHAIN_FIELDS})

    def chain_row(self) -> ChainRow:
        return ChainRow(**{name: getattr(self, name) for name in CHAIN_FIELDS})

    def to_public(self) -> dict[str, Any]:
        """The entry as the API shows it (JSON fields decoded)."""
        return {
            "id": self.id,
            "sequence": self.sequence,
            "kind": self.kind,
            "agent_id": self.agent_id,
            "action": self.action,
            "resource": self.resource,
            "input": _loads(self.input),
            "output": _loads(self.output),
            "reasoning": _loads(self.reasoning),
            "risk_score": self.risk_score,
            "is_approved": self.is_approved,
            "decision": _loads(self.decision),
            "actor": self.actor,
            "timestamp": self.timestamp,
            "created_at": self.created_at,
            "anomaly": _loads(self.anomaly),
            "prev_signature": self.prev_signature,
            "signature": self.signature,
        }


@dataclasses.dataclass(frozen=True)
class ExportFilter:
    """Which entries an export holds: each given field must match; `since` (inclusive) and `until`
    (exclusive) bound the event time (the agent's `timestamp`, else the receipt time; ISO 8601 UTC text)."""

    agent_id: str | None = None
    action: str | None = None
    kind: str | None = None
    since: str | None = None
    until: str | None = None

    def sql(self) -> tuple[str, dict[str, Any]]:
        """(" AND ..." conditions, their parameters)."""
        parts, params = [], {}
        for name in ("agent_id", "action", "kind"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name} = :{name}")
                params[name] = value
        if self.since is not None:
            parts.append("COALESCE(occurred_at, created_at) >= :since")
            params["since"] = self.since
        if self.until is not None:
            parts.append("COALESCE(occurred_at, created_at) < :until")
            params["until"] = self.until
        return "".join(f" AND {part}" for part in parts), params

    def to_public(self) -> dict[str, str]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


def _loads(text: str | None) -> Any:
    return None if text is None else json.loads(text)


@dataclasses.dataclass(frozen=True)
class PendingEntry:
    """An entry waiting to be chained: everything but its sequence, time and signatures.

    JSON fields are already canonical JSON text (`audit_chain.canonical_json`).
    """

    id: str
    kind: str
    agent_id: str
    actor: str
    action: str
    resource: str
    input: str | None
    output: str | None
    reasoning: str | None
    risk_score: float | None
    is_approved: bool | None
    decision: str | None
    dedup_key: str | None
    occurred_at: str | None = None
    anomaly: str | None = None  # the detector's verdict when it judged the entry before the commit (not chained)
    request_id: str | None = None  # the API request that wrote it (not chained)


_TEXT_FIELDS = (
    "id",
    "kind",
    "agent_id",
    "actor",
    "action",
    "resource",
    "input",
    "output",
    "reasoning",
    "decision",
    "dedup_key",
)


def unstorable_field(entry: PendingEntry) -> tuple[str, str] | None:
    """(field name, why) for the first text field of `entry` that the database cannot store, else None.

    JSON fields are checked as their canonical text: a NUL inside a JSON string is escaped there (and so
    storable), a lone surrogate is not.
    """
    for name in _TEXT_FIELDS:
        value = getattr(entry, name)
        if value is not None:
            reason = unstorable_reason(value)
            if reason is not None:
                return name, reason
    return None


@dataclasses.dataclass(frozen=True)
class ChainState:
    """A tenant's chain as the actor needs it. `key_ok` is False when the configured secret does not
    derive the key the chain was signed with (appending would then break the chain). `orphaned_entries` is
    the number of entries found when the chain record is missing (the database was altered or damaged: no
    record is made up for them, and nothing may be appended)."""

    key: bytes
    head: ChainHead
    key_ok: bool
    orphaned_entries: int = 0


@dataclasses.dataclass(frozen=True)
class BatchResult:
    """`entries[i]` answers `pending[i]`: the new entry, or the existing one (`duplicate`)."""

    head: ChainHead
    entries: list[AuditEntry]


_HEAD_COLUMNS = "key_salt, key_check, last_sequence, last_signature, head_mac"


def _head(row: Row) -> ChainHead:
    return ChainHead(int(row["last_sequence"]), row["last_signature"], row["head_mac"])


def _read_chain(conn: Connection, tenant_id: str, for_update: bool = False) -> Row | None:
    lock = " FOR UPDATE" if for_update and conn.dialect == "postgres" else ""
    return conn.fetchone(f"SELECT {_HEAD_COLUMNS} FROM audit_chains WHERE tenant_id = :t{lock}", {"t": tenant_id})


def open_chain(conn: Connection, tenant_id: str, server_secret: str) -> ChainState:
    """The tenant's chain, created (with a fresh random salt) on first use. Safe under concurrency. When the
    record is missing although entries exist, none is created: the state says how many entries it found."""
    row = _read_chain(conn, tenant_id)
    if row is None:
        orphans = int(conn.scalar("SELECT COUNT(*) FROM audit_entries WHERE tenant_id = :t", {"t": tenant_id}))
        if orphans:
            return ChainState(key=b"", head=ChainHead(0, "", ""), key_ok=False, orphaned_entries=orphans)
        salt = secrets.token_hex(32)
        key = derive_key(server_secret, tenant_id, salt)
        head = genesis_head(key, tenant_id)
        now = now_iso()
        conn.execute(
            """INSERT INTO audit_chains (tenant_id, key_salt, key_check, last_sequence, last_signature, head_mac,
                   created_at, updated_at)
               VALUES (:t, :salt, :check, :seq, :sig, :mac, :now, :now)
               ON CONFLICT (tenant_id) DO NOTHING""",
            {
                "t": tenant_id,
                "salt": salt,
                "check": key_check(key),
                "seq": head.sequence,
                "sig": head.signature,
                "mac": head.mac,
                "now": now,
            },
        )
        row = _read_chain(conn, tenant_id)
        assert row is not None
    key = derive_key(server_secret, tenant_id, row["key_salt"])
    return ChainState(key=key, head=_head(row), key_ok=key_check(key) == row["key_check"])


def _existing_by_dedup_key(conn: Connection, tenant_id: str, keys: list[str]) -> dict[str, AuditEntry]:
    found: dict[str, AuditEntry] = {}
    for start in range(0, len(keys), _IN_CHUNK):
        chunk = keys[start : start + _IN_CHUNK]
        params: dict[str, Any] = {"t": tenant_id}
        names = []
        for i, key in enumerate(chunk):
            params[f"k{i}"] = key
            names.append(f":k{i}")
        rows = conn.fetchall(
            f"SELECT * FROM audit_entries WHERE tenant_id = :t AND dedup_key IN ({', '.join(names)})", params
        )
        for row in rows:
            found[row["dedup_key"]] = AuditEntry.from_row(row)
    return found


_PENDING_FIELDS = tuple(f.name for f in dataclasses.fields(PendingEntry) if f.name not in ("anomaly", "request_id"))


def _insert_values(row: ChainRow) -> dict[str, Any]:
    values = {name: getattr(row, name) for name in CHAIN_FIELDS}
    if row.is_approved is not None:
        values["is_approved"] = int(row.is_approved)
    return values


def _advance_head(conn: Connection, tenant_id: str, new: ChainHead, expected: ChainHead | None) -> int:
    params: dict[str, Any] = {
        "t": tenant_id,
        "seq": new.sequence,
        "sig": new.signature,
        "mac": new.mac,
        "now": now_iso(),
    }
    sql = (
        "UPDATE audit_chains SET last_sequence = :seq, last_signature = :sig, head_mac = :mac, updated_at = :now"
        " WHERE tenant_id = :t"
    )
    if expected is not None:
        sql += " AND last_sequence = :old_seq AND last_signature = :old_sig"
        params.update(old_seq=expected.sequence, old_sig=expected.signature)
    return conn.execute(sql, params)


def append_batch(
    conn: Connection, tenant_id: str, key: bytes, head: ChainHead, pending: list[PendingEntry]
) -> BatchResult:
    """Chain and insert `pending` after `head` (the caller's cached head) in the caller's transaction.

    Entries whose `dedup_key` is already stored (or repeated earlier in the batch) are not inserted;
    their result is the existing entry marked `duplicate`. If the stored head is not `head` (another
    process appended), the batch is chained after the stored head instead. Raises `IntegrityError` if a
    concurrent transaction stored one of the dedup keys first (retry the whole transaction).
    """
    keys = sorted({p.dedup_key for p in pending if p.dedup_key is not None})
    existing = _existing_by_dedup_key(conn, tenant_id, keys) if keys else {}
    fresh: list[PendingEntry] = []
    first_by_key: dict[str, int] = {}
    plan: list[tuple[str, Any]] = []  # ("existing", entry) | ("fresh", index in fresh)
    for item in pending:
        if item.dedup_key is not None and item.dedup_key in existing:
            plan.append(("existing", existing[item.dedup_key]))
        elif item.dedup_key is not None and item.dedup_key in first_by_key:
            plan.append(("repeat", first_by_key[item.dedup_key]))
        else:
            if item.dedup_key is not None:
                first_by_key[item.dedup_key] = len(fresh)
            plan.append(("fresh", len(fresh)))
            fresh.append(item)

    new_head = head
    stored: list[AuditEntry] = []
    if fresh:
        created_at = now_iso()
        names = _PENDING_FIELDS
        rows = [
            ChainRow(
                tenant_id=tenant_id,
                sequence=0,
                created_at=created_at,
                prev_signature="",
                **{name: getattr(item, name) for name in names},
            )
            for item in fresh
        ]
        signed, new_head = extend(key, head, tenant_id, rows)
        if _advance_head(conn, tenant_id, new_head, expected=head) == 0:
            current = _read_chain(conn, tenant_id, for_update=True)
            if current is None:
                raise RuntimeError(f"the audit chain record of tenant {tenant_id} is missing")
            signed, new_head = extend(key, _head(current), tenant_id, rows)
            _advance_head(conn, tenant_id, new_head, expected=None)
        stored = [
            dataclasses.replace(AuditEntry.from_chain_row(row), anomaly=item.anomaly, request_id=item.request_id)
            for row, item in zip(signed, fresh, strict=True)
        ]
        conn.insert_rows(
            "audit_entries",
            [
                {**_insert_values(row), "anomaly": item.anomaly, "request_id": item.request_id}
                for row, item in zip(signed, fresh, strict=True)
            ],
        )
        count_batch(conn, tenant_id, created_at, fresh)

    results: list[AuditEntry] = []
    for how, ref in plan:
        if how == "existing":
            results.append(dataclasses.replace(ref, duplicate=True))
        elif how == "repeat":
            results.append(dataclasses.replace(stored[ref], duplicate=True))
        else:
            results.append(stored[ref])
    return BatchResult(head=new_head, entries=results)


class AuditRepo:
    """Tenant-scoped reads of the audit trail, and chain verification."""

    def __init__(self, db: Database) -> None:
        self.db = db

    async def get(self, tenant_id: str, entry_id: str) -> AuditEntry | None:
        row = await self.db.read(
            lambda c: c.fetchone(
                "SELECT * FROM audit_entries WHERE tenant_id = :t AND id = :id", {"t": tenant_id, "id": entry_id}
            )
        )
        return None if row is None else AuditEntry.from_row(row)

    async def list_entries(
        self,
        tenant_id: str,
        *,
        agent_id: str | None = None,
        action: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> tuple[list[AuditEntry], int]:
        """A page of entries, newest (highest sequence) first, and the total matching."""
        where = ["tenant_id = :t"]
        params: dict[str, Any] = {"t": tenant_id, "limit": limit, "offset": offset}
        if agent_id is not None:
            where.append("agent_id = :agent_id")
            params["agent_id"] = agent_id
        if action is not None:
            where.append("action = :action")
            params["action"] = action
        clause = " AND ".join(where)

        def run(conn: Connection) -> tuple[list[AuditEntry], int]:
            rows = conn.fetchall(
                f"SELECT * FROM audit_entries WHERE {clause} ORDER BY sequence DESC LIMIT :limit OFFSET :offset",
                params,
            )
            total = conn.scalar(f"SELECT COUNT(*) FROM audit_entries WHERE {clause}", params)
            return [AuditEntry.from_row(r) for r in rows], int(total)

        return await self.db.read(run)

    async def entries_after(self, tenant_id: str, after_sequence: int = 0, limit: int = 1000) -> list[AuditEntry]:
        """Up to `limit` entries with a sequence above `after_sequence`, oldest first (for streaming)."""
        rows = await self.db.read(
            lambda c: c.fetchall(
                "SELECT * FROM audit_entries WHERE tenant_id = :t AND sequence > :after ORDER BY sequence LIMIT :l",
                {"t": tenant_id, "after": after_sequence, "l": limit},
            )
        )
        return [AuditEntry.from_row(r) for r in rows]

    async def export_page(
        self,
        tenant_id: str,
        where: ExportFilter,
        *,
        after_sequence: int,
        limit: int,
        through_sequence: int | None = None,
    ) -> list[AuditEntry]:
        """Up to `limit` entries matching `where` with a sequence above `after_sequence` (and at most
        `through_sequence`, when given), oldest first: one page of an export (keyset pagination, so each page
        costs the same however deep the export is)."""
        clause, params = where.sql()
        params.update({"t": tenant_id, "after": after_sequence, "l": limit})
        if through_sequence is not None:
            clause += " AND sequence <= :through"
            params["through"] = through_sequence
        rows = await self.db.read(
            lambda c: c.fetchall(
                f"SELECT * FROM audit_entries WHERE tenant_id = :t AND sequence > :after{clause}"
                " ORDER BY sequence LIMIT :l",
                params,
            )
        )
        return [AuditEntry.from_row(r) for r in rows]

    async def head(self, tenant_id: str) -> ChainHead | None:
        """The end of the tenant's chain now (None before its first entry)."""
        row = await self.db.read(lambda c: _read_chain(c, tenant_id))
        return None if row is None else _head(row)

    async def count(self, tenant_id: str) -> int:
        return int(
            await self.db.read(
                lambda c: c.scalar("SELECT COUNT(*) FROM audit_entries WHERE tenant_id = :t", {"t": tenant_id})
            )
        )

    async def verify(self, tenant_id: str, server_secret: str, max_findings: int = 100) -> Report:
        """Check the tenant's whole chain inside one read snapshot. Never raises for tampering: the
        `Report` says what is wrong and where. Raises `DatabaseError` if the database fails."""
        return await self.db.read(lambda conn: verify_chain(conn, tenant_id, server_secret, max_findings))


def verify_chain(conn: Connection, tenant_id: str, server_secret: str, max_findings: int = 100) -> Report:
    """`AuditRepo.verify` inside the caller's (read) transaction."""
    if conn.dialect == "postgres":
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
    chain = _read_chain(conn, tenant_id)
    params: dict[str, Any] = {"t": tenant_id}
    if chain is None:
        count = int(conn.scalar("SELECT COUNT(*) FROM audit_entries WHERE tenant_id = :t", params))
        if count == 0:
            return Report(tenant_id, True, 0, None, None, (), False)
        return missing_record_report(tenant_id, count)
    key = derive_key(server_secret, tenant_id, chain["key_salt"])
    head = _head(chain)
    if key_check(key) != chain["key_check"]:
        return key_mismatch_report(tenant_id, head)

    def locate(signature: str) -> Located | None:
        row = conn.fetchone(
            "SELECT sequence, id FROM audit_entries WHERE tenant_id = :t AND signature = :s",
            {"t": tenant_id, "s": signature},
        )
        return None if row is None else Located(int(row["sequence"]), row["id"])

    verifier = ChainVerifier(key, tenant_id, head, locate, max_findings)
    after = -1
    while True:
        rows = conn.fetchall(
            "SELECT * FROM audit_entries WHERE tenant_id = :t AND sequence > :after ORDER BY sequence LIMIT :l",
            {"t": tenant_id, "after": after, "l": VERIFY_PAGE},
        )
        for row in rows:
            verifier.feed(AuditEntry.from_row(row).chain_row())
        if len(rows) < VERIFY_PAGE:
            break
        after = int(rows[-1]["sequence"])
    return verifier.finish()
