"""A self-test of the Cedar engine for the readiness probe."""

from __future__ import annotations

import cedarpy

_POLICY = 'permit(principal == User::"canary", action == Action::"probe", resource);'
_ENTITIES: list[dict[str, object]] = []


def canary_ok() -> bool:
    """True when cedarpy permits the canary request and denies a different principal."""
    allowed = cedarpy.is_authorized(
        {"principal": 'User::"canary"', "action": 'Action::"probe"', "resource": 'Thing::"x"', "context": {}},
        _POLICY,
        _ENTITIES,
    )
    denied = cedarpy.is_authorized(
        {"principal": 'User::"other"', "action": 'Action::"probe"', "resource": 'Thing::"x"', "context": {}},
        _POLICY,
        _ENTITIES,
    )
    return allowed.decision == cedarpy.Decision.Allow and denied.decision == cedarpy.Decision.Deny
