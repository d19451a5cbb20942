"""The result of evaluating a check request: :class:`Decision`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .document import PolicyInfo
from .risk import RiskAssessment


@dataclass(frozen=True, slots=True)
class PolicyEvaluationError:
    """A Cedar error raised while evaluating one policy (``policy`` is its ref, ``None`` if unknown).

    Per Cedar semantics the failing policy is skipped: it neither permits nor forbids.
    """

    policy: str | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return {"policy": self.policy, "message": self.message}


@dataclass(frozen=True, slots=True)
class Decision:
    """An allow/deny decision with its explanation and risk.

    * ``allowed`` -- the final decision (Cedar's, or the tenant default when no policy applies);
    * ``reason`` -- names the determining policies by ``@id`` (or ``<document>#<n>``) with their ``@reason``;
    * ``severity`` -- the highest ``@severity`` among the determining policies, ``None`` if none has one;
    * ``required_approval`` -- ``True`` only when allowed and a determining permit has
      ``@requires_approval("true")``;
    * ``determining_policies`` -- refs of the policies that decided (satisfied forbids for a policy deny,
      satisfied permits for an allow, empty when the default decided);
    * ``default_applied`` -- no policy applied (and no request error): the tenant default decided;
    * ``errors`` -- policies that failed during evaluation, and were therefore skipped;
    * ``risk`` / ``risk_score`` -- see :mod:`agentgov.policy.risk`.
    """

    allowed: bool
    reason: str
    severity: str | None
    required_approval: bool
    determining_policies: tuple[str, ...]
    default_applied: bool
    risk: RiskAssessment
    errors: tuple[PolicyEvaluationError, ...] = ()

    @property
    def risk_score(self) -> float:
        return self.risk.score

    def to_response(self) -> dict[str, Any]:
        """The JSON body of ``POST /policies/check`` (``anomaly`` is added by the caller)."""
        return {
            "allowed": self.allowed,
            "reason": self.reason,
            "severity": self.severity,
            "required_approval": self.required_approval,
            "risk_score": self.risk_score,
            "risk": self.risk.to_dict(),
            "determining_policies": list(self.determining_policies),
            "errors": [e.to_dict() for e in self.errors],
        }


def _named(policies: Sequence[PolicyInfo]) -> str:
    return "; ".join(f"'{p.ref}' ({p.reason})" if p.reason else f"'{p.ref}'" for p in policies)


def explain(
    *,
    allowed: bool,
    determining: Sequence[PolicyInfo],
    default_allow: bool,
    errors: Sequence[PolicyEvaluationError],
    request_failed: bool = False,
) -> str:
    """Human-readable ``reason`` text for a decision."""
    plural = "policies" if len(determining) > 1 else "policy"
    if request_failed:
        causes = "; ".join(e.message for e in errors) or "unknown error"
        return f"The request could not be evaluated by Cedar ({causes}); denied"
    if not determining:
        text = f"No policy applies; the tenant default is to {'allow' if default_allow else 'deny'}"
    elif allowed:
        text = f"Allowed by permit {plural} {_named(determining)}"
        approvers = [p.ref for p in determining if p.requires_approval]
        if approvers:
            text += "; human approval required by " + ", ".join(f"'{r}'" for r in approvers)
    else:
        text = f"Denied by forbid {plural} {_named(determining)}"
    if errors:
        failed = "; ".join(f"'{e.policy}': {e.message}" if e.policy else e.message for e in errors)
        text += f". Skipped after evaluation errors: {failed}"
    return text
