"""The detector's parameters (stored with every model version)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class AnomalyParams:
    """
    target_alert_rate: share of normal traffic over the threshold, calibrated on the history itself.
    session_gap_seconds: a longer silence starts a new session (sequences are learnt within sessions).
    min_events_per_agent: an agent with fewer events in the history is not modelled (scored as unknown).
    warmup_fraction: the first part of each agent's history only teaches; the rest is also scored against
        what came before it, which gives each component's distribution on normal traffic (its p-values).
    max_values_per_key: distinct argument values remembered per (tool, argument), to bound the model size.
    """

    target_alert_rate: float = 0.01
    session_gap_seconds: float = 900.0
    min_events_per_agent: int = 30
    warmup_fraction: float = 0.3
    max_values_per_key: int = 400

    def __post_init__(self) -> None:
        if not 0.0 < self.target_alert_rate < 0.5:
            raise ValueError("target_alert_rate must be between 0 and 0.5")
        if self.session_gap_seconds <= 0:
            raise ValueError("session_gap_seconds must be positive")
        if self.min_events_per_agent < 5:
            raise ValueError("min_events_per_agent must be at least 5")
        if not 0.0 < self.warmup_fraction < 0.9:
            raise ValueError("warmup_fraction must be between 0 and 0.9")
        if self.max_values_per_key < 10:
            raise ValueError("max_values_per_key must be at least 10")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AnomalyParams:
        """Raises `ValueError` for an unknown name or a value out of range, `TypeError` for a wrong type."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown parameter(s): {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for field in dataclasses.fields(cls):
            if field.name in data:
                value = data[field.name]
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise TypeError(f"{field.name} must be a number")
                values[field.name] = int(value) if field.type in ("int", int) else float(value)
        return cls(**values)
