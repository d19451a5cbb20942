"""The risk function: bounds, monotonicity, levels and factor reporting."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from agentgov.policy.risk import assess_risk, risk_level

HEAVY_CONTEXT: dict[str, Any] = {
    "pii": True,
    "amount": 10**9,
    "record_count": 10**6,
    "network_zone": "external",
    "environment": "production",
    "data_classification": "restricted",
}


@pytest.mark.parametrize("agent_risk", [None, 0.0, 0.35, 0.999, 1.0])
@pytest.mark.parametrize("severity", [None, "low", "medium", "high", "critical"])
@pytest.mark.parametrize("context", [{}, {"pii": True, "consent": True}, HEAVY_CONTEXT])
def test_score_is_always_within_bounds_and_matches_its_level(
    agent_risk: float | None, severity: str | None, context: dict[str, Any]
) -> None:
    for allowed, approval, default, errors in itertools.product([True, False], [True, False], [True, False], [0, 3]):
        risk = assess_risk(
            agent_risk=agent_risk,
            allowed=allowed,
            required_approval=approval,
            default_applied=default,
            severity=severity,
            context=context,
            policy_errors=errors,
        )
        assert 0.0 <= risk.score <= 1.0
        assert risk.level == risk_level(risk.score)
        if agent_risk is not None:
            assert risk.score >= agent_risk - 1e-9  # factors never lower the agent's own risk


def _plain(**kw: Any) -> float:
    args: dict[str, Any] = {
        "agent_risk": 0.2,
        "allowed": True,
        "required_approval": False,
        "default_applied": False,
        "severity": None,
        "context": {},
    }
    args.update(kw)
    return assess_risk(**args).score


def test_no_factor_means_the_agent_risk() -> None:
    assert _plain() == 0.2
    assert _plain(agent_risk=0.0) == 0.0
    assert _plain(agent_risk=None) == 0.1


def test_every_signal_raises_the_score() -> None:
    base = _plain()
    assert _plain(severity="low") > base
    assert _plain(severity="critical") > _plain(severity="high") > _plain(severity="medium") > _plain(severity="low")
    assert _plain(allowed=False) > base
    assert _plain(required_approval=True) > base
    assert _plain(context={"pii": True}) > base
    assert _plain(context={"pii": True}) > _plain(context={"pii": True, "consent": True})
    assert _plain(context={"amount": 10_000}) > _plain(context={"amount": 9_999}) == base
    assert _plain(policy_errors=1) > base


def test_noisy_or_combination_is_exact() -> None:
    risk = assess_risk(
        agent_risk=0.5,
        allowed=False,
        required_approval=False,
        default_applied=False,
        severity="critical",
        context={},
    )
    # 1 - (1 - 0.5) * (1 - 0.5) * (1 - 0.2)
    assert risk.score == pytest.approx(0.8)
    assert risk.level == "critical"
    assert [f.name for f in risk.factors] == ["agent_risk", "severity_critical", "denied_by_policy"]


def test_maximal_risk_is_one() -> None:
    risk = assess_risk(
        agent_risk=1.0,
        allowed=False,
        required_approval=False,
        default_applied=False,
        severity="critical",
        context=HEAVY_CONTEXT,
    )
    assert risk.score == 1.0 and risk.level == "critical"


@pytest.mark.parametrize(
    ("score", "level"),
    [
        (0.0, "low"),
        (0.2499, "low"),
        (0.25, "medium"),
        (0.4999, "medium"),
        (0.5, "high"),
        (0.75, "critical"),
        (1.0, "critical"),
    ],
)
def test_levels(score: float, level: str) -> None:
    assert risk_level(score) == level


def test_factors_are_reported_as_json() -> None:
    risk = assess_risk(
        agent_risk=None,
        allowed=True,
        required_approval=True,
        default_applied=False,
        severity="high",
        context={"pii": True, "environment": "production"},
    )
    body = risk.to_dict()
    names = [f["name"] for f in body["factors"]]
    assert names == [
        "agent_risk_unknown",
        "severity_high",
        "approval_required",
        "pii",
        "pii_without_consent",
        "production",
    ]
    assert body["level"] == risk.level and body["score"] == risk.score


@pytest.mark.parametrize(("agent_risk", "severity"), [(1.5, None), (-0.1, None), (0.5, "urgent")])
def test_invalid_inputs_raise(agent_risk: float, severity: str | None) -> None:
    with pytest.raises(ValueError):
        assess_risk(
            agent_risk=agent_risk,
            allowed=True,
            required_approval=False,
            default_applied=False,
            severity=severity,
            context={},
        )
