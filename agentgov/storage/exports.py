"""Signed manifests of finished audit exports (table `export_manifests`, m0010), read only by their tenant."""

from __future__ import annotations

import json
from typing import Any

from agentgov.storage.database import Connection, Database
from agentgov.timeutil import now_iso


class ExportRepo:
    def __init__(self, db: Database) -> None:
        self.db = db

    async def save_manifest(self, tenant_id: str, export_id: str, manifest: dict[str, Any]) -> None:
        def run(conn: Connection) -> None:
            conn.execute(
                "INSERT INTO export_manifests (id, tenant_id, manifest, created_at) VALUES (:id, :t, :m, :now)",
                {"id": export_id, "t": tenant_id, "m": json.dumps(manifest, sort_keys=True), "now": now_iso()},
            )

        await self.db.write(run)

    async def manifest(self, tenant_id: str, export_id: str) -> dict[str, Any] | None:
        """The manifest of the tenant's export (None: unknown, another tenant's, or not finished)."""
        raw = await self.db.read(
            lambda c: c.scalar(
                "SELECT manifest FROM export_manifests WHERE id = :id AND tenant_id = :t",
                {"id": export_id, "t": tenant_id},
            )
        )
        return None if raw is None else dict(json.loads(raw))
