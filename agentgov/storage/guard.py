"""The prompt guard's feedback (table `guard_feedback`, m0009) and its per-tenant settings.

Feedback is a tenant's label on a text: `false_positive` (benign text the guard blocked; trained as benign) or
`attack` (an attack it let through; trained as its `category`). Rows are immutable and only ever read by their
tenant. The settings live under the `guard` key of `tenants.settings` (other keys untouched).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import uuid
from typing import Any

from agentgov.storage.database import Connection, Database, Row
from agentgov.storage.policies import settings_for_update
from agentgov.timeutil import now_iso

SETTINGS_KEY = "guard"


@dataclasses.dataclass(frozen=True)
class Feedback:
    id: str
    tenant_id: str
    validation_id: str | None
    text: str
    sha256: str
    label: str
    category: str
    created_by: str
    created_at: str

    @classmethod
    def from_row(cls, row: Row) -> Feedback:
        return cls(**{field.name: row[field.name] for field in dataclasses.fields(cls)})

    def to_public(self) -> dict[str, Any]:
        """Everything but the text itself (its sha256 and length name it)."""
        return {
            "id": self.id,
            "validation_id": self.validation_id,
            "label": self.label,
            "category": self.category,
            "sha256": self.sha256,
            "length": len(self.text),
            "created_by": self.created_by,
            "created_at": self.created_at,
        }


@dataclasses.dataclass(frozen=True)
class GuardSettings:
    """A tenant's guard settings: `record_prompts` keeps the text of a blocked prompt in its audit entry."""

    record_prompts: bool = False


class GuardRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def add_feedback(
        self, tenant_id: str, *, text: str, label: str, category: str, validation_id: str | None, created_by: str
    ) -> Feedback:
        feedback = Feedback(
            id=str(uuid.uuid4()),
            tenant_id=tenant_id,
            validation_id=validation_id,
            text=text,
            sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            label=label,
            category=category,
            created_by=created_by,
            created_at=now_iso(),
        )

        def run(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO guard_feedback (id, tenant_id, validation_id, text, sha256, label, category, created_by,"
                " created_at) VALUES (:id, :tenant_id, :validation_id, :text, :sha256, :label, :category,"
                " :created_by, :created_at)",
                dataclasses.asdict(feedback),
            )

        await self.db.write(run)
        return feedback

    async def feedback(self, tenant_id: str, *, limit: int = 100_000) -> list[Feedback]:
        """The tenant's feedback, oldest first (at most `limit` rows: the newest)."""

        def run(conn: Connection) -> list[Row]:
            return conn.fetchall(
                "SELECT * FROM guard_feedback WHERE tenant_id = :t ORDER BY created_at DESC, id LIMIT :limit",
                {"t": tenant_id, "limit": limit},
            )

        return [Feedback.from_row(row) for row in reversed(await self.db.read(run))]

    async def count_feedback(self, tenant_id: str, *, since: str | None = None) -> int:
        def run(conn: Connection) -> int:
            if since is None:
                return int(conn.scalar("SELECT COUNT(*) FROM guard_feedback WHERE tenant_id = :t", {"t": tenant_id}))
            return int(
                conn.scalar(
                    "SELECT COUNT(*) FROM guard_feedback WHERE tenant_id = :t AND created_at > :since",
                    {"t": tenant_id, "since": since},
                )
            )

        return await self.db.read(run)

    async def settings(self, tenant_id: str) -> GuardSettings:
        raw = await self.db.read(lambda c: c.scalar("SELECT settings FROM tenants WHERE id = :id", {"id": tenant_id}))
        stored = (json.loads(raw) if raw else {}).get(SETTINGS_KEY) or {}
        return GuardSettings(record_prompts=bool(stored.get("record_prompts", False)))

    async def set_settings(self, tenant_id: str, settings: GuardSettings) -> GuardSettings:
        """Store the tenant's guard settings (read-modify-write of `tenants.settings` in one transaction).
        Raises `KeyError` for an unknown tenant."""

        def run(conn: Connection) -> None:
            stored = settings_for_update(conn, tenant_id)
            if stored is None:
                raise KeyError(tenant_id)
            stored[SETTINGS_KEY] = dataclasses.asdict(settings)
            conn.execute("UPDATE tenants SET settings = :s WHERE id = :id", {"s": json.dumps(stored), "id": tenant_id})

        await self.db.write(run)
        return settings
