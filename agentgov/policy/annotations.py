"""Policy metadata carried in Cedar annotations, and its validation.

=====================  ====================================================================================
annotation             allowed values
=====================  ====================================================================================
``@id("...")``         optional; 1..128 characters from ``A-Z a-z 0-9 . _ : -``, starting with a letter or
                       digit; unique among a tenant's active policies. Names the policy in decisions.
``@reason("...")``     optional; 1..500 characters of human-readable text, quoted in decision reasons.
``@severity("...")``   optional; ``low`` < ``medium`` < ``high`` < ``critical`` (lower case).
``@requires_approval`` optional; ``"true"`` or ``"false"``. ``"true"`` is only accepted on ``permit``
                       policies: an allow decided by such a permit needs human approval (see
                       :mod:`agentgov.policy.engine`). A forbid is always a hard deny.
=====================  ====================================================================================

Other annotations (``@description``, ``@owner``, ...) are allowed and ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

SEVERITIES: tuple[str, ...] = ("low", "medium", "high", "critical")
"""Severity values in increasing order."""

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
MAX_REASON_CHARS = 500

Effect = Literal["permit", "forbid"]


def severity_rank(severity: str | None) -> int:
    """0 for ``None``, then 1 (``low``) .. 4 (``critical``). Raises ``ValueError`` for an unknown value."""
    return 0 if severity is None else SEVERITIES.index(severity) + 1


def highest_severity(severities: Iterable[str | None]) -> str | None:
    """The highest of ``severities`` ignoring ``None``; ``None`` if there is none."""
    best: str | None = None
    for s in severities:
        if severity_rank(s) > severity_rank(best):
            best = s
    return best


@dataclass(frozen=True, slots=True)
class PolicyAnnotations:
    """The validated metadata of one policy."""

    policy_id: str | None = None
    reason: str | None = None
    severity: str | None = None
    requires_approval: bool = False


def parse_annotations(raw: Mapping[str, str], effect: Effect) -> tuple[PolicyAnnotations, list[str]]:
    """Validate the annotations of one policy.

    Returns the parsed metadata (invalid values are left at their defaults) and a list of problem messages,
    empty when every annotation is valid. Never raises.
    """
    problems: list[str] = []
    policy_id = raw.get("id")
    if policy_id is not None and not _ID_RE.fullmatch(policy_id):
        problems.append(
            f"@id must be 1..128 characters from A-Z a-z 0-9 . _ : - starting with a letter or digit, got {policy_id!r}"
        )
        policy_id = None

    reason = raw.get("reason")
    if reason is not None and not (len(reason.strip()) > 0 and len(reason) <= MAX_REASON_CHARS):
        problems.append(f"@reason must be 1..{MAX_REASON_CHARS} characters of text")
        reason = None

    severity = raw.get("severity")
    if severity is not None and severity not in SEVERITIES:
        problems.append(f"@severity must be one of {', '.join(SEVERITIES)}, got {severity!r}")
        severity = None

    approval_raw = raw.get("requires_approval")
    requires_approval = False
    if approval_raw is not None:
        if approval_raw not in ("true", "false"):
            problems.append(f'@requires_approval must be "true" or "false", got {approval_raw!r}')
        elif approval_raw == "true" and effect == "forbid":
            problems.append(
                '@requires_approval("true") is only allowed on permit policies; a forbid is always a hard deny'
            )
        else:
            requires_approval = approval_raw == "true"

    return PolicyAnnotations(policy_id, reason, severity, requires_approval), problems
