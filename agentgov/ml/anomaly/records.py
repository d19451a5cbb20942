"""What the detector sees of one audit entry."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any


def reasoning_text(value: Any) -> str | None:
    """Reasoning as one text: a list of steps is joined with newlines; None or empty stays None."""
    if value is None:
        return None
    if isinstance(value, str):
        return value or None
    if isinstance(value, list | tuple):
        text = "\n".join(str(step) for step in value)
        return text or None
    return str(value)


def _timestamp(value: Any) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    else:
        raise ValueError(f"timestamp must be an ISO 8601 string or a datetime, not {type(value).__name__}")
    if moment.utcoffset() is None:
        raise ValueError("timestamp must carry a time zone")
    return moment.astimezone(UTC)


@dataclasses.dataclass(frozen=True, slots=True)
class ActionEvent:
    """One action of one agent. `timestamp` is timezone-aware (normalised to UTC by `from_mapping`)."""

    agent_id: str
    action: str
    timestamp: datetime
    resource: str | None = None
    input: Mapping[str, Any] | None = None
    output: Any = None
    reasoning: str | None = None

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any]) -> ActionEvent:
        """From an audit entry's public shape (or a data set row): `timestamp` an ISO string or datetime,
        `reasoning` a string or a list of steps. Raises `ValueError` for a missing or naive timestamp and
        `KeyError` for a missing `agent_id` or `action`."""
        data = m.get("input")
        return cls(
            agent_id=str(m["agent_id"]),
            action=str(m["action"]),
            timestamp=_timestamp(m.get("timestamp")),
            resource=None if m.get("resource") is None else str(m["resource"]),
            input=data if isinstance(data, Mapping) else None,
            output=m.get("output"),
            reasoning=reasoning_text(m.get("reasoning")),
        )

    def without_reasoning(self) -> ActionEvent:
        return dataclasses.replace(self, reasoning=None)
