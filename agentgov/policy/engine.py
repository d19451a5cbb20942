"""Compiled per-tenant policy sets and decision evaluation.

Build a :class:`CompiledPolicySet` once from a tenant's documents with :func:`compile_policy_set` (inactive
documents are skipped), then call :meth:`CompiledPolicySet.evaluate` for each check. The object is immutable
and holds a pre-parsed ``cedarpy.PolicySet``, so it can be shared freely; recompile when documents change.

Decision semantics
------------------
* Cedar decides: any satisfied ``forbid`` denies; otherwise any satisfied ``permit`` allows.
* When no policy is satisfied, the tenant default (``default_allow``, default ``False`` = deny) decides.
* ``required_approval`` is ``True`` when the decision is *allow* and at least one determining (satisfied)
  permit carries ``@requires_approval("true")`` -- the conservative reading: one permit asking for a human is
  enough. The caller should then open a HITL request before acting. A deny never requires approval
  (``@requires_approval("true")`` on a forbid is rejected on write), and a default allow never does.
* A policy that raises a Cedar error during evaluation is skipped, per Cedar semantics, and listed in
  ``Decision.errors`` and in the reason. With validated policies and the typed context of
  :mod:`agentgov.policy.request` this is rare (e.g. integer overflow, a bad ``ip()`` string at runtime).
  Note that a skipped *forbid* cannot deny; the ``policy_errors`` risk factor flags such decisions.
* If Cedar cannot evaluate the request at all, the decision is deny (fail closed) with the error listed.
"""

from __future__ import annotations

import functools
import json
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

import cedarpy

from .annotations import highest_severity
from .decision import Decision, PolicyEvaluationError, explain
from .document import UNCOMPILABLE, PolicyDocument, PolicyInfo, ValidatedDocument, as_policy_set_json, validate_document
from .errors import PolicyValidationError, Problem
from .request import (
    AgentAttributes,
    cedar_context,
    cedar_entities,
    cedar_request,
    check_action,
    check_resource,
)
from .risk import assess_risk

_EVAL_ERROR = re.compile(r"^error while evaluating policy `(?P<key>[^`]*)`: (?P<message>.*)$", re.DOTALL)


MEMO_SIZE = 1024
"""Decisions remembered per compiled set (least recently used first out)."""
MEMO_MAX_INPUT_CHARS = 4096
"""Requests whose resource and context together are longer are evaluated without being remembered."""


class CompiledPolicySet:
    """The active policies of one tenant, parsed once, ready to evaluate checks.

    Measured cost of :meth:`evaluate` (one core): ~0.15 ms with 1-10 policies, ~0.25 ms with 100; cheap
    enough to run on the event loop without a worker thread.

    Decisions are memoised: a decision is a pure function of the agent's attributes, the action, the
    resource and the Cedar context (which holds the evaluation hour and weekday), so a request equal in all
    of them to one of the last `MEMO_SIZE` gets the same decision without evaluating Cedar again. The memo
    belongs to this compiled set; a policy change compiles a new set, which starts empty. Requests that
    failed to evaluate are never remembered.

    Construct with :func:`compile_policy_set`. ``policies`` lists every compiled policy in document order.
    """

    def __init__(self, policies: Iterable[PolicyInfo], *, default_allow: bool = False) -> None:
        self.policies: tuple[PolicyInfo, ...] = tuple(policies)
        self.default_allow = default_allow
        self._by_key: dict[str, PolicyInfo] = {f"p{i}": p for i, p in enumerate(self.policies)}
        try:
            self._cedar = cedarpy.PolicySet.from_json_str(as_policy_set_json([p.est for p in self.policies]))
        except ValueError:  # a document stored before validation compiled it: named, so it can be left out
            raise PolicyValidationError("policy set", [Problem("complexity", UNCOMPILABLE)]) from None
        self._memo: OrderedDict[tuple[AgentAttributes, str, str, str], Decision] = OrderedDict()

    def __len__(self) -> int:
        return len(self.policies)

    def __repr__(self) -> str:
        return f"<CompiledPolicySet policies={len(self)} default_allow={self.default_allow}>"

    def evaluate(
        self,
        agent: AgentAttributes | Mapping[str, Any],
        action: str,
        resource: str,
        context: Mapping[str, Any] | None = None,
        *,
        now: datetime | None = None,
        anomaly_score: float | None = None,
    ) -> Decision:
        """Decide whether ``agent`` may perform ``action`` on ``resource`` given ``context``.

        ``agent`` is an :class:`~agentgov.policy.request.AgentAttributes` or an agent record mapping;
        ``context`` is the client's free-form object; ``now`` sets ``context.hour``/``context.weekday``
        (pass it in the tenant's timezone; default: current UTC time); ``anomaly_score`` (0..1) is the
        detector's score of the action, given to policies as ``context.anomaly_score`` in basis points.

        Raises :class:`~agentgov.policy.errors.InvalidRequestError` (a ``ValueError``) for malformed input:
        bad agent attributes, an empty action, or a declared context attribute of the wrong type. Cedar
        evaluation errors never raise; they are reported in the decision. Pure apart from reading the clock
        when ``now`` is omitted; synchronous and fast enough to call on the event loop.
        """
        if not isinstance(agent, AgentAttributes):
            agent = AgentAttributes.from_mapping(agent)
        action = check_action(action)
        resource = check_resource(resource)
        ctx = cedar_context(action, context, now or datetime.now(UTC), anomaly_score=anomaly_score)
        context_json = json.dumps(ctx)
        memo_key = None
        if len(resource) + len(context_json) <= MEMO_MAX_INPUT_CHARS:
            memo_key = (agent, action, resource, context_json)
            remembered = self._memo.get(memo_key)
            if remembered is not None:
                self._memo.move_to_end(memo_key)
                return remembered
        request = cedar_request(agent, action, resource, context_json)
        try:
            result = cedarpy.is_authorized(request, self._cedar, cedar_entities(agent, resource))
        except Exception as exc:  # cedarpy must never take the caller down: fail closed instead
            return self._decide(agent, ctx, [], [PolicyEvaluationError(None, f"cedar failed: {exc}")], True)
        errors = [self._evaluation_error(e) for e in result.diagnostics.errors]
        if result.decision == cedarpy.Decision.NoDecision:
            return self._decide(agent, ctx, [], errors, True)
        determining = [self._by_key[k] for k in result.diagnostics.reasons if k in self._by_key]
        decision = self._decide(agent, ctx, determining, errors, False, cedar_allowed=result.allowed)
        if memo_key is not None:
            self._memo[memo_key] = decision
            if len(self._memo) > MEMO_SIZE:
                self._memo.popitem(last=False)
        return decision

    def _evaluation_error(self, text: str) -> PolicyEvaluationError:
        m = _EVAL_ERROR.match(text)
        if m and m.group("key") in self._by_key:
            return PolicyEvaluationError(self._by_key[m.group("key")].ref, m.group("message"))
        return PolicyEvaluationError(None, text)

    def _decide(
        self,
        agent: AgentAttributes,
        ctx: Mapping[str, Any],
        determining: list[PolicyInfo],
        errors: list[PolicyEvaluationError],
        request_failed: bool,
        *,
        cedar_allowed: bool = False,
    ) -> Decision:
        default_applied = not determining and not request_failed
        allowed = self.default_allow if default_applied else (cedar_allowed and not request_failed)
        required_approval = allowed and any(p.requires_approval for p in determining)
        severity = highest_severity(p.severity for p in determining)
        risk = assess_risk(
            agent_risk=agent.risk_score,
            allowed=allowed,
            required_approval=required_approval,
            default_applied=default_applied,
            severity=severity,
            context=ctx,
            policy_errors=len(errors),
        )
        return Decision(
            allowed=allowed,
            reason=explain(
                allowed=allowed,
                determining=determining,
                default_allow=self.default_allow,
                errors=errors,
                request_failed=request_failed,
            ),
            severity=severity,
            required_approval=required_approval,
            determining_policies=tuple(p.ref for p in determining),
            default_applied=default_applied,
            risk=risk,
            errors=tuple(errors),
        )


def compile_policy_set(
    documents: Iterable[PolicyDocument | ValidatedDocument], *, default_allow: bool = False
) -> CompiledPolicySet:
    """Compile a tenant's active documents (``is_active`` false ones are skipped) into one policy set.

    :class:`PolicyDocument` items are validated with :func:`~agentgov.policy.document.validate_document`;
    :class:`ValidatedDocument` items are trusted as they are. Raises
    :class:`~agentgov.policy.errors.PolicyValidationError` if a document is invalid or an ``@id`` is used by
    two active documents -- call it on the candidate set before committing a write to enforce uniqueness.
    """
    policies: list[PolicyInfo] = []
    owners: dict[str, str] = {}
    for item in documents:
        validated = item if isinstance(item, ValidatedDocument) else None
        doc = validated.document if validated else item
        assert isinstance(doc, PolicyDocument)
        if not doc.is_active:
            continue
        validated = validated or validate_document(doc)
        for p in validated.policies:
            if p.policy_id is not None:
                if p.policy_id in owners:
                    raise PolicyValidationError(
                        doc.name,
                        [
                            Problem(
                                "annotation",
                                f"@id {p.policy_id!r} is already used in policy document '{owners[p.policy_id]}'",
                                p.position,
                                p.policy_id,
                            )
                        ],
                    )
                owners[p.policy_id] = doc.name
            policies.append(p)
    return CompiledPolicySet(policies, default_allow=default_allow)


_CANARY = PolicyDocument(
    name="canary",
    cedar="""
@id("canary-permit") @reason("active agents may act")
permit (principal, action, resource) when { principal.status == "active" };
@id("canary-forbid") @severity("critical")
forbid (principal, action == Action::"canary.forbidden", resource);
""",
)


@functools.cache
def _canary_set() -> CompiledPolicySet:
    return compile_policy_set([_CANARY])


def canary_ok() -> bool:
    """Readiness probe: evaluate a tiny built-in policy set with cedarpy and check both expected answers.

    Returns ``True`` when an active agent is allowed a normal action and denied ``canary.forbidden``;
    ``False`` on any wrong answer or exception (never raises). The first call compiles the set (~1 ms).
    """
    try:
        agent = AgentAttributes(id="canary", name="canary", type="tool", status="active")
        now = datetime(2024, 1, 1, 12, tzinfo=UTC)
        ok = _canary_set().evaluate(agent, "canary.read", "canary:r", now=now)
        denied = _canary_set().evaluate(agent, "canary.forbidden", "canary:r", now=now)
        return (
            ok.allowed
            and ok.determining_policies == ("canary-permit",)
            and not denied.allowed
            and denied.determining_policies == ("canary-forbid",)
            and denied.severity == "critical"
        )
    except Exception:
        return False
