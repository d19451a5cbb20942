"""UTC timestamps as fixed-width ISO-8601 strings, so text order is time order in every backend."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> datetime:
    return datetime.now(UTC)


def to_iso(moment: datetime) -> str:
    """`2026-11-22T17:32:11.123456Z` (always microseconds, always UTC)."""
    m = moment.astimezone(UTC)
    return f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}.{m.microsecond:06d}Z"


def now_iso() -> str:
    return to_iso(now())


def parse_iso(text: str) -> datetime:
    """Parse a timestamp written by `to_iso` (or any ISO-8601 string with an offset)."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))
