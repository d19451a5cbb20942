"""The Cedar schema of agentgov's entity model.

Entities
--------
``Agent`` (the principal; its entity id is the agent's UUID)

    ============  ===========  ==========================================================================
    attribute     Cedar type   meaning
    ============  ===========  ==========================================================================
    name          String       display name
    type          String       one of ``llm``, ``tool``, ``workflow``, ``custom``
    status        String       one of ``active``, ``inactive``, ``error``
    capabilities  Set<String>  declared capabilities
    risk_score?   Long         **basis points**, 0..10000 (``0.73`` -> ``7300``); absent when unknown
    ============  ===========  ==========================================================================

    Cedar has no floats, and its ``decimal`` type supports only method comparisons
    (``.greaterThan(decimal("0.8"))``), not ``<``/``>``. An integer in basis points keeps policies natural:
    ``principal has risk_score && principal.risk_score >= 8000``. The attribute is optional because the
    registry does not always know an agent's risk; the validator therefore insists on the ``has`` guard.

``Resource`` (its entity id is the resource string of the check request)

    ``id: String`` (the same string, so ``resource.id like "s3://prod-*"`` works) and ``kind: String``, the
    scheme-like prefix before the first ``:`` (``"https://x"`` -> ``"https"``,
    ``"table:users"`` -> ``"table"``, ``"/etc/passwd"`` -> ``""``).

Actions
-------
A check request's action name becomes the action entity ``Action::"<name>"`` as is (``shell.exec``,
``payments.transfer``), and the name is also copied into ``context.action``. So both natural forms work::

    forbid (principal, action == Action::"payments.transfer", resource) ...;
    forbid (principal, action, resource) when { context.action like "sql.*" };

The schema cannot list every action a client may send. All actions share one signature (principal ``Agent``,
resource ``Resource``, context :data:`CONTEXT_ATTRIBUTES`), so the schema used to *validate* a policy
document declares the sentinel action :data:`ANY_ACTION` plus exactly the action literals the document
mentions (see :func:`schema_for_actions`). Type checking is therefore identical for every action, and a
literal such as ``Action::"payments.transfer"`` is recognised. Evaluation does not pass a schema, so a request
may carry any action name. There is no action hierarchy: use ``like`` on ``context.action`` for families.

Context
-------
Cedar schemas cannot declare open records (cedarpy rejects ``additionalAttributes``), so the request context
is a *closed vocabulary*, :data:`CONTEXT_ATTRIBUTES`: three attributes the server always sets (``action``,
``hour``, ``weekday``) and optional, typed client attributes (``consent``, ``amount``, ...) that policies must
guard with ``has``: ``context has consent && context.consent == true``. The API context stays free-form: a
client may send any other keys, but they are left out of evaluation (no stored policy can read them) and the
declared ones are type-checked per request. A policy that reads an undeclared context attribute is rejected on
write (see :mod:`agentgov.policy.document`); extending the vocabulary is one row in
:data:`CONTEXT_ATTRIBUTES`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

import cedarpy

AGENT_TYPES: tuple[str, ...] = ("llm", "tool", "workflow", "custom")
AGENT_STATUSES: tuple[str, ...] = ("active", "inactive", "error")
RISK_SCALE = 10_000
"""``principal.risk_score`` is in basis points: the API's 0.0..1.0 float times :data:`RISK_SCALE`."""

ANY_ACTION = "any"
"""Sentinel action always declared in the validation schema, so unconstrained ``action`` scopes type-check."""

CedarType = Literal["Bool", "Long", "String", "Set<String>"]


@dataclass(frozen=True, slots=True)
class ContextAttribute:
    """One attribute of the request context vocabulary.

    ``server`` attributes are set by the engine on every request (a client-sent value is overwritten);
    client attributes are optional and must be guarded with ``has`` in policies.
    """

    name: str
    type: CedarType
    description: str
    server: bool = False
    service: bool = False  # set by the service when it knows the value (never taken from the client)


CONTEXT_ATTRIBUTES: tuple[ContextAttribute, ...] = (
    ContextAttribute("action", "String", 'the requested action name, e.g. "sql.query"', server=True),
    ContextAttribute("hour", "Long", "hour of day 0..23 of the evaluation time (tenant clock)", server=True),
    ContextAttribute("weekday", "Long", "ISO weekday of the evaluation time: 1 = Monday .. 7 = Sunday", server=True),
    ContextAttribute("consent", "Bool", "the data subject consented to this use of their data"),
    ContextAttribute("pii", "Bool", "the action touches personally identifiable information"),
    ContextAttribute("amount", "Long", "monetary amount as an integer (e.g. in cents); fractions are rejected"),
    ContextAttribute("currency", "String", "ISO 4217 currency code of amount"),
    ContextAttribute("record_count", "Long", "number of records read, exported or changed"),
    ContextAttribute("command", "String", "shell command line of a shell action"),
    ContextAttribute("query", "String", "SQL statement of a database action"),
    ContextAttribute("environment", "String", 'target environment, e.g. "production"'),
    ContextAttribute("data_classification", "String", "public, internal, confidential or restricted"),
    ContextAttribute("network_zone", "String", '"internal" or "external" destination network'),
    ContextAttribute("labels", "Set<String>", "free-form tags supplied by the client"),
    ContextAttribute(
        "anomaly_score",
        "Long",
        "the anomaly detector's score of this action for this agent in basis points (0.80 -> 8000); set by the "
        "service when a model is active (absent otherwise: guard with has); a client-sent value is ignored",
        service=True,
    ),
)
CONTEXT_BY_NAME: dict[str, ContextAttribute] = {a.name: a for a in CONTEXT_ATTRIBUTES}

_JSON_TYPES: dict[CedarType, dict[str, Any]] = {
    "Bool": {"type": "Boolean"},
    "Long": {"type": "Long"},
    "String": {"type": "String"},
    "Set<String>": {"type": "Set", "element": {"type": "String"}},
}


def _context_type() -> dict[str, Any]:
    return {
        "type": "Record",
        "attributes": {a.name: {**_JSON_TYPES[a.type], "required": a.server} for a in CONTEXT_ATTRIBUTES},
    }


def _entity_types() -> dict[str, Any]:
    string = {"type": "String"}
    return {
        "Agent": {
            "shape": {
                "type": "Record",
                "attributes": {
                    "name": string,
                    "type": string,
                    "status": string,
                    "capabilities": {"type": "Set", "element": string},
                    "risk_score": {"type": "Long", "required": False},
                },
            }
        },
        "Resource": {"shape": {"type": "Record", "attributes": {"id": string, "kind": string}}},
    }


def schema_json(actions: Iterable[str] = ()) -> dict[str, Any]:
    """The Cedar JSON schema declaring :data:`ANY_ACTION` and ``actions``, all with the same signature."""
    applies_to = {"principalTypes": ["Agent"], "resourceTypes": ["Resource"], "context": _context_type()}
    names = sorted({ANY_ACTION, *actions})
    return {"": {"entityTypes": _entity_types(), "actions": {n: {"appliesTo": applies_to} for n in names}}}


@functools.lru_cache(maxsize=256)
def _cached_schema(actions: frozenset[str]) -> cedarpy.Schema:
    return cedarpy.Schema.from_json_str(json.dumps(schema_json(actions)))


def schema_for_actions(actions: Iterable[str] = ()) -> cedarpy.Schema:
    """A parsed Cedar schema that recognises :data:`ANY_ACTION` and every name in ``actions``.

    Cached per set of names. Never raises for any action strings (names are JSON keys, not Cedar syntax).
    """
    return _cached_schema(frozenset(actions))


def describe_context() -> list[dict[str, Any]]:
    """The context vocabulary as JSON-ready rows (name, type, required, set_by, description) for API docs."""
    return [
        {
            "name": a.name,
            "type": a.type,
            "required": a.server,
            "set_by": "server" if a.server else "client",
            "description": a.description,
        }
        for a in CONTEXT_ATTRIBUTES
    ]
