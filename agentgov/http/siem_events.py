"""Recording identity changes for the SIEM from the route that made them (`agentgov.siem.outbox.record`)."""

from __future__ import annotations

from typing import Any

from agentgov.http.auth import principal, services
from agentgov.siem.events import identity_change
from agentgov.siem.outbox import record


def record_change(tenant_id: str | None, name: str, summary: str, **details: Any) -> None:
    """Queue `name` (e.g. `user.created`) for the SIEM, made by the request's principal. Never raises."""
    record(services(), identity_change(tenant_id or "", name, summary, principal().actor_label, details))
