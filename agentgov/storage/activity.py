"""Hourly activity counters (table `activity_counts`, m0012): what the dashboard's figures are summed from.

`count_batch` is called by the audit writer inside the transaction that inserts a batch of entries: one upsert
per (hour, metric) of the batch, so a counter is exact and committed with its entries. Metrics: `entries`
(every audit entry) and, for policy decisions (`kind: policy_check`), `decisions_allowed`, `decisions_denied`
and `decisions_approval_required` (a decision that needs a human approval counts there, not as denied).
Hours are the UTC hour of the receipt time (`YYYY-MM-DDTHH`). The prompt guard adds `guard_validations` and
`guard_blocks_<category>` (`add_counts`, flushed by each process every few seconds).
"""

from __future__ import annotations

import collections
import json
from collections.abc import Iterable, Mapping
from typing import Any

from agentgov.storage.database import Connection

ENTRIES = "entries"
DECISION_METRICS = ("decisions_allowed", "decisions_denied", "decisions_approval_required")


def _decision_metric(decision_json: str | None) -> str | None:
    if not decision_json:
        return None
    try:
        decision = json.loads(decision_json)
    except ValueError:
        return None
    if not isinstance(decision, dict):
        return None
    if decision.get("required_approval"):
        return "decisions_approval_required"
    return "decisions_allowed" if decision.get("allowed") else "decisions_denied"


def count_batch(conn: Connection, tenant_id: str, created_at: str, entries: Iterable[Any]) -> None:
    """Add a committed-with-it batch of `PendingEntry`s received at `created_at` to the counters."""
    counts: collections.Counter[str] = collections.Counter()
    for entry in entries:
        counts[ENTRIES] += 1
        if entry.kind == "policy_check":
            metric = _decision_metric(entry.decision)
            if metric is not None:
                counts[metric] += 1
    add_counts(conn, tenant_id, created_at[:13], counts)


def add_counts(conn: Connection, tenant_id: str, hour: str, counts: Mapping[str, int]) -> None:
    """Add `counts` (metric -> n) to the tenant's counters of `hour` (`YYYY-MM-DDTHH`), in `conn`'s transaction."""
    for metric, n in counts.items():
        conn.execute(
            "INSERT INTO activity_counts (tenant_id, hour, metric, n) VALUES (:t, :h, :m, :n)"
            " ON CONFLICT (tenant_id, hour, metric) DO UPDATE SET n = activity_counts.n + excluded.n",
            {"t": tenant_id, "h": hour, "m": metric, "n": n},
        )
