"""Policy documents and their validation on write.

A policy document is ``{"name", "description"?, "cedar", "is_active"?}``; its ``cedar`` text holds one or more
Cedar policies. :func:`validate_document` checks, in order:

1. the document itself (non-empty name, size limit, at least one policy);
2. Cedar syntax (Cedar reports syntax errors for the whole text, without naming a policy);
3. per policy: annotation values (:mod:`agentgov.policy.annotations`), no template slots
   (``?principal``/``?resource``), ``@id`` unique within the document, and no read of an undeclared context
   attribute (Cedar's validator accepts ``context has foo && context.foo`` for an undeclared ``foo`` because
   the closed record type makes it always false -- we reject it so typos do not silently disable a policy);
4. types, with Cedar's strict validator against :func:`agentgov.policy.schema.schema_for_actions`.

All problems found are reported together in one :class:`~agentgov.policy.errors.PolicyValidationError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import cedarpy

from .annotations import Effect, parse_annotations
from .complexity import complexity_problem
from .errors import PolicyValidationError, Problem
from .est import action_literals, context_attributes
from .schema import CONTEXT_BY_NAME, schema_for_actions

MAX_CEDAR_CHARS = 100_000
MAX_NAME_CHARS = 200


@dataclass(frozen=True, slots=True)
class PolicyDocument:
    """A stored policy document, as the HTTP layer receives it and storage keeps it."""

    name: str
    cedar: str
    description: str | None = None
    is_active: bool = True

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> PolicyDocument:
        """Build from a JSON-like mapping with keys ``name``, ``cedar``, ``description``?, ``is_active``?.

        Raises :class:`~agentgov.policy.errors.PolicyValidationError` if ``name`` or ``cedar`` is missing or
        not a string, or ``is_active`` is not a boolean.
        """
        name, cedar = data.get("name"), data.get("cedar")
        doc_name = name if isinstance(name, str) else "<unnamed>"
        problems = []
        if not isinstance(name, str):
            problems.append(Problem("document", "name must be a string"))
        if not isinstance(cedar, str):
            problems.append(Problem("document", "cedar must be a string of Cedar policy text"))
        description = data.get("description")
        if description is not None and not isinstance(description, str):
            problems.append(Problem("document", "description must be a string or null"))
        is_active = data.get("is_active", True)
        if not isinstance(is_active, bool):
            problems.append(Problem("document", "is_active must be a boolean"))
        if problems:
            raise PolicyValidationError(doc_name, problems)
        assert isinstance(name, str) and isinstance(cedar, str)
        return cls(name=name, cedar=cedar, description=description, is_active=is_active)


@dataclass(frozen=True, slots=True)
class PolicyInfo:
    """One validated Cedar policy of a document, with its metadata.

    ``ref`` names the policy in decisions: its ``@id``, else ``"<document name>#<position>"``.
    ``est`` is the policy in Cedar's JSON form, used to build the compiled policy set.
    """

    document: str
    position: int
    effect: Effect
    policy_id: str | None
    reason: str | None
    severity: str | None
    requires_approval: bool
    est: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def ref(self) -> str:
        return self.policy_id or f"{self.document}#{self.position}"


@dataclass(frozen=True, slots=True)
class ValidatedDocument:
    """A document that passed :func:`validate_document`, with its parsed policies in text order."""

    document: PolicyDocument
    policies: tuple[PolicyInfo, ...]


_POLICY_PREFIX = re.compile(r"^for policy `[^`]*`, ")
_FOR_ACTION = re.compile(r' for Action::"(?:[^"\\]|\\.)*"')


_OPTIONAL_ATTR = re.compile(r"optional attribute `(?P<attr>[^`]+)` (?P<where>in context|on entity type `Agent`)")
_UNDECLARED_CONTEXT = re.compile(r"^attribute `(?P<attr>[^`]+)` in context not found$")


def _clean_type_error(message: str) -> str:
    """Drop Cedar's internal policy id and per-action repetition from a validator message; add a hint."""
    message = _FOR_ACTION.sub("", _POLICY_PREFIX.sub("", message))
    m = _OPTIONAL_ATTR.search(message)
    if m:
        var = "context" if m.group("where") == "in context" else "principal"
        attr = m.group("attr")
        message += f" (guard it with `has`: `{var} has {attr} && {var}.{attr} ...`)"
    return message


def _position(cedar_policy_id: str) -> int | None:
    """``policy3`` -> 4 (1-based); ``None`` if the id is not positional."""
    m = re.fullmatch(r"policy(\d+)", cedar_policy_id)
    return int(m.group(1)) + 1 if m else None


def _parse(doc: PolicyDocument) -> list[tuple[int, Mapping[str, Any]]]:
    problems: list[Problem] = []
    if not doc.name.strip():
        problems.append(Problem("document", "name must not be empty"))
    elif len(doc.name) > MAX_NAME_CHARS:
        problems.append(Problem("document", f"name must be at most {MAX_NAME_CHARS} characters"))
    if len(doc.cedar) > MAX_CEDAR_CHARS:
        problems.append(Problem("document", f"cedar text must be at most {MAX_CEDAR_CHARS} characters"))
    elif (too_complex := complexity_problem(doc.cedar)) is not None:  # before the library reads it (it could crash)
        problems.append(Problem("complexity", too_complex))
    if problems:
        raise PolicyValidationError(doc.name, problems)
    try:
        parsed = json.loads(cedarpy.policies_to_json_str(doc.cedar))
    except ValueError as exc:
        raise PolicyValidationError(doc.name, [Problem("syntax", str(exc))]) from None
    except RecursionError:  # a shape `complexity_problem` did not foresee: refused, never a 500
        raise PolicyValidationError(doc.name, [Problem("complexity", "expressions nest too deep to read")]) from None
    if parsed.get("templates"):
        raise PolicyValidationError(
            doc.name,
            [Problem("unsupported", "policy templates with ?principal/?resource slots are not supported")],
        )
    statics: dict[str, Any] = parsed.get("staticPolicies", {})
    if not statics:
        raise PolicyValidationError(doc.name, [Problem("document", "the cedar text contains no policy")])
    positions = [_position(key) for key in statics]
    if any(p is None for p in positions):  # not Cedar's positional ids: fall back to text order
        return list(enumerate(statics.values(), start=1))
    return sorted(zip((p for p in positions if p is not None), statics.values(), strict=True), key=_first)


def _first(item: tuple[int, Any]) -> int:
    return item[0]


def _check_policy(doc_name: str, position: int, est: Mapping[str, Any]) -> tuple[PolicyInfo, list[Problem]]:
    effect: Effect = "forbid" if est.get("effect") == "forbid" else "permit"
    annotations, messages = parse_annotations(est.get("annotations") or {}, effect)
    pid = annotations.policy_id
    problems = [Problem("annotation", m, position, pid) for m in messages]
    for attr in sorted(context_attributes(est) - CONTEXT_BY_NAME.keys()):
        problems.append(
            Problem(
                "type",
                f"context attribute `{attr}` is not declared in the context schema "
                f"(declared: {', '.join(CONTEXT_BY_NAME)})",
                position,
                pid,
            )
        )
    info = PolicyInfo(
        document=doc_name,
        position=position,
        effect=effect,
        policy_id=pid,
        reason=annotations.reason,
        severity=annotations.severity,
        requires_approval=annotations.requires_approval,
        est=est,
    )
    return info, problems


def validate_document(doc: PolicyDocument) -> ValidatedDocument:
    """Validate a policy document's syntax, annotations and types against the agentgov Cedar schema.

    Returns the parsed policies in text order. Raises
    :class:`~agentgov.policy.errors.PolicyValidationError` listing every problem found (a syntax error
    stops validation early, since nothing else can be checked). Pure and synchronous; about 0.1-1 ms per
    document.
    """
    parsed = _parse(doc)
    infos: list[PolicyInfo] = []
    problems: list[Problem] = []
    seen_ids: dict[str, int] = {}
    for position, est in parsed:
        info, policy_problems = _check_policy(doc.name, position, est)
        problems.extend(policy_problems)
        if info.policy_id is not None:
            if info.policy_id in seen_ids:
                problems.append(
                    Problem(
                        "annotation",
                        f"@id {info.policy_id!r} is already used by policy #{seen_ids[info.policy_id]}",
                        position,
                        info.policy_id,
                    )
                )
            seen_ids.setdefault(info.policy_id, position)
        infos.append(info)

    by_position = {i.position: i for i in infos}
    actions = set().union(*(action_literals(i.est) for i in infos))
    result = cedarpy.validate_policies(doc.cedar, schema_for_actions(actions))
    seen_messages: set[tuple[int | None, str]] = set()
    for error in result.errors:
        pos = _position(error.policy_id) if error.policy_id else None
        message = _clean_type_error(error.error)
        undeclared = _UNDECLARED_CONTEXT.match(message)
        if undeclared and undeclared.group("attr") not in CONTEXT_BY_NAME:
            continue  # already reported by _check_policy, with the list of declared attributes
        if (pos, message) in seen_messages:
            continue
        seen_messages.add((pos, message))
        owner = by_position.get(pos) if pos is not None else None
        problems.append(Problem("type", message, pos, owner.policy_id if owner else None))

    if not problems and not compiles([i.est for i in infos]):
        problems.append(Problem("complexity", UNCOMPILABLE))
    if problems:
        problems.sort(key=lambda p: p.position or 0)
        raise PolicyValidationError(doc.name, problems)
    return ValidatedDocument(doc, tuple(infos))


UNCOMPILABLE = (
    "the policies cannot be compiled: an expression nests too deep (write long alternatives as a set: action in [...])"
)


def as_policy_set_json(ests: list[Mapping[str, Any]]) -> str:
    """Cedar's JSON form of a policy set holding `ests` (keys `p0`, `p1`, … in order)."""
    return json.dumps(
        {"staticPolicies": {f"p{i}": est for i, est in enumerate(ests)}, "templates": {}, "templateLinks": []}
    )


def compiles(ests: list[Mapping[str, Any]]) -> bool:
    """Whether the Cedar library builds a policy set of `ests` (its JSON reader refuses ESTs nested past its
    limit, from about 59 chained operators, which parsing the text accepted)."""
    try:
        cedarpy.PolicySet.from_json_str(as_policy_set_json(ests))
    except ValueError:
        return False
    return True
