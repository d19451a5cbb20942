"""What a policy template is: its typed parameters, its worked examples, and rendering (the catalogue of
templates is `agentgov.policy.templates`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from .annotations import SEVERITIES
from .errors import TemplateParameterError

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
