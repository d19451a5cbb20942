"""Readiness of the service."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentgov_client.models._base import Model


@dataclass(frozen=True)
class Readiness(Model):
    """`GET /health/ready`: `status` ready or unavailable, each component's state, and what is down."""

    status: str
    components: dict[str, Any] = field(default_factory=dict)
    detail: str | None = None

    @property
    def ready(self) -> bool:
        return self.status == "ready"
