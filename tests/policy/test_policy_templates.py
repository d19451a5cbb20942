"""Policy templates: every one validates, and every example yields its documented decision."""

from __future__ import annotations

import json

import pytest

from agentgov.policy import (
    TEMPLATES,
    PolicyDocument,
    PolicyTemplate,
    TemplateParameterError,
    compile_policy_set,
    get_template,
    validate_document,
)
from agentgov.policy.templates import TemplateExample

EXAMPLES = [(t, e) for t in TEMPLATES for e in t.examples]


def test_catalogue_covers_the_governance_cases() -> None:
    ids = [t.id for t in TEMPLATES]
    assert len(ids) >= 8 and len(set(ids)) == len(ids)
    for required in (
        "block-destructive-shell",
        "block-destructive-sql",
        "pii-export-requires-consent",
        "payment-approval",
        "deny-unhealthy-agents",
        "capability-required",
        "business-hours-only",
        "deny-high-risk-agents",
        "no-external-network-for-tools",
    ):
        assert required in ids
    for t in TEMPLATES:
        assert t.name and t.description and t.examples
        assert all(p.description for p in t.parameters)


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.id)
def test_rendered_template_validates_against_the_schema(template: PolicyTemplate) -> None:
    validated = validate_document(PolicyDocument(template.id, template.render()))
    assert all(p.policy_id and p.policy_id.startswith(template.id) for p in validated.policies)
    assert all(p.reason and p.severity for p in validated.policies)


@pytest.mark.parametrize(("template", "example"), EXAMPLES, ids=lambda x: getattr(x, "id", None) or x.description)
def test_template_example_yields_the_documented_decision(template: PolicyTemplate, example: TemplateExample) -> None:
    policy_set = compile_policy_set(
        [PolicyDocument(template.id, template.render())], default_allow=example.default_allow
    )
    decision = policy_set.evaluate(
        example.agent,
        example.action,
        example.resource,
        example.context,
        now=example.now,
        anomaly_score=example.anomaly_score,
    )
    assert (decision.allowed, decision.required_approval, decision.severity) == (
        example.allowed,
        example.required_approval,
        example.severity,
    ), decision.reason
    assert not decision.errors
    if not decision.default_applied:
        assert all(ref.startswith(template.id) for ref in decision.determining_policies)


def test_templates_serialise_to_json() -> None:
    body = json.loads(json.dumps([t.to_dict() for t in TEMPLATES]))
    first = body[0]
    assert {"id", "name", "description", "parameters", "cedar", "examples"} <= first.keys()
    assert {"name", "type", "default", "description"} <= first["parameters"][0].keys()
    assert {"request", "decision"} <= first["examples"][0].keys()


def test_parameters_change_the_rendered_policy() -> None:
    template = get_template("payment-approval")
    ps = compile_policy_set([PolicyDocument("p", template.render({"threshold": 50, "policy_id": "pay"}))])
    agent = TEMPLATES[0].examples[0].agent
    decision = ps.evaluate(agent, "payments.transfer", "account:1", {"amount": 60})
    assert decision.allowed and decision.required_approval and decision.determining_policies == ("pay.approval",)
    # without an amount, approval is required too
    assert ps.evaluate(agent, "payments.transfer", "account:1", {}).required_approval


def test_business_hours_parameters() -> None:
    from datetime import UTC, datetime

    template = get_template("business-hours-only")
    ps = compile_policy_set(
        [PolicyDocument("bh", template.render({"start_hour": 6, "end_hour": 22, "weekdays": [6, 7]}))]
    )
    agent = TEMPLATES[0].examples[0].agent
    saturday_7 = datetime(2024, 6, 8, 7, 0, tzinfo=UTC)
    wednesday_12 = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)
    assert ps.evaluate(agent, "x", "r", now=saturday_7).default_applied
    assert not ps.evaluate(agent, "x", "r", now=wednesday_12).allowed


def test_string_parameters_are_escaped() -> None:
    template = get_template("capability-required")
    cedar = template.render({"capability": 'pay"ments\\ x', "action_patterns": ['pay"*']})
    ps = compile_policy_set([PolicyDocument("c", cedar)], default_allow=True)
    agent = dict(TEMPLATES[0].examples[0].agent)
    assert not ps.evaluate(agent, 'pay"out', "r").allowed
    agent["capabilities"] = ['pay"ments\\ x']
    assert ps.evaluate(agent, 'pay"out', "r").allowed


@pytest.mark.parametrize(
    ("template_id", "params", "fragment"),
    [
        ("payment-approval", {"thresold": 5}, "unknown parameter(s) thresold"),
        ("payment-approval", {"threshold": "high"}, "parameter 'threshold' must be an integer"),
        ("payment-approval", {"threshold": -1}, "must be at least 0, got -1"),
        ("payment-approval", {"severity": "urgent"}, "parameter 'severity' must be one of"),
        ("payment-approval", {"action_patterns": []}, "must be a non-empty list"),
        ("payment-approval", {"policy_id": "bad id"}, "parameter 'policy_id' must be an id"),
        ("deny-unhealthy-agents", {"statuses": ["sleeping"]}, "must be a list of active, inactive, error"),
        ("deny-high-risk-agents", {"max_risk_bp": 0.8}, "must be an integer"),
        ("deny-high-risk-agents", {"max_risk_bp": 10_001}, "within 0..10000"),
        ("business-hours-only", {"start_hour": 18}, "must be before end_hour"),
        ("business-hours-only", {"weekdays": [0]}, "within 1..7"),
        ("capability-required", {"capability": ""}, "must be a non-empty string"),
    ],
)
def test_bad_parameters_are_rejected(template_id: str, params: dict[str, object], fragment: str) -> None:
    with pytest.raises(TemplateParameterError, match=f"template '{template_id}'") as info:
        get_template(template_id).render(params)
    assert fragment in str(info.value)


def test_unknown_template() -> None:
    with pytest.raises(KeyError):
        get_template("nope")
