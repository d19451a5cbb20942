"""The Cedar text of each policy template, rendered from its checked parameters (the catalogue that names and
documents them is `agentgov.policy.templates`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .cedar_text import like_any, long_set, string_literal, string_set
from .errors import TemplateParameterError
from .schema import RISK_SCALE


def cedar_header(p: Mapping[str, Any], reason: str, *, suffix: str = "", approval: bool = False) -> str:
    lines = [f"@id({string_literal(p['policy_id'] + suffix)})", f"@severity({string_literal(p['severity'])})"]
    lines.append(f"@reason({string_literal(reason)})")
    if approval:
        lines.append('@requires_approval("true")')
    return "\n".join(lines)


def cedar_when(*conditions: str) -> str:
    return "when {\n  " + " &&\n  ".join(c for c in conditions if c) + "\n}"


def cedar_actions(patterns: tuple[str, ...]) -> str:
    """Condition on ``context.action``; empty (no condition) when the patterns match everything."""
    return "" if "*" in patterns else like_any("context.action", patterns)


def render_destructive_shell(p: Mapping[str, Any]) -> str:
    return (
        cedar_header(p, "Destructive shell commands are blocked")
        + "\nforbid (principal, action, resource)\n"
        + cedar_when(
            cedar_actions(p["action_patterns"]),
            "context has command",
            like_any("context.command", p["command_patterns"]),
        )
        + ";\n"
    )


def render_destructive_sql(p: Mapping[str, Any]) -> str:
    by_query = " && ".join(
        c
        for c in (
            cedar_actions(p["action_patterns"]),
            "context has query",
            like_any("context.query", p["query_patterns"]),
        )
        if c
    )
    condition = f"{like_any('context.action', p['destructive_actions'])} ||\n  ({by_query})"
    return (
        cedar_header(p, "Destructive SQL is blocked")
        + "\nforbid (principal, action, resource)\n"
        + cedar_when(condition)
        + ";\n"
    )


def render_pii_consent(p: Mapping[str, Any]) -> str:
    return (
        cedar_header(p, "Exporting personal data requires the subject's consent")
        + ("\nforbid (principal, action, resource)\n")
        + cedar_when(
            cedar_actions(p["action_patterns"]),
            "context has pii",
            "context.pii == true",
            "!(context has consent && context.consent == true)",
        )
        + ";\n"
    )


def render_payment_approval(p: Mapping[str, Any]) -> str:
    t = p["threshold"]
    actions = cedar_actions(p["action_patterns"])
    within = (
        f'@id({string_literal(p["policy_id"] + ".within-limit")})\n@severity("low")\n'
        f"@reason({string_literal(f'Payments up to {t} are allowed without approval')})\n"
        "permit (principal, action, resource)\n"
        + cedar_when(actions, "context has amount", f"context.amount <= {t}")
        + ";\n"
    )
    above = (
        cedar_header(
            p,
            f"Payments above {t}, or without an amount, need human approval",
            suffix=".approval",
            approval=True,
        )
        + "\npermit (principal, action, resource)\n"
        + cedar_when(actions, f"(if context has amount then context.amount > {t} else true)")
        + ";\n"
    )
    return within + "\n" + above


def render_unhealthy(p: Mapping[str, Any]) -> str:
    return (
        cedar_header(p, "Agents in status " + "/".join(p["statuses"]) + " may not act")
        + ("\nforbid (principal, action, resource)\n")
        + cedar_when(f"{string_set(p['statuses'])}.contains(principal.status)")
        + ";\n"
    )


def render_capability(p: Mapping[str, Any]) -> str:
    cap = p["capability"]
    return (
        cedar_header(p, f"This action requires the '{cap}' capability")
        + ("\nforbid (principal, action, resource)\n")
        + cedar_when(cedar_actions(p["action_patterns"]), f"!principal.capabilities.contains({string_literal(cap)})")
        + ";\n"
    )


def render_business_hours(p: Mapping[str, Any]) -> str:
    start, end = p["start_hour"], p["end_hour"]
    if start >= end:
        raise TemplateParameterError(
            f"template 'business-hours-only': start_hour ({start}) must be before end_hour ({end})"
        )
    outside = (
        f"(context.hour < {start} || context.hour >= {end} || !{long_set(p['weekdays'])}.contains(context.weekday))"
    )
    return (
        cedar_header(p, f"Only allowed on business days between {start}:00 and {end}:00")
        + ("\nforbid (principal, action, resource)\n")
        + cedar_when(cedar_actions(p["action_patterns"]), outside)
        + ";\n"
    )


def render_high_risk(p: Mapping[str, Any]) -> str:
    bp = p["max_risk_bp"]
    return (
        cedar_header(p, f"Agents with a risk score of {bp / RISK_SCALE:.2f} or more are blocked")
        + ("\nforbid (principal, action, resource)\n")
        + cedar_when("principal has risk_score", f"principal.risk_score >= {bp}")
        + ";\n"
    )


def render_anomalous(p: Mapping[str, Any]) -> str:
    bp = p["min_anomaly_bp"]
    return (
        cedar_header(p, f"The anomaly detector scores this action {bp / RISK_SCALE:.2f} or more for this agent")
        + "\nforbid (principal, action, resource)\n"
        + cedar_when(cedar_actions(p["action_patterns"]), f"context has anomaly_score && context.anomaly_score >= {bp}")
        + ";\n"
    )


def render_external_network(p: Mapping[str, Any]) -> str:
    external = (
        '((context has network_zone && context.network_zone == "external") ||\n'
        f"   ({string_set(p['url_kinds'])}.contains(resource.kind) &&\n"
        '    !(context has network_zone && context.network_zone == "internal")))'
    )
    return (
        cedar_header(p, "Tool agents may not reach external networks")
        + ("\nforbid (principal, action, resource)\n")
        + cedar_when(f"{string_set(p['agent_types'])}.contains(principal.type)", external)
        + ";\n"
    )


def render_allow_active(p: Mapping[str, Any]) -> str:
    return (
        cedar_header(p, "Active agents may act unless another policy forbids it")
        + ("\npermit (principal, action, resource)\n")
        + cedar_when('principal.status == "active"')
        + ";\n"
    )
