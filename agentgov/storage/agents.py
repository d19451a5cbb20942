"""The agent record and its repository (table `agents`, `agent_embeddings`; migration m0003)."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from agentgov.storage.database import Row

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
                None
                if row["predicted_type_confidence"] is None
                else float(row["predicted_type_confidence"])
            ),
            last_heartbeat_at=row["last_heartbeat_at"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )
