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

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from .annotations import SEVERITIES
from .cedar_text import like_any, long_set, string_literal, string_set
from .errors import TemplateParameterError
from .schema import AGENT_STATUSES, AGENT_TYPES, RISK_SCALE

ParamType = Literal["string", "integer", "string_list", "integer_list", "severity", "policy_id"]
_POLICY_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,100}")


@dataclass(frozen=True, slots=True)
class TemplateParameter:
    """A template parameter. ``choices`` restricts string (or string-list item) values; ``minimum`` and
    ``maximum`` bound integers (or integer-list items)."""

    name: str
    type: ParamType
    default: Any
    description: str
    choices: tuple[str, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "default": list(self.default) if isinstance(self.default, tuple) else self.default,
            "description": self.description,
        }
        if self.type == "severity":
            out["choices"] = list(SEVERITIES)
        elif self.choices is not None:
            out["choices"] = list(self.choices)
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def check(self, template_id: str, value: Any) -> Any:
        """Return ``value`` normalised (lists -> tuples); raise :class:`TemplateParameterError` if invalid."""

        def fail(expected: str) -> TemplateParameterError:
            return TemplateParameterError(
                f"template '{template_id}': parameter '{self.name}' must be {expected}, got {value!r}"
            )

        if self.type in ("string", "severity", "policy_id"):
            if not isinstance(value, str) or not value:
                raise fail("a non-empty string")
            if self.type == "severity" and value not in SEVERITIES:
                raise fail("one of " + ", ".join(SEVERITIES))
            if self.type == "policy_id" and not _POLICY_ID_RE.fullmatch(value):
                raise fail("an id of letters, digits and . _ : - (starting with a letter or digit)")
            if self.choices is not None and value not in self.choices:
                raise fail("one of " + ", ".join(self.choices))
            return value
        if self.type == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise fail("an integer")
            self._check_range(value, fail)
            return value
        if not isinstance(value, list | tuple) or not value:
            raise fail("a non-empty list")
        if self.type == "string_list":
            if not all(isinstance(v, str) and v for v in value):
                raise fail("a list of non-empty strings")
            if self.choices is not None and not set(value) <= set(self.choices):
                raise fail("a list of " + ", ".join(self.choices))
            return tuple(value)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise fail("a list of integers")
        for v in value:
            self._check_range(v, fail)
        return tuple(value)

    def _check_range(self, value: int, fail: Callable[[str], TemplateParameterError]) -> None:
        if (self.minimum is not None and value < self.minimum) or (self.maximum is not None and value > self.maximum):
            if self.minimum is not None and self.maximum is not None:
                raise fail(f"within {self.minimum}..{self.maximum}")
            raise fail(f"at least {self.minimum}" if self.minimum is not None else f"at most {self.maximum}")


@dataclass(frozen=True, slots=True)
class TemplateExample:
    """A check request and the decision it yields with the template rendered from its defaults.

    ``default_allow`` is the tenant default used for the example; ``now`` fixes ``context.hour`` and
    ``context.weekday``.
    """

    description: str
    agent: Mapping[str, Any]
    action: str
    resource: str
    context: Mapping[str, Any]
    allowed: bool
    required_approval: bool
    severity: str | None
    default_allow: bool = False
    now: datetime = field(default_factory=lambda: datetime(2024, 6, 5, 11, 0, tzinfo=UTC))  # a Wednesday
    anomaly_score: float | None = None  # the detector's score of the action (None: no model active)

    def to_dict(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "request": {
                "agent": dict(self.agent),
                "action": self.action,
                "resource": self.resource,
                "context": dict(self.context),
                "evaluated_at": self.now.isoformat(),
                "tenant_default": "allow" if self.default_allow else "deny",
                "anomaly_score": self.anomaly_score,
            },
            "decision": {
                "allowed": self.allowed,
                "required_approval": self.required_approval,
                "severity": self.severity,
            },
        }


Renderer = Callable[[Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class PolicyTemplate:
    """A parameterised Cedar policy document. Render with :meth:`render`."""

    id: str
    name: str
    description: str
    parameters: tuple[TemplateParameter, ...]
    examples: tuple[TemplateExample, ...]
    renderer: Renderer = field(repr=False)

    def resolve(self, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Defaults overlaid with ``params``, checked. Raises :class:`TemplateParameterError` for an unknown
        parameter name or an invalid value."""
        params = dict(params or {})
        known = {p.name for p in self.parameters}
        unknown = sorted(set(params) - known)
        if unknown:
            raise TemplateParameterError(
                f"template '{self.id}': unknown parameter(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
            )
        return {p.name: p.check(self.id, params.get(p.name, p.default)) for p in self.parameters}

    def render(self, params: Mapping[str, Any] | None = None) -> str:
        """Cedar text of the policy document for ``params`` (defaults for missing ones).

        Raises :class:`TemplateParameterError` for invalid parameters. The output always validates against the
        agentgov schema (tested for the defaults).
        """
        return self.renderer(self.resolve(params))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description for ``GET /policies/templates``, with the Cedar text for the defaults."""
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "parameters": [p.to_dict() for p in self.parameters],
            "cedar": self.render(),
            "examples": [e.to_dict() for e in self.examples],
        }


def _header(p: Mapping[str, Any], reason: str, *, suffix: str = "", approval: bool = False) -> str:
    lines = [f"@id({string_literal(p['policy_id'] + suffix)})", f"@severity({string_literal(p['severity'])})"]
    lines.append(f"@reason({string_literal(reason)})")
    if approval:
        lines.append('@requires_approval("true")')
    return "\n".join(lines)


def _when(*conditions: str) -> str:
    return "when {\n  " + " &&\n  ".join(c for c in conditions if c) + "\n}"


def _actions(patterns: tuple[str, ...]) -> str:
    """Condition on ``context.action``; empty (no condition) when the patterns match everything."""
    return "" if "*" in patterns else like_any("context.action", patterns)


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


def _render_destructive_shell(p: Mapping[str, Any]) -> str:
    return (
        _header(p, "Destructive shell commands are blocked")
        + "\nforbid (principal, action, resource)\n"
        + _when(
            _actions(p["action_patterns"]),
            "context has command",
            like_any("context.command", p["command_patterns"]),
        )
        + ";\n"
    )


def _render_destructive_sql(p: Mapping[str, Any]) -> str:
    by_query = " && ".join(
        c
        for c in (
            _actions(p["action_patterns"]),
            "context has query",
            like_any("context.query", p["query_patterns"]),
        )
        if c
    )
    condition = f"{like_any('context.action', p['destructive_actions'])} ||\n  ({by_query})"
    return (
        _header(p, "Destructive SQL is blocked") + "\nforbid (principal, action, resource)\n" + _when(condition) + ";\n"
    )


def _render_pii_consent(p: Mapping[str, Any]) -> str:
    return (
        _header(p, "Exporting personal data requires the subject's consent")
        + ("\nforbid (principal, action, resource)\n")
        + _when(
            _actions(p["action_patterns"]),
            "context has pii",
            "context.pii == true",
            "!(context has consent && context.consent == true)",
        )
        + ";\n"
    )


def _render_payment_approval(p: Mapping[str, Any]) -> str:
    t = p["threshold"]
    actions = _actions(p["action_patterns"])
    within = (
        f'@id({string_literal(p["policy_id"] + ".within-limit")})\n@severity("low")\n'
        f"@reason({string_literal(f'Payments up to {t} are allowed without approval')})\n"
        "permit (principal, action, resource)\n"
        + _when(actions, "context has amount", f"context.amount <= {t}")
        + ";\n"
    )
    above = (
        _header(
            p,
            f"Payments above {t}, or without an amount, need human approval",
            suffix=".approval",
            approval=True,
        )
        + "\npermit (principal, action, resource)\n"
        + _when(actions, f"(if context has amount then context.amount > {t} else true)")
        + ";\n"
    )
    return within + "\n" + above


def _render_unhealthy(p: Mapping[str, Any]) -> str:
    return (
        _header(p, "Agents in status " + "/".join(p["statuses"]) + " may not act")
        + ("\nforbid (principal, action, resource)\n")
        + _when(f"{string_set(p['statuses'])}.contains(principal.status)")
        + ";\n"
    )


def _render_capability(p: Mapping[str, Any]) -> str:
    cap = p["capability"]
    return (
        _header(p, f"This action requires the '{cap}' capability")
        + ("\nforbid (principal, action, resource)\n")
        + _when(_actions(p["action_patterns"]), f"!principal.capabilities.contains({string_literal(cap)})")
        + ";\n"
    )


def _render_business_hours(p: Mapping[str, Any]) -> str:
    start, end = p["start_hour"], p["end_hour"]
    if start >= end:
        raise TemplateParameterError(
            f"template 'business-hours-only': start_hour ({start}) must be before end_hour ({end})"
        )
    outside = (
        f"(context.hour < {start} || context.hour >= {end} || !{long_set(p['weekdays'])}.contains(context.weekday))"
    )
    return (
        _header(p, f"Only allowed on business days between {start}:00 and {end}:00")
        + ("\nforbid (principal, action, resource)\n")
        + _when(_actions(p["action_patterns"]), outside)
        + ";\n"
    )


def _render_high_risk(p: Mapping[str, Any]) -> str:
    bp = p["max_risk_bp"]
    return (
        _header(p, f"Agents with a risk score of {bp / RISK_SCALE:.2f} or more are blocked")
        + ("\nforbid (principal, action, resource)\n")
        + _when("principal has risk_score", f"principal.risk_score >= {bp}")
        + ";\n"
    )


def _render_anomalous(p: Mapping[str, Any]) -> str:
    bp = p["min_anomaly_bp"]
    return (
        _header(p, f"The anomaly detector scores this action {bp / RISK_SCALE:.2f} or more for this agent")
        + "\nforbid (principal, action, resource)\n"
        + _when(_actions(p["action_patterns"]), f"context has anomaly_score && context.anomaly_score >= {bp}")
        + ";\n"
    )


def _render_external_network(p: Mapping[str, Any]) -> str:
    external = (
        '((context has network_zone && context.network_zone == "external") ||\n'
        f"   ({string_set(p['url_kinds'])}.contains(resource.kind) &&\n"
        '    !(context has network_zone && context.network_zone == "internal")))'
    )
    return (
        _header(p, "Tool agents may not reach external networks")
        + ("\nforbid (principal, action, resource)\n")
        + _when(f"{string_set(p['agent_types'])}.contains(principal.type)", external)
        + ";\n"
    )


def _render_allow_active(p: Mapping[str, Any]) -> str:
    return (
        _header(p, "Active agents may act unless another policy forbids it")
        + ("\npermit (principal, action, resource)\n")
        + _when('principal.status == "active"')
        + ";\n"
    )


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
        renderer=_render_destructive_shell,
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
        renderer=_render_destructive_sql,
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
        renderer=_render_pii_consent,
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
        renderer=_render_payment_approval,
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
        renderer=_render_unhealthy,
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
        renderer=_render_capability,
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
        renderer=_render_business_hours,
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
        renderer=_render_high_risk,
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
        renderer=_render_anomalous,
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
        renderer=_render_external_network,
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
        renderer=_render_allow_active,
    ),
)

TEMPLATES_BY_ID: dict[str, PolicyTemplate] = {t.id: t for t in TEMPLATES}


def get_template(template_id: str) -> PolicyTemplate:
    """The template with ``template_id``. Raises ``KeyError`` if there is none."""
    return TEMPLATES_BY_ID[template_id]
