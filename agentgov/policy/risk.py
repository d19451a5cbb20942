"""Risk of a checked action: a small, documented, pure function.

The score combines independent signals with a *noisy-OR*: starting from the agent's own risk ``b`` (its
registry ``risk_score``, or 0.10 when unknown), each factor with weight ``w`` in [0, 1] raises the score to
``1 - (1 - score) * (1 - w)``. The result is therefore always within [0.0, 1.0], never decreases when a
factor is added, and equals ``b`` when no factor applies.

==========================  =======  ========================================================================
factor                      weight   when
==========================  =======  ========================================================================
agent_risk                  b        the agent's registry risk score (base value, not multiplied)
agent_risk_unknown          0.10     the registry has no risk score for the agent (base value)
severity_low .. _critical   0.05, 0.15, 0.30, 0.50  highest ``@severity`` among the determining policies
denied_by_policy            0.20     a forbid policy denied the action
denied_by_default           0.05     no policy applied and the tenant default is deny
no_policy_applied           0.05     no policy applied and the tenant default is allow
approval_required           0.15     allowed, but a determining permit requires human approval
policy_errors               0.20     at least one policy failed during evaluation (and was skipped)
pii                         0.15     ``context.pii`` is true
pii_without_consent         0.20     ``context.pii`` is true and ``context.consent`` is not true
large_amount                0.15     ``context.amount`` >= 10 000 (tenant currency unit)
bulk_records                0.15     ``context.record_count`` >= 1 000
external_network            0.10     ``context.network_zone`` is ``"external"``
production                  0.10     ``context.environment`` is ``"production"`` or ``"prod"``
classified_data             0.10 / 0.20  ``context.data_classification`` is confidential / restricted
==========================  =======  ========================================================================

Levels: score < 0.25 ``low``, < 0.50 ``medium``, < 0.75 ``high``, otherwise ``critical``. The risk is a signal
for reviewers and dashboards; it never changes the allow/deny decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

UNKNOWN_AGENT_RISK = 0.10
SEVERITY_WEIGHTS: dict[str, float] = {"low": 0.05, "medium": 0.15, "high": 0.30, "critical": 0.50}
LARGE_AMOUNT = 10_000
BULK_RECORDS = 1_000
RISK_LEVELS: tuple[tuple[float, str], ...] = ((0.25, "low"), (0.50, "medium"), (0.75, "high"))


@dataclass(frozen=True, slots=True)
class RiskFactor:
    """One signal that contributed to the risk score, with its weight."""

    name: str
    weight: float
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight, "detail": self.detail}


@dataclass(frozen=True, slots=True)
class RiskAssessment:
    """``score`` in [0.0, 1.0], its ``level`` (low, medium, high, critical) and the contributing factors."""

    score: float
    level: str
    factors: tuple[RiskFactor, ...]

    def to_dict(self) -> dict[str, Any]:
        """The ``risk`` object of the policy decision response."""
        return {"level": self.level, "score": self.score, "factors": [f.to_dict() for f in self.factors]}


def risk_level(score: float) -> str:
    """Map a score in [0, 1] to ``low``, ``medium``, ``high`` or ``critical``."""
    for bound, level in RISK_LEVELS:
        if score < bound:
            return level
    return "critical"


def _context_factors(context: Mapping[str, Any]) -> list[RiskFactor]:
    factors: list[RiskFactor] = []
    if context.get("pii") is True:
        factors.append(RiskFactor("pii", 0.15, "the action touches personal data"))
        if context.get("consent") is not True:
            factors.append(RiskFactor("pii_without_consent", 0.20, "no consent flag for personal data"))
    amount = context.get("amount")
    if isinstance(amount, int) and not isinstance(amount, bool) and amount >= LARGE_AMOUNT:
        factors.append(RiskFactor("large_amount", 0.15, f"amount {amount} >= {LARGE_AMOUNT}"))
    records = context.get("record_count")
    if isinstance(records, int) and not isinstance(records, bool) and records >= BULK_RECORDS:
        factors.append(RiskFactor("bulk_records", 0.15, f"{records} records >= {BULK_RECORDS}"))
    if context.get("network_zone") == "external":
        factors.append(RiskFactor("external_network", 0.10, "destination is an external network"))
    if context.get("environment") in ("production", "prod"):
        factors.append(RiskFactor("production", 0.10, "targets the production environment"))
    classification = context.get("data_classification")
    if classification in ("confidential", "restricted"):
        weight = 0.20 if classification == "restricted" else 0.10
        factors.append(RiskFactor("classified_data", weight, f"data classified {classification}"))
    return factors


def assess_risk(
    *,
    agent_risk: float | None,
    allowed: bool,
    required_approval: bool,
    default_applied: bool,
    severity: str | None,
    context: Mapping[str, Any],
    policy_errors: int = 0,
) -> RiskAssessment:
    """Score the risk of one decided action (see the module docstring for the model).

    ``agent_risk`` is the agent's registry risk in [0, 1] or ``None``; ``context`` is the typed Cedar context
    (unknown or mistyped keys are simply ignored). Raises ``ValueError`` if ``agent_risk`` is outside [0, 1]
    or ``severity`` is not a known severity. Pure; never reads the clock or any global state.
    """
    if agent_risk is not None and not (0.0 <= agent_risk <= 1.0):
        raise ValueError(f"agent_risk must be within [0, 1], got {agent_risk!r}")
    if severity is not None and severity not in SEVERITY_WEIGHTS:
        raise ValueError(f"unknown severity {severity!r}")

    if agent_risk is None:
        base = RiskFactor("agent_risk_unknown", UNKNOWN_AGENT_RISK, "the agent has no risk score yet")
    else:
        base = RiskFactor("agent_risk", float(agent_risk), f"agent risk score {agent_risk:.2f}")
    factors = [base] if base.weight > 0 else []
    if severity is not None:
        factors.append(RiskFactor(f"severity_{severity}", SEVERITY_WEIGHTS[severity], f"policy severity {severity}"))
    if not allowed and not default_applied:
        factors.append(RiskFactor("denied_by_policy", 0.20, "a forbid policy denied the action"))
    elif default_applied:
        name = "no_policy_applied" if allowed else "denied_by_default"
        factors.append(RiskFactor(name, 0.05, "no policy applied; the tenant default decided"))
    if required_approval:
        factors.append(RiskFactor("approval_required", 0.15, "a permit policy requires human approval"))
    if policy_errors:
        factors.append(RiskFactor("policy_errors", 0.20, f"{policy_errors} policy(ies) failed during evaluation"))
    factors.extend(_context_factors(context))

    remaining = 1.0
    for factor in factors:
        remaining *= 1.0 - factor.weight
    score = round(min(1.0, max(0.0, 1.0 - remaining)), 4)
    return RiskAssessment(score=score, level=risk_level(score), factors=tuple(factors))
