"""Turn a check request (agent attributes, action, resource, free-form context) into Cedar inputs.

See :mod:`agentgov.policy.schema` for the entity model. Context handling:

* server attributes -- ``action`` (the action name), ``hour`` and ``weekday`` (from the evaluation time
  ``now``, as given: pass it in the tenant's timezone) -- are always set; client values for them are ignored,
  so an agent cannot claim it is 10 o'clock;
* declared client attributes are type-checked and converted; ``null`` means absent; a value of the wrong type
  raises :class:`~agentgov.policy.errors.InvalidRequestError` (``context.amount must be an integer ...``);
* undeclared keys are left out of the Cedar context (no stored policy can read them).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import cedarpy

from .errors import InvalidRequestError
from .schema import AGENT_STATUSES, AGENT_TYPES, CONTEXT_ATTRIBUTES, RISK_SCALE

MAX_ACTION_CHARS = 256
MAX_RESOURCE_CHARS = 4096
_I64 = (-(2**63), 2**63 - 1)
_KIND_RE = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*):")


@dataclass(frozen=True, slots=True)
class AgentAttributes:
    """The principal of a check: the registered agent's attributes.

    ``risk_score`` is the API's 0.0..1.0 float, or ``None`` when unknown. Construction raises
    :class:`~agentgov.policy.errors.InvalidRequestError` if ``type``/``status`` are not among the allowed
    values, ``capabilities`` is not strings, or ``risk_score`` is outside 0..1.
    """

    id: str
    name: str
    type: str
    status: str
    capabilities: frozenset[str] = frozenset()
    risk_score: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id:
            raise InvalidRequestError("agent.id must be a non-empty string")
        if not isinstance(self.name, str):
            raise InvalidRequestError("agent.name must be a string")
        if self.type not in AGENT_TYPES:
            raise InvalidRequestError(f"agent.type must be one of {', '.join(AGENT_TYPES)}, got {self.type!r}")
        if self.status not in AGENT_STATUSES:
            raise InvalidRequestError(f"agent.status must be one of {', '.join(AGENT_STATUSES)}, got {self.status!r}")
        caps = self.capabilities
        if isinstance(caps, str) or not all(isinstance(c, str) for c in caps):
            raise InvalidRequestError("agent.capabilities must be a collection of strings")
        object.__setattr__(self, "capabilities", frozenset(caps))
        r = self.risk_score
        if r is not None and (isinstance(r, bool) or not isinstance(r, int | float) or not (0.0 <= r <= 1.0)):
            raise InvalidRequestError(f"agent.risk_score must be a number in 0.0..1.0 or null, got {r!r}")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> AgentAttributes:
        """Build from an agent record (keys ``id``, ``name``, ``type``, ``status``, ``capabilities``,
        ``risk_score``; others ignored). Raises :class:`InvalidRequestError` on a missing or bad field."""
        caps = data.get("capabilities") or ()
        if not isinstance(caps, list | tuple | set | frozenset):
            raise InvalidRequestError("agent.capabilities must be a list of strings")
        try:
            return cls(
                id=str(data["id"]),
                name=data.get("name") or "",
                type=data["type"],
                status=data["status"],
                capabilities=frozenset(caps),
                risk_score=data.get("risk_score"),
            )
        except KeyError as exc:
            raise InvalidRequestError(f"agent.{exc.args[0]} is required") from None
        except TypeError as exc:
            raise InvalidRequestError(f"agent attributes are malformed: {exc}") from None

    @property
    def risk_basis_points(self) -> int | None:
        """``risk_score`` as the Cedar ``principal.risk_score`` Long (0..10000), or ``None``."""
        return None if self.risk_score is None else round(self.risk_score * RISK_SCALE)


def resource_kind(resource: str) -> str:
    """The scheme-like prefix of ``resource``: ``"https://a"`` -> ``"https"``, ``"table:t"`` -> ``"table"``,
    anything else -> ``""``. Lower-cased."""
    m = _KIND_RE.match(resource)
    return m.group(1).lower() if m else ""


def _convert(name: str, type_: str, value: Any) -> Any:
    if type_ == "Bool":
        if isinstance(value, bool):
            return value
        raise InvalidRequestError(f"context.{name} must be a boolean, got {value!r}")
    if type_ == "Long":
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, int) and not isinstance(value, bool) and _I64[0] <= value <= _I64[1]:
            return value
        raise InvalidRequestError(
            f"context.{name} must be an integer (Cedar has no floats; send e.g. cents), got {value!r}"
        )
    if type_ == "String":
        if isinstance(value, str):
            return value
        raise InvalidRequestError(f"context.{name} must be a string, got {value!r}")
    # Set<String>
    if isinstance(value, list | tuple | set | frozenset) and all(isinstance(v, str) for v in value):
        return sorted(set(value))
    raise InvalidRequestError(f"context.{name} must be a list of strings, got {value!r}")


def cedar_context(
    action: str, context: Mapping[str, Any] | None, now: datetime, *, anomaly_score: float | None = None
) -> dict[str, Any]:
    """The Cedar request context for ``action`` at time ``now``, from the client's free-form ``context``, and
    the service's own ``anomaly_score`` (0..1, given to policies in basis points; a client's is ignored).

    Raises :class:`InvalidRequestError` if ``context`` is not a mapping or a declared attribute has the wrong
    type.
    """
    if context is None:
        context = {}
    if not isinstance(context, Mapping):
        raise InvalidRequestError("context must be a JSON object")
    out: dict[str, Any] = {"action": action, "hour": now.hour, "weekday": now.isoweekday()}
    for attr in CONTEXT_ATTRIBUTES:
        if attr.server or attr.service:
            continue
        value = context.get(attr.name)
        if value is not None:
            out[attr.name] = _convert(attr.name, attr.type, value)
    if anomaly_score is not None:
        out["anomaly_score"] = round(min(1.0, max(0.0, anomaly_score)) * 10000)
    return out


def check_action(action: Any) -> str:
    """Return ``action`` if it is a usable action name; raise :class:`InvalidRequestError` otherwise."""
    if not isinstance(action, str) or not action.strip():
        raise InvalidRequestError("action must be a non-empty string")
    if len(action) > MAX_ACTION_CHARS:
        raise InvalidRequestError(f"action must be at most {MAX_ACTION_CHARS} characters")
    return action


def check_resource(resource: Any) -> str:
    """Return ``resource`` if it is a usable resource string; raise :class:`InvalidRequestError` otherwise."""
    if not isinstance(resource, str):
        raise InvalidRequestError("resource must be a string")
    if len(resource) > MAX_RESOURCE_CHARS:
        raise InvalidRequestError(f"resource must be at most {MAX_RESOURCE_CHARS} characters")
    return resource


def cedar_entities(agent: AgentAttributes, resource: str) -> cedarpy.Entities:
    """The Cedar entities of one request: the ``Agent`` principal and the ``Resource``.

    The principal is parsed once per distinct agent record (an LRU of `PRINCIPAL_CACHE_SIZE`); only the
    resource entity is parsed per request.
    """
    return _principal_entities(agent).with_added_json_str(json.dumps([_resource_entity(resource)]))


PRINCIPAL_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=PRINCIPAL_CACHE_SIZE)
def _principal_entities(agent: AgentAttributes) -> cedarpy.Entities:
    return cedarpy.Entities.from_json_str(json.dumps([_agent_entity(agent)]))


def _agent_entity(agent: AgentAttributes) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "name": agent.name,
        "type": agent.type,
        "status": agent.status,
        "capabilities": sorted(agent.capabilities),
    }
    if agent.risk_score is not None:
        attrs["risk_score"] = agent.risk_basis_points
    return {"uid": {"type": "Agent", "id": agent.id}, "attrs": attrs, "parents": []}


def _resource_entity(resource: str) -> dict[str, Any]:
    return {
        "uid": {"type": "Resource", "id": resource},
        "attrs": {"id": resource, "kind": resource_kind(resource)},
        "parents": [],
    }


def cedar_request(agent: AgentAttributes, action: str, resource: str, context_json: str) -> dict[str, Any]:
    """The cedarpy request dict (structured uids, so any id string is accepted), with the context as JSON
    text (`json.dumps` of `cedar_context`), which cedarpy passes on without copying the request."""
    return {
        "principal": {"type": "Agent", "id": agent.id},
        "action": {"type": "Action", "id": action},
        "resource": {"type": "Resource", "id": resource},
        "context": context_json,
    }
