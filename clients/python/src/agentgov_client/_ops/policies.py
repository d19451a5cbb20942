"""Policies (Cedar documents), their versions, templates, the tenant default, and the policy check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import (
    DEFAULT_PAGE_SIZE,
    UNSET,
    Pager,
    body,
    changes,
    model,
    nothing,
    page_of,
    page_query,
    raw_object,
    seg,
)
from agentgov_client.models import Page, Policy, PolicyDecision, PolicyTemplate, PolicyVersion


def check(
    core: ClientCore, agent_id: str, action: str, resource: str, context: Mapping[str, Any] | None = None
) -> Flow[PolicyDecision]:
    """``POST /policies/check`` (Developer+): may the agent take this action on this resource? The decision
    (`allowed`, `reason`, `severity`, `required_approval` with `approval_id`, risk, anomaly) is recorded in
    the audit trail. Raises `NotFoundError` for an unknown agent, `ValidationError` for a bad context.
    Retried (a check is safe to repeat)."""
    payload = {"agent_id": str(agent_id), "action": action, "resource": resource, "context": dict(context or {})}
    return core.execute(Call("POST", "/policies/check", model(PolicyDecision), json=payload, retry_safe=True))


def create_policy(
    core: ClientCore, name: str, cedar: str, *, description: str | None = None, is_active: bool = True
) -> Flow[Policy]:
    """``POST /policies`` (Admin): a Cedar document, validated on write. Raises `ValidationError` naming the
    failing policy and problem (`errors`), `ConflictError` for an ``@id`` another active document uses. Not
    retried."""
    payload = body(name=name, cedar=cedar, description=description, is_active=is_active)
    return core.execute(Call("POST", "/policies", model(Policy), json=payload))


def get_policy(core: ClientCore, policy_id: str) -> Flow[Policy]:
    """``GET /policies/{id}``. Raises `NotFoundError` (also once deleted). Retried."""
    return core.execute(Call("GET", f"/policies/{seg(policy_id)}", model(Policy)))


def list_policies(
    core: ClientCore, *, active_only: bool = False, limit: int = 50, offset: int = 0
) -> Flow[Page[Policy]]:
    """``GET /policies`` (query ``skip``): the tenant's live policies, oldest first. Retried."""
    query = page_query("skip", offset, limit, active_only=active_only)
    return core.execute(Call("GET", "/policies", page_of(Policy), params=query))


def iter_policies(core: ClientCore, *, active_only: bool = False, page_size: int = DEFAULT_PAGE_SIZE) -> Pager[Policy]:
    """Every live policy, page after page (see `list_policies`)."""
    return Pager(
        lambda offset, limit: list_policies(core, active_only=active_only, limit=limit, offset=offset), page_size
    )


def update_policy(
    core: ClientCore,
    policy_id: str,
    *,
    name: Any = UNSET,
    cedar: Any = UNSET,
    description: Any = UNSET,
    is_active: Any = UNSET,
) -> Flow[Policy]:
    """``PUT /policies/{id}`` (Admin): change the given fields; the previous version is kept. Raises
    `ValidationError`, `ConflictError` (duplicate ``@id``, concurrent change), `NotFoundError`. Not retried."""
    payload = changes(name=name, cedar=cedar, description=description, is_active=is_active)
    return core.execute(Call("PUT", f"/policies/{seg(policy_id)}", model(Policy), json=payload))


def delete_policy(core: ClientCore, policy_id: str) -> Flow[None]:
    """``DELETE /policies/{id}`` (Admin): stops applying at once; its history stays readable. Not retried."""
    return core.execute(Call("DELETE", f"/policies/{seg(policy_id)}", nothing))


def list_policy_versions(
    core: ClientCore, policy_id: str, *, limit: int = 50, offset: int = 0
) -> Flow[Page[PolicyVersion]]:
    """``GET /policies/{id}/versions`` (query ``skip``): every version, newest first (also once deleted)."""
    path = f"/policies/{seg(policy_id)}/versions"
    return core.execute(Call("GET", path, page_of(PolicyVersion), params=page_query("skip", offset, limit)))


def get_policy_version(core: ClientCore, policy_id: str, version: int) -> Flow[PolicyVersion]:
    """``GET /policies/{id}/versions/{n}``. Raises `NotFoundError`. Retried."""
    path = f"/policies/{seg(policy_id)}/versions/{int(version)}"
    return core.execute(Call("GET", path, model(PolicyVersion)))


def list_policy_templates(core: ClientCore, *, limit: int = 50, offset: int = 0) -> Flow[Page[PolicyTemplate]]:
    """``GET /policies/templates`` (query ``skip``): ready-made policies with parameters and example checks."""
    query = page_query("skip", offset, limit)
    return core.execute(Call("GET", "/policies/templates", page_of(PolicyTemplate), params=query))


def iter_policy_templates(core: ClientCore, *, page_size: int = DEFAULT_PAGE_SIZE) -> Pager[PolicyTemplate]:
    """Every policy template (see `list_policy_templates`)."""
    return Pager(lambda offset, limit: list_policy_templates(core, limit=limit, offset=offset), page_size)


def get_policy_settings(core: ClientCore) -> Flow[dict[str, Any]]:
    """``GET /policies/settings``: ``{"default_decision": "deny"|"allow"}`` (when no policy applies)."""
    return core.execute(Call("GET", "/policies/settings", raw_object))


def set_default_decision(core: ClientCore, default_decision: str) -> Flow[dict[str, Any]]:
    """``PUT /policies/settings`` (Admin): the decision when no policy applies, ``deny`` or ``allow``."""
    payload = {"default_decision": default_decision}
    return core.execute(Call("PUT", "/policies/settings", raw_object, json=payload))
