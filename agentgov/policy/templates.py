"""Ready-to-use Cedar policy templates for common agent-governance cases.

Each :class:`PolicyTemplate` has an id, a name, a description, typed :class:`TemplateParameter` s with
defaults, :meth:`PolicyTemplate.render` (parameters -> Cedar text of one policy document), and worked
:class:`TemplateExample` s: a check request and the decision it yields with the template (rendered with its
defaults) as the tenant's only policy document. ``GET /policies/templates`` serves
``[t.to_dict() for t in TEMPLATES]``.

Conventions the templates rely on (see :mod:`agentgov.policy.schema`):

* ``principal.risk_score`` is in **basis points** (0..10000; 0.80 -> 8000) and absent when unknown;
* ``context.hour`` (0..23) and ``context.weekday`` (ISO, 1 = Monday) are set by the server from the evaluation
  time in the tenant's timezone (UTC until that setting exists) -- clients cannot supply them;
* ``context.amount`` is an integer in the unit the tenant's clients agree on (e.g. cents);
* ``like`` is case-sensitive, so pattern lists spell both cases where it matters.

Most templates are ``forbid`` guards that compose with any other policy. For a tenant whose default decision
is deny, add ``allow-active-agents`` (or your own permits) so anything is allowed at all.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .schema import AGENT_STATUSES, AGENT_TYPES, RISK_SCALE
from .template_cedar import (
    render_allow_active,
    render_anomalous,
    render_business_hours,
    render_capability,
    render_destructive_shell,
    render_destructive_sql,
    render_external_network,
    render_high_risk,
    render_payment_approval,
    render_pii_consent,
    render_unhealthy,
)
from .template_model import PolicyTemplate, TemplateExample, TemplateParameter


def _common(template_id: str, severity: str) -> tuple[TemplateParameter, ...]:
    return (
        TemplateParameter("policy_id", "policy_id", template_id, "@id of the rendered policy (unique per tenant)"),
        TemplateParameter("severity", "severity", severity, "@severity reported when the policy decides"),
    )


_ACTIVE_LLM = {
    "id": "7f1c0e7e-0000-4000-8000-000000000001",
    "name": "support-bot",
    "type": "llm",
    "status": "active",
    "capabilities": ["chat", "sql"],
    "risk_score": 0.2,
}
_ACTIVE_TOOL = {**_ACTIVE_LLM, "name": "web-fetcher", "type": "tool", "capabilities": ["http"]}


def _agent(**changes: Any) -> dict[str, Any]:
    return {**_ACTIVE_LLM, **changes}


def _patterns(default: tuple[str, ...], what: str = "action names") -> TemplateParameter:
    return TemplateParameter(
        "action_patterns",
        "string_list",
        default,
        f"`like` patterns on {what} this policy applies to (* = any)",
    )


TEMPLATES: tuple[PolicyTemplate, ...] = (
    PolicyTemplate(
        id="block-destructive-shell",
        name="Block destructive shell commands",
        description="Forbids shell actions whose context.command matches a destructive pattern "
        "(rm -rf, mkfs, dd, shutdown, ...). Clients send the command line as context.command.",
        parameters=(
            *_common("block-destructive-shell", "critical"),
            _patterns(("shell.*", "exec.*")),
            TemplateParameter(
                "command_patterns",
                "string_list",
                (
                    "*rm -rf*",
                    "*rm -fr*",
                    "*mkfs*",
                    "*dd if=*",
                    "*shutdown*",
                    "*reboot*",
                    "*chmod -R 777*",
                    "*:(){*",
                ),
                "`like` patterns on context.command that are destructive (case-sensitive)",
            ),
        ),
        examples=(
            TemplateExample(
                "rm -rf is blocked",
                _agent(),
                "shell.exec",
                "host:build-01",
                {"command": "rm -rf /var/lib/postgresql"},
                False,
                False,
                "critical",
            ),
            TemplateExample(
                "a harmless command passes (tenant default allow)",
                _agent(),
                "shell.exec",
                "host:build-01",
                {"command": "ls -la /tmp"},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_destructive_shell,
    ),
    PolicyTemplate(
        id="block-destructive-sql",
        name="Block destructive SQL",
        description="Forbids destructive database actions, by action name (sql.drop*, sql.truncate*) or by "
        "the statement in context.query (DROP TABLE, TRUNCATE, ...).",
        parameters=(
            *_common("block-destructive-sql", "critical"),
            _patterns(("sql.*", "db.*"), "action names whose context.query is inspected"),
            TemplateParameter(
                "destructive_actions",
                "string_list",
                ("sql.drop*", "sql.truncate*", "db.drop*"),
                "`like` patterns on action names that are destructive whatever the query",
            ),
            TemplateParameter(
                "query_patterns",
                "string_list",
                (
                    "*DROP TABLE*",
                    "*drop table*",
                    "*DROP DATABASE*",
                    "*drop database*",
                    "*TRUNCATE*",
                    "*truncate *",
                ),
                "`like` patterns on context.query that are destructive (case-sensitive)",
            ),
        ),
        examples=(
            TemplateExample(
                "DROP TABLE is blocked",
                _agent(),
                "sql.execute",
                "postgres:crm",
                {"query": "DROP TABLE customers;"},
                False,
                False,
                "critical",
            ),
            TemplateExample(
                "sql.truncate is blocked by name",
                _agent(),
                "sql.truncate",
                "postgres:crm",
                {},
                False,
                False,
                "critical",
            ),
            TemplateExample(
                "a SELECT passes (tenant default allow)",
                _agent(),
                "sql.query",
                "postgres:crm",
                {"query": "SELECT id FROM customers LIMIT 10"},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_destructive_sql,
    ),
    PolicyTemplate(
        id="pii-export-requires-consent",
        name="PII export only with consent",
        description="Forbids export actions on personal data (context.pii == true) unless the client sends "
        "context.consent == true.",
        parameters=(*_common("pii-export-requires-consent", "high"), _patterns(("*export*",))),
        examples=(
            TemplateExample(
                "exporting PII without consent is blocked",
                _agent(),
                "crm.export",
                "s3://exports/q3",
                {"pii": True},
                False,
                False,
                "high",
            ),
            TemplateExample(
                "with consent it passes (tenant default allow)",
                _agent(),
                "crm.export",
                "s3://exports/q3",
                {"pii": True, "consent": True},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_pii_consent,
    ),
    PolicyTemplate(
        id="payment-approval",
        name="Payments above an amount need approval",
        description="Two permits: payments up to `threshold` (context.amount) are allowed; larger "
        "payments, or payments without an amount, are allowed only with human approval "
        "(required_approval = true).",
        parameters=(
            *_common("payment-approval", "high"),
            _patterns(("payments.*",)),
            TemplateParameter(
                "threshold",
                "integer",
                1000,
                "largest context.amount allowed without approval (integer, tenant unit)",
                minimum=0,
            ),
        ),
        examples=(
            TemplateExample(
                "a large transfer needs approval",
                _agent(),
                "payments.transfer",
                "account:acme-ops",
                {"amount": 25_000, "currency": "EUR"},
                True,
                True,
                "high",
            ),
            TemplateExample(
                "a small transfer is allowed outright",
                _agent(),
                "payments.transfer",
                "account:acme-ops",
                {"amount": 200, "currency": "EUR"},
                True,
                False,
                "low",
            ),
        ),
        renderer=render_payment_approval,
    ),
    PolicyTemplate(
        id="deny-unhealthy-agents",
        name="Deny agents in error or inactive status",
        description="Forbids every action of agents whose status is one of `statuses`.",
        parameters=(
            *_common("deny-unhealthy-agents", "high"),
            TemplateParameter(
                "statuses",
                "string_list",
                ("error", "inactive"),
                "agent statuses to block",
                choices=AGENT_STATUSES,
            ),
        ),
        examples=(
            TemplateExample(
                "an agent in error is blocked",
                _agent(status="error"),
                "chat.reply",
                "ticket:4711",
                {},
                False,
                False,
                "high",
            ),
        ),
        renderer=render_unhealthy,
    ),
    PolicyTemplate(
        id="capability-required",
        name="Restrict actions by capability",
        description="Forbids actions matching `action_patterns` to agents lacking `capability` in their capabilities.",
        parameters=(
            *_common("capability-required", "medium"),
            _patterns(("payments.*",)),
            TemplateParameter("capability", "string", "payments", "capability the agent must declare"),
        ),
        examples=(
            TemplateExample(
                "an agent without the capability is blocked",
                _agent(),
                "payments.refund",
                "order:991",
                {"amount": 50},
                False,
                False,
                "medium",
            ),
            TemplateExample(
                "an agent with it passes (tenant default allow)",
                _agent(capabilities=["payments"]),
                "payments.refund",
                "order:991",
                {"amount": 50},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_capability,
    ),
    PolicyTemplate(
        id="business-hours-only",
        name="Business hours only",
        description="Forbids actions outside business hours. The server sets context.hour (0..23) and "
        "context.weekday (1 = Monday .. 7 = Sunday) from the evaluation time in the tenant's timezone "
        "(UTC by default); clients cannot override them.",
        parameters=(
            *_common("business-hours-only", "medium"),
            _patterns(("*",)),
            TemplateParameter("start_hour", "integer", 9, "first allowed hour (inclusive)", minimum=0, maximum=23),
            TemplateParameter("end_hour", "integer", 17, "end of business (exclusive)", minimum=1, maximum=24),
            TemplateParameter(
                "weekdays",
                "integer_list",
                (1, 2, 3, 4, 5),
                "allowed ISO weekdays (1 = Monday)",
                minimum=1,
                maximum=7,
            ),
        ),
        examples=(
            TemplateExample(
                "Saturday 03:00 is outside business hours",
                _agent(),
                "deploy.release",
                "service:billing",
                {},
                False,
                False,
                "medium",
                now=datetime(2024, 6, 8, 3, 0, tzinfo=UTC),
            ),
            TemplateExample(
                "Wednesday 11:00 passes (tenant default allow)",
                _agent(),
                "deploy.release",
                "service:billing",
                {},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_business_hours,
    ),
    PolicyTemplate(
        id="deny-high-risk-agents",
        name="Deny agents above a risk score",
        description="Forbids every action of agents whose registry risk score is at or above the threshold. "
        "principal.risk_score is in basis points (0.80 -> 8000); agents without a score are not affected.",
        parameters=(
            *_common("deny-high-risk-agents", "high"),
            TemplateParameter(
                "max_risk_bp",
                "integer",
                8000,
                "block at or above this risk score, in basis points (8000 = 0.80)",
                minimum=0,
                maximum=RISK_SCALE,
            ),
        ),
        examples=(
            TemplateExample(
                "an agent with risk 0.92 is blocked",
                _agent(risk_score=0.92),
                "chat.reply",
                "ticket:4711",
                {},
                False,
                False,
                "high",
            ),
            TemplateExample(
                "an agent with risk 0.20 passes (tenant default allow)",
                _agent(),
                "chat.reply",
                "ticket:4711",
                {},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_high_risk,
    ),
    PolicyTemplate(
        id="block-anomalous-actions",
        name="Block actions the anomaly detector flags",
        description="Forbids an action when the tenant's anomaly detector scores it at or above the threshold for "
        "this agent (context.anomaly_score, in basis points: 0.80 -> 8000; set by the service while a model is "
        "active, so without a model nothing is blocked).",
        parameters=(
            *_common("block-anomalous-actions", "high"),
            _patterns(("*",)),
            TemplateParameter(
                "min_anomaly_bp",
                "integer",
                8000,
                "block at or above this anomaly score, in basis points (8000 = 0.80)",
                minimum=0,
                maximum=RISK_SCALE,
            ),
        ),
        examples=(
            TemplateExample(
                "an action scored 0.91 is blocked",
                _agent(),
                "payments.transfer",
                "account:ext-991",
                {},
                False,
                False,
                "high",
                default_allow=True,
                anomaly_score=0.91,
            ),
            TemplateExample(
                "an action scored 0.12 passes (tenant default allow)",
                _agent(),
                "payments.transfer",
                "account:ext-991",
                {},
                True,
                False,
                None,
                default_allow=True,
                anomaly_score=0.12,
            ),
            TemplateExample(
                "without an active model nothing is blocked; a client cannot set the score",
                _agent(),
                "payments.transfer",
                "account:ext-991",
                {"anomaly_score": 9999},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_anomalous,
    ),
    PolicyTemplate(
        id="no-external-network-for-tools",
        name="No external network for tool agents",
        description="Forbids tool agents from external networks: any action with context.network_zone == "
        '"external", and any http(s) resource unless the client marks it context.network_zone == "internal".',
        parameters=(
            *_common("no-external-network-for-tools", "high"),
            TemplateParameter("agent_types", "string_list", ("tool",), "agent types to restrict", choices=AGENT_TYPES),
            TemplateParameter(
                "url_kinds",
                "string_list",
                ("http", "https"),
                "resource kinds (URL schemes) treated as network destinations",
            ),
        ),
        examples=(
            TemplateExample(
                "a tool agent calling a public API is blocked",
                _ACTIVE_TOOL,
                "http.get",
                "https://api.example.com/v1/users",
                {},
                False,
                False,
                "high",
            ),
            TemplateExample(
                "an internal URL passes (tenant default allow)",
                _ACTIVE_TOOL,
                "http.get",
                "https://wiki.corp.example/page",
                {"network_zone": "internal"},
                True,
                False,
                None,
                default_allow=True,
            ),
        ),
        renderer=render_external_network,
    ),
    PolicyTemplate(
        id="allow-active-agents",
        name="Allow active agents (baseline)",
        description="Permits every action of active agents; forbid policies still win. The baseline for a "
        "tenant whose default decision is deny.",
        parameters=_common("allow-active-agents", "low"),
        examples=(
            TemplateExample(
                "an active agent is allowed", _agent(), "chat.reply", "ticket:4711", {}, True, False, "low"
            ),
            TemplateExample(
                "an inactive agent falls back to the default deny",
                _agent(status="inactive"),
                "chat.reply",
                "ticket:4711",
                {},
                False,
                False,
                None,
            ),
        ),
        renderer=render_allow_active,
    ),
)

TEMPLATES_BY_ID: dict[str, PolicyTemplate] = {t.id: t for t in TEMPLATES}


def get_template(template_id: str) -> PolicyTemplate:
    """The template with ``template_id``. Raises ``KeyError`` if there is none."""
    return TEMPLATES_BY_ID[template_id]
