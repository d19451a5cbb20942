"""Hourly activity counters (table `activity_counts`, m0012): what the dashboard's figures are summed from.

`count_batch` is called by the audit writer inside the transaction that inserts a batch of entries: one upsert
per (hour, metric) of the batch, so a counter is exact and committed with its entries. Metrics: `entries`
(every audit entry) and, for policy decisions (`kind: policy_check`), `decisions_allowed`, `decisions_denied`
and `decisions_approval_required` (an allowed decision waiting for a human approval counts there), read from
the entry's `is_approved` as the check path records it (no decision JSON is parsed).
Hours are the UTC hour of the receipt time (`YYYY-MM-DDTHH`). The prompt guard adds `guard_validations` and
`guard_blocks_<category>` (`add_counts`, flushed by each process every few seconds).
"""

from __future__ import annotations

import collections
from collections.abc import Iterable, Mapping
from typing import Any

from agentgov.storage.database import Connection

ENTRIES = "entries"
DECISION_METRICS = ("decisions_allowed", "decisions_denied", "decisions_approval_required")
# A policy decision's `is_approved`: True allowed, False denied, None allowed pending a human approval.
_DECISION_OUTCOMES = {True: DECISION_METRICS[0], False: DECISION_METRICS[1], None: DECISION_METRICS[2]}


def count_batch(conn: Connection, tenant_id: str, created_at: str, entries: Iterable[Any]) -> None:
    """Add a committed-with-it batch of `PendingEntry`s received at `created_at` to the counters."""
    counts: collections.Counter[str] = collections.Counter()
    for entry in entries:
        counts[ENTRIES] += 1
        if entry.kind == "policy_check":  # the check path records the outcome in `is_approved`
            counts[_DECISION_OUTCOMES[entry.is_approved]] += 1
    add_counts(conn, tenant_id, created_at[:13], counts)


def add_counts(conn: Connection, tenant_id: str, hour: str, counts: Mapping[str, int]) -> None:
    """Add `counts` (metric -> n) to the tenant's counters of `hour` (`YYYY-MM-DDTHH`), in `conn`'s transaction."""
    for metric, n in counts.items():
        conn.execute(
            "INSERT INTO activity_counts (tenant_id, hour, metric, n) VALUES (:t, :h, :m, :n)"
            " ON CONFLICT (tenant_id, hour, metric) DO UPDATE SET n = activity_counts.n + excluded.n",
            {"t": tenant_id, "h": hour, "m": metric, "n": n},
        )
