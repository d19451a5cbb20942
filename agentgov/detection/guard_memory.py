"""What this process remembers of the guard's validations: per-tenant counters and the recent texts.

Both live in the event loop (written by the validate route after each judgement; never from a thread) and
are per process: `/guard/stats` says so.

* `GuardCounters`: validations, blocks per category, and the latencies of the last `LATENCY_WINDOW`
  validations (for p50/p99); the counts not yet flushed to the shared hourly counters (`guard_flush`).
* `RecentValidations`: the text of each recent validation by `validation_id`, so that feedback can name a
  validation instead of sending the text again. Bounded: entries older than `RECENT_TTL` seconds are dropped,
  and the oldest go first once the texts held exceed `RECENT_CHARS` characters in all.
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable

LATENCY_WINDOW = 10_000
RECENT_TTL = 3600.0
RECENT_CHARS = 20_000_000


@dataclasses.dataclass
class GuardCounters:
    validations: int = 0
    blocks: int = 0
    blocks_by_category: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    latencies_ms: collections.deque[float] = dataclasses.field(
        default_factory=lambda: collections.deque(maxlen=LATENCY_WINDOW)
    )
    # Counts not yet added to the shared hourly counters (`activity_counts`), by metric name.
    unflushed: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)

    def record(self, *, blocked: bool, category: str, latency_ms: float) -> None:
        self.validations += 1
        self.unflushed["guard_validations"] += 1
        if blocked:
            self.blocks += 1
            self.blocks_by_category[category] += 1
            self.unflushed[f"guard_blocks_{category}"] += 1
        self.latencies_ms.append(latency_ms)

    def take_unflushed(self) -> collections.Counter[str]:
        taken, self.unflushed = self.unflushed, collections.Counter()
        return taken

    def latency(self) -> dict[str, float | None]:
        """p50 and p99 (milliseconds) of the recent validations (None before any)."""
        if not self.latencies_ms:
            return {"p50": None, "p99": None, "samples": 0}
        ordered = sorted(self.latencies_ms)
        return {
            "p50": round(ordered[len(ordered) // 2], 3),
            "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 3),
            "samples": len(ordered),
        }


@dataclasses.dataclass(frozen=True)
class Recent:
    tenant_id: str
    text: str
    category: str
    blocked: bool
    at: float


class RecentValidations:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._items: collections.OrderedDict[str, Recent] = collections.OrderedDict()
        self._chars = 0

    def add(self, validation_id: str, tenant_id: str, text: str, *, category: str, blocked: bool) -> None:
        self._items[validation_id] = Recent(tenant_id, text, category, blocked, self._clock())
        self._chars += len(text)
        self._trim()

    def get(self, tenant_id: str, validation_id: str) -> Recent | None:
        """The validation if it is recent and the tenant's (another tenant's id answers None)."""
        self._trim()
        found = self._items.get(validation_id)
        return found if found is not None and found.tenant_id == tenant_id else None

    def _trim(self) -> None:
        expired = self._clock() - RECENT_TTL
        while self._items:
            oldest = next(iter(self._items.values()))
            if oldest.at > expired and self._chars <= RECENT_CHARS:
                break
            self._items.popitem(last=False)
            self._chars -= len(oldest.text)


@dataclasses.dataclass
class GuardMemory:
    counters: dict[str, GuardCounters] = dataclasses.field(default_factory=dict)
    recent: RecentValidations = dataclasses.field(default_factory=RecentValidations)

    def of(self, tenant_id: str) -> GuardCounters:
        counters = self.counters.get(tenant_id)
        if counters is None:
            counters = self.counters[tenant_id] = GuardCounters()
        return counters
