"""Evaluation of compiled policy sets: decisions, approval, severity, reasons, context, errors."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from agentgov.policy import (
    AgentAttributes,
    CompiledPolicySet,
    InvalidRequestError,
    PolicyDocument,
    canary_ok,
    compile_policy_set,
    validate_document,
)
from agentgov.policy.annotations import highest_severity, severity_rank

NOON_WEDNESDAY = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)


def agent(**changes: Any) -> dict[str, Any]:
    return {
        "id": "0b7a4c1e-1111-4111-8111-111111111111",
        "name": "billing-bot",
        "type": "llm",
        "status": "active",
        "capabilities": ["payments"],
        "risk_score": 0.1,
        **changes,
    }


def policy_set(*cedar: str, default_allow: bool = False) -> CompiledPolicySet:
    docs = [PolicyDocument(f"doc{i}", text) for i, text in enumerate(cedar, start=1)]
    return compile_policy_set(docs, default_allow=default_allow)


PERMIT_ALL = '@id("permit-all") @reason("baseline") @severity("low") permit (principal, action, resource);'


def test_forbid_overrides_permit_and_reason_names_the_forbid() -> None:
    ps = policy_set(
        PERMIT_ALL,
        '@id("no-sql-drop") @reason("Destructive SQL") @severity("critical")\n'
        'forbid (principal, action, resource) when { context.action like "sql.drop*" };',
    )
    decision = ps.evaluate(agent(), "sql.drop_table", "postgres:crm", {}, now=NOON_WEDNESDAY)
    assert decision.allowed is False
    assert decision.determining_policies == ("no-sql-drop",)
    assert decision.reason == "Denied by forbid policy 'no-sql-drop' (Destructive SQL)"
    assert decision.severity == "critical"
    assert decision.required_approval is False
    assert decision.default_applied is False

    other = ps.evaluate(agent(), "sql.select", "postgres:crm", {}, now=NOON_WEDNESDAY)
    assert other.allowed is True and other.determining_policies == ("permit-all",)
    assert other.reason == "Allowed by permit policy 'permit-all' (baseline)"


def test_default_decision_when_no_policy_applies() -> None:
    cedar = '@id("p") permit (principal, action == Action::"chat.reply", resource);'
    deny_default = policy_set(cedar).evaluate(agent(), "files.read", "fs:/tmp/x", now=NOON_WEDNESDAY)
    assert deny_default.allowed is False and deny_default.default_applied
    assert deny_default.determining_policies == () and deny_default.severity is None
    assert deny_default.reason == "No policy applies; the tenant default is to deny"

    allow_default = policy_set(cedar, default_allow=True).evaluate(agent(), "files.read", "fs:/tmp/x")
    assert allow_default.allowed is True and allow_default.default_applied
    assert allow_default.reason == "No policy applies; the tenant default is to allow"
    assert allow_default.required_approval is False


def test_empty_policy_set_uses_the_default() -> None:
    assert compile_policy_set([]).evaluate(agent(), "a", "r").allowed is False
    assert compile_policy_set([], default_allow=True).evaluate(agent(), "a", "r").allowed is True


def test_inactive_documents_are_not_compiled() -> None:
    ps = compile_policy_set([PolicyDocument("off", PERMIT_ALL, is_active=False)])
    assert len(ps) == 0
    assert ps.evaluate(agent(), "a", "r").allowed is False


def test_required_approval_from_a_determining_permit() -> None:
    ps = policy_set(
        '@id("small") permit (principal, action == Action::"payments.transfer", resource)\n'
        "when { context has amount && context.amount <= 1000 };\n"
        '@id("large") @requires_approval("true") @severity("high") @reason("big payment")\n'
        'permit (principal, action == Action::"payments.transfer", resource)\n'
        "when { context has amount && context.amount > 1000 };"
    )
    large = ps.evaluate(agent(), "payments.transfer", "account:1", {"amount": 5000})
    assert large.allowed and large.required_approval
    assert large.determining_policies == ("large",)
    assert "human approval required by 'large'" in large.reason
    small = ps.evaluate(agent(), "payments.transfer", "account:1", {"amount": 10})
    assert small.allowed and not small.required_approval and small.determining_policies == ("small",)


def test_one_approval_permit_among_several_is_enough() -> None:
    ps = policy_set(PERMIT_ALL, '@id("needs-human") @requires_approval("true") permit (principal, action, resource);')
    decision = ps.evaluate(agent(), "x", "r")
    assert decision.allowed and decision.required_approval
    assert set(decision.determining_policies) == {"permit-all", "needs-human"}


def test_denial_never_requires_approval() -> None:
    ps = policy_set(
        '@id("needs-human") @requires_approval("true") permit (principal, action, resource);',
        '@id("block") forbid (principal, action, resource);',
    )
    decision = ps.evaluate(agent(), "x", "r")
    assert not decision.allowed and not decision.required_approval
    assert decision.determining_policies == ("block",)


def test_severity_is_the_highest_among_determining_policies() -> None:
    ps = policy_set(
        '@id("m") @severity("medium") @reason("first") forbid (principal, action, resource);\n'
        '@id("c") @severity("critical") @reason("second") forbid (principal, action, resource) '
        'when { context.action == "danger" };\n'
        '@id("h") @severity("high") forbid (principal, action, resource);\n'
        '@id("n") forbid (principal, action, resource);'
    )
    decision = ps.evaluate(agent(), "danger", "r")
    assert decision.severity == "critical"
    assert set(decision.determining_policies) == {"m", "c", "h", "n"}
    assert ps.evaluate(agent(), "calm", "r").severity == "high"
    assert severity_rank("low") < severity_rank("medium") < severity_rank("high") < severity_rank("critical")
    assert highest_severity([None, "low", "high", "medium"]) == "high"
    assert highest_severity([None, None]) is None


def test_reason_names_every_determining_policy_with_its_reason() -> None:
    ps = policy_set(
        '@id("a") @reason("reason A") forbid (principal, action, resource);\nforbid (principal, action, resource);'
    )
    decision = ps.evaluate(agent(), "x", "r")
    assert decision.reason.startswith("Denied by forbid policies ")
    assert "'a' (reason A)" in decision.reason
    assert "'doc1#2'" in decision.reason  # no @id: document name and position
    assert sorted(decision.determining_policies) == ["a", "doc1#2"]


def test_has_guarded_context_consent_pattern() -> None:
    ps = policy_set(
        '@id("consent") permit (principal, action, resource)\nwhen { context has consent && context.consent == true };'
    )
    assert ps.evaluate(agent(), "crm.export", "r", {"consent": True}).allowed
    assert not ps.evaluate(agent(), "crm.export", "r", {"consent": False}).allowed
    assert not ps.evaluate(agent(), "crm.export", "r", {}).allowed
    assert not ps.evaluate(agent(), "crm.export", "r", {"consent": None}).allowed  # null means absent


def test_action_entity_and_context_action_forms() -> None:
    ps = policy_set(
        '@id("by-entity") forbid (principal, action == Action::"payments.transfer", resource);\n'
        '@id("by-like") forbid (principal, action, resource) when { context.action like "sql.*" };\n'
        '@id("by-set") forbid (principal, action in [Action::"a.b", Action::"c"], resource);',
        default_allow=True,
    )
    assert ps.evaluate(agent(), "payments.transfer", "r").determining_policies == ("by-entity",)
    assert ps.evaluate(agent(), "sql.query", "r").determining_policies == ("by-like",)
    assert ps.evaluate(agent(), "c", "r").determining_policies == ("by-set",)
    assert ps.evaluate(agent(), "payments.refund", "r").allowed


def test_risk_score_is_in_basis_points_and_optional() -> None:
    ps = policy_set(
        '@id("risky") forbid (principal, action, resource) '
        "when { principal has risk_score && principal.risk_score >= 8000 };",
        default_allow=True,
    )
    assert not ps.evaluate(agent(risk_score=0.8), "x", "r").allowed
    assert ps.evaluate(agent(risk_score=0.7999), "x", "r").allowed
    assert ps.evaluate(agent(risk_score=None), "x", "r").allowed
    assert AgentAttributes(id="a", name="", type="tool", status="active", risk_score=0.73).risk_basis_points == 7300


def test_agent_and_resource_attributes_are_visible() -> None:
    ps = policy_set(
        '@id("tool-web") forbid (principal, action, resource) when '
        '{ principal.type == "tool" && resource.kind == "https" &&\n'
        '  !principal.capabilities.contains("web") };\n'
        '@id("prod-bucket") forbid (principal, action, resource) when { resource.id like "s3://prod-*" };',
        default_allow=True,
    )
    tool = agent(type="tool", capabilities=[])
    assert ps.evaluate(tool, "http.get", "https://example.com").determining_policies == ("tool-web",)
    assert ps.evaluate(agent(type="tool", capabilities=["web"]), "http.get", "https://example.com").allowed
    assert ps.evaluate(agent(), "s3.get", "s3://prod-data/x").determining_policies == ("prod-bucket",)
    assert ps.evaluate(agent(), "s3.get", "s3://dev-data/x").allowed


def test_hour_and_weekday_come_from_now_not_from_the_client() -> None:
    ps = policy_set(
        '@id("night") forbid (principal, action, resource) when { context.hour < 8 || context.weekday > 5 };',
        default_allow=True,
    )
    night = datetime(2024, 6, 5, 3, 0, tzinfo=UTC)
    saturday = datetime(2024, 6, 8, 12, 0, tzinfo=UTC)
    assert not ps.evaluate(agent(), "x", "r", {"hour": 12, "weekday": 3}, now=night).allowed
    assert not ps.evaluate(agent(), "x", "r", now=saturday).allowed
    assert ps.evaluate(agent(), "x", "r", {"hour": 2}, now=NOON_WEDNESDAY).allowed


def test_client_cannot_spoof_the_action_through_context() -> None:
    ps = policy_set('@id("no-shell") forbid (principal, action, resource) when { context.action like "shell.*" };')
    decision = ps.evaluate(agent(), "shell.exec", "host:a", {"action": "chat.reply"})
    assert decision.determining_policies == ("no-shell",)


@pytest.mark.parametrize(
    ("context", "fragment"),
    [
        ({"amount": "100"}, "context.amount must be an integer"),
        ({"amount": 12.5}, "context.amount must be an integer"),
        ({"amount": True}, "context.amount must be an integer"),
        ({"amount": 2**70}, "context.amount must be an integer"),
        ({"consent": "yes"}, "context.consent must be a boolean"),
        ({"command": ["rm"]}, "context.command must be a string"),
        ({"labels": "a,b"}, "context.labels must be a list of strings"),
        ({"labels": ["a", 1]}, "context.labels must be a list of strings"),
    ],
)
def test_mistyped_declared_context_is_rejected(context: dict[str, Any], fragment: str) -> None:
    ps = policy_set(PERMIT_ALL)
    with pytest.raises(InvalidRequestError, match=fragment):
        ps.evaluate(agent(), "x", "r", context)


def test_undeclared_context_keys_are_ignored_and_integral_floats_accepted() -> None:
    ps = policy_set(
        '@id("cap") forbid (principal, action, resource)\nwhen { context has amount && context.amount > 100 };',
        default_allow=True,
    )
    free_form = {
        "ticket": "JIRA-1",
        "score": 0.3,
        "nested": {"a": [1, None]},
        "nothing": None,
        "amount": 100.0,
    }
    assert ps.evaluate(agent(), "x", "r", free_form).allowed
    assert not ps.evaluate(agent(), "x", "r", {"amount": 101.0}).allowed


def test_labels_set_is_usable() -> None:
    ps = policy_set(
        '@id("frozen") forbid (principal, action, resource)\n'
        'when { context has labels && context.labels.contains("freeze") };',
        default_allow=True,
    )
    assert not ps.evaluate(agent(), "x", "r", {"labels": ["freeze", "q4"]}).allowed
    assert ps.evaluate(agent(), "x", "r", {"labels": ["q4"]}).allowed


@pytest.mark.parametrize(
    ("changes", "fragment"),
    [
        ({"type": "robot"}, "agent.type must be one of"),
        ({"status": "sleeping"}, "agent.status must be one of"),
        ({"risk_score": 1.5}, "agent.risk_score must be a number in 0.0..1.0"),
        ({"risk_score": "high"}, "agent.risk_score"),
        ({"capabilities": "payments"}, "agent.capabilities"),
    ],
)
def test_bad_agent_attributes_are_rejected(changes: dict[str, Any], fragment: str) -> None:
    with pytest.raises(InvalidRequestError, match=fragment):
        policy_set(PERMIT_ALL).evaluate(agent(**changes), "x", "r")


def test_missing_agent_field_and_bad_action_are_rejected() -> None:
    record = agent()
    del record["status"]
    ps = policy_set(PERMIT_ALL)
    with pytest.raises(InvalidRequestError, match=r"agent\.status is required"):
        ps.evaluate(record, "x", "r")
    with pytest.raises(InvalidRequestError, match="action must be a non-empty string"):
        ps.evaluate(agent(), " ", "r")
    with pytest.raises(InvalidRequestError, match="context must be a JSON object"):
        ps.evaluate(agent(), "x", "r", ["not", "a", "dict"])  # type: ignore[arg-type]


def test_evaluation_error_skips_the_policy_and_is_reported() -> None:
    # Type-checks, but overflows at runtime for a huge amount: Cedar skips the erroring forbid.
    ps = policy_set(
        PERMIT_ALL,
        '@id("overflow") @severity("critical") forbid (principal, action, resource) '
        "when { context has amount && context.amount + context.amount > 0 };",
    )
    decision = ps.evaluate(agent(), "payments.transfer", "r", {"amount": 2**62})
    assert decision.allowed is True  # Cedar semantics: an erroring policy is ignored
    assert [e.policy for e in decision.errors] == ["overflow"]
    assert "overflow" in decision.errors[0].message
    assert "Skipped after evaluation errors: 'overflow'" in decision.reason
    assert "policy_errors" in {f.name for f in decision.risk.factors}
    # The same policy still denies when it evaluates normally.
    assert not ps.evaluate(agent(), "payments.transfer", "r", {"amount": 5}).allowed


def test_validated_documents_are_accepted_without_revalidation() -> None:
    validated = validate_document(PolicyDocument("v", PERMIT_ALL))
    ps = compile_policy_set([validated])
    assert ps.evaluate(agent(), "x", "r").allowed
    assert ps.policies == validated.policies


def test_to_response_has_the_spec_fields() -> None:
    body = policy_set(PERMIT_ALL).evaluate(agent(), "x", "r").to_response()
    assert {"allowed", "reason", "severity", "required_approval", "risk_score", "risk"} <= body.keys()
    assert body["allowed"] is True and body["severity"] == "low"
    assert body["risk"]["level"] in ("low", "medium", "high", "critical")
    assert body["risk_score"] == body["risk"]["score"]
    assert body["determining_policies"] == ["permit-all"] and body["errors"] == []


def test_canary() -> None:
    assert canary_ok() is True


def test_unusual_action_and_resource_strings_are_evaluated_verbatim() -> None:
    ps = policy_set(
        '@id("exact") forbid (principal, action == Action::"odd \\"name\\"\\nline", resource);',
        default_allow=True,
    )
    assert not ps.evaluate(agent(), 'odd "name"\nline', "").allowed
    assert ps.evaluate(agent(), "odd", "weird resource \u00e9\n").allowed


def test_request_failure_reason_names_the_cause() -> None:
    from agentgov.policy.decision import PolicyEvaluationError, explain

    text = explain(
        allowed=False,
        determining=[],
        default_allow=True,
        errors=[PolicyEvaluationError(None, "bad context")],
        request_failed=True,
    )
    assert text == "The request could not be evaluated by Cedar (bad context); denied"
