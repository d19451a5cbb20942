"""Reading settings from the environment: the error every bad setting raises, and the number rule they share."""

from __future__ import annotations

import math
from collections.abc import Mapping


class ConfigError(ValueError):
    """A setting is missing or invalid; the message names the setting."""


def number(env: Mapping[str, str], name: str, default: float, *, minimum: float | None = None) -> float:
    """`env[name]` as a finite number (`default` when unset or empty): positive, or at least `minimum` when
    given. Raises `ConfigError` naming the setting."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, not {raw!r}") from None
    if not math.isfinite(value) or (value <= 0 if minimum is None else value < minimum):
        raise ConfigError(f"{name} must be {'positive' if minimum is None else f'at least {minimum:g}'}")
    return value
