"""Cedar policies: CRUD with version history, templates, the tenant default decision, and the check.

Documents
    ``{"name", "description"?, "cedar", "is_active"?}``; ``cedar`` holds one or more Cedar policies whose
    metadata lives in annotations (``@id``, ``@reason``, ``@severity``, ``@requires_approval``). Every write
    is validated (syntax, annotations, types against the Cedar schema): a rejected document is a 422 whose
    ``detail`` names the document, each failing policy (``@id`` and position) and the problem; ``errors``
    lists them structured. An ``@id`` already used by another active document is a 409 naming it.

History
    Each create, update and delete stores a version; ``GET /policies/{id}/versions`` lists them newest first
    and ``GET /policies/{id}/versions/{version}`` returns one. A delete is soft: the document disappears from
    reads, lists and checks (404 afterwards) but its history, ending with a ``deleted`` version, stays
    readable.

Checks
    ``POST /policies/check`` evaluates the tenant's active policies for a registered agent. The decision is
    recorded in the audit trail (``kind = "policy_check"``) by the batching audit actor: with
    ``DECISION_LOG=sync`` (the default) the answer waits for that entry's commit, with ``async`` only for it
    to be queued. A full audit mailbox is a 503 with ``Retry-After: 1`` (a decision is never answered without
    its entry), see `agentgov.checks.record_decision`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import trio
from pydantic import BaseModel, Field, StrictBool
from quart import Blueprint, Response, jsonify
from quart_schema import document_request, document_response, tag

from agentgov.actors.policy import (
    CreatePolicy,
    DeletePolicy,
    SetDefaultDecision,
    UpdatePolicy,
    policy,
)
from agentgov.actors.registry import AgentNotFound
from agentgov.checks import check_action
from agentgov.http.actor_calls import ask_actor
from agentgov.http.auth import Scheme, authorize, principal, services, tenant_id
from agentgov.http.errors import ApiError
from agentgov.http.ids import parse_uuid
from agentgov.http.schemas import MAX_PAGE_SIZE, AnomalyOut, Page, RequestModel, bounded_name, page
from agentgov.http.text_guard import INT64_MAX
from agentgov.http.validation import json_body, query, read_json
from agentgov.integrations.usage import note_use
from agentgov.policy import TEMPLATES, InvalidRequestError, PolicyDocument, PolicyValidationError
from agentgov.policy.document import MAX_CEDAR_CHARS
from agentgov.security.principal import Principal
from agentgov.security.roles import Permission
from agentgov.services import Services
from agentgov.storage.policies import (
    DuplicatePolicyId,
    PolicyNotFound,
    PolicyRepo,
    PolicyVersion,
    StaleVersion,
    StoredPolicy,
)

bp = Blueprint("policies", __name__)

CHECK_TIMEOUT = 10.0
"""Seconds a check may take (registry lookup, evaluation, approval request) before it answers 503."""

Description = Annotated[str, Field(max_length=2000)]
Cedar = Annotated[str, Field(min_length=1, max_length=MAX_CEDAR_CHARS)]


# ------------------------------------------------------------------------------------------------ schemas


class PolicyCreate(RequestModel):
    name: bounded_name(200)  # type: ignore[valid-type]
    description: Description | None = None
    cedar: Cedar = Field(description="Cedar policy text: one or more policies, metadata in annotations")
    is_active: StrictBool = True


class PolicyUpdate(RequestModel):
    """Any subset of the fields; those left out keep their value. A change creates a new version."""

    name: bounded_name(200) | None = None  # type: ignore[valid-type]
    description: Description | None = None
    cedar: Cedar | None = None
    is_active: StrictBool | None = None


class RuleOut(BaseModel):
    """One Cedar policy of a document, with its annotations."""

    position: int = Field(description="1-based position in the document")
    effect: Literal["permit", "forbid"]
    policy_id: str | None = Field(description="the @id annotation")
    ref: str = Field(description="how decisions name it: @id, else '<document name>#<position>'")
    reason: str | None
    severity: str | None
    requires_approval: bool


class PolicyOut(BaseModel):
    id: str
    name: str
    description: str | None
    cedar: str
    is_active: bool
    version: int = Field(description="incremented by every update; see /policies/{id}/versions")
    rules: list[RuleOut]
    created_at: str
    updated_at: str
    created_by: str
    updated_by: str


class PolicyVersionOut(BaseModel):
    policy_id: str
    version: int
    change: Literal["created", "updated", "deleted"]
    name: str
    description: str | None
    cedar: str
    is_active: bool
    rules: list[RuleOut]
    changed_at: str
    changed_by: str


class ListQuery(BaseModel):  # unknown query parameters are ignored, as on every route
    active_only: bool = False
    skip: int = Field(0, ge=0)
    limit: int = Field(50, ge=1, le=MAX_PAGE_SIZE)


class PageQuery(BaseModel):
    skip: int = Field(0, ge=0)
    limit: int = Field(50, ge=1, le=MAX_PAGE_SIZE)


class PolicySettings(RequestModel):
    default_decision: Literal["deny", "allow"] = Field(
        description="the decision when no policy applies to a check (deny unless changed)"
    )


class CheckRequest(RequestModel):
    """The check's body: the one schema of the OpenAPI document and of the hot path's parser."""

    agent_id: str = Field(max_length=64, description="UUID of a registered agent of the tenant")
    action: str = Field(min_length=1, max_length=256)
    resource: str = Field(max_length=2048)
    context: dict[str, Any] = Field(default_factory=dict, description="free-form key/value context")


class RiskFactorOut(BaseModel):
    name: str
    weight: float
    detail: str


class RiskOut(BaseModel):
    level: Literal["low", "medium", "high", "critical"]
    score: float
    factors: list[RiskFactorOut]


class EvaluationErrorOut(BaseModel):
    policy: str | None
    message: str


class CheckResponse(BaseModel):
    allowed: bool
    reason: str = Field(description="names the deciding policies by @id, with their @reason")
    severity: Literal["low", "medium", "high", "critical"] | None
    required_approval: bool
    risk_score: float = Field(ge=0.0, le=1.0)
    risk: RiskOut
    anomaly: AnomalyOut | None = Field(
        description="the anomaly detector's verdict on this action for this agent; null while no model is active"
    )
    approval_id: str | None = Field(description="the human approval request opened for this action, if any")
    decision_id: str = Field(description="id of this decision in the audit trail (details.decision_id)")
    determining_policies: list[str]
    default_applied: bool = Field(description="no policy applied; the tenant default decided")
    errors: list[EvaluationErrorOut] = Field(description="policies skipped after an evaluation error")
    evaluated_at: str


class TemplateOut(BaseModel):
    id: str
    name: str
    description: str
    parameters: list[dict[str, Any]]
    cedar: str = Field(description="the Cedar text rendered with the default parameters")
    examples: list[dict[str, Any]] = Field(description="check requests and the decisions they yield")


# ------------------------------------------------------------------------------------------------ helpers


def _policy_uuid(raw: str, name: str = "policy_id", where: str = "path parameter") -> str:
    """The canonical form of a UUID. Raises `ApiError` 422 naming `name` (`parse_uuid`)."""
    return parse_uuid(raw, name, where)


def _policy_out(p: StoredPolicy) -> dict[str, Any]:
    return {
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "cedar": p.cedar,
        "is_active": p.is_active,
        "version": p.version,
        "rules": p.rules,
        "created_at": p.created_at,
        "updated_at": p.updated_at,
        "created_by": p.created_by,
        "updated_by": p.updated_by,
    }


def _version_out(v: PolicyVersion) -> dict[str, Any]:
    return {
        "policy_id": v.policy_id,
        "version": v.version,
        "change": v.change,
        "name": v.name,
        "description": v.description,
        "cedar": v.cedar,
        "is_active": v.is_active,
        "rules": v.rules,
        "changed_at": v.changed_at,
        "changed_by": v.changed_by,
    }


def _invalid(exc: PolicyValidationError) -> ApiError:
    errors = [
        {
            "field": "cedar" if p.kind != "document" else "document",
            "message": str(p),
            "type": p.kind,
            "position": p.position,
            "policy_id": p.policy_id,
        }
        for p in exc.problems
    ]
    return ApiError(422, str(exc), errors=errors)


_WRITE_ERRORS = {
    PolicyValidationError: _invalid,
    DuplicatePolicyId: lambda exc: ApiError(409, str(exc)),
    PolicyNotFound: lambda _: ApiError(404, "Policy not found"),
    StaleVersion: lambda _: ApiError(409, "The policy was changed concurrently; retry the update"),
}


async def _write(message: Any) -> Any:
    """Send a write to the tenant's policy actor (`ask_actor`) and map its errors to HTTP answers."""
    return await ask_actor(policy(services(), tenant_id()), message, what="The policy engine", errors=_WRITE_ERRORS)


def _repo() -> PolicyRepo:
    return PolicyRepo(services().db)


# ------------------------------------------------------------------------------------------------- routes


@bp.post("/policies")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_WRITE)
@tag(["policies"])
@json_body(PolicyCreate)
@document_response(PolicyOut, 201)
async def create_policy(data: PolicyCreate) -> tuple[dict[str, Any], int]:
    """Create a policy document (validated: 422 names the failing policy; a duplicate @id is a 409)."""
    document = PolicyDocument(name=data.name, cedar=data.cedar, description=data.description, is_active=data.is_active)
    stored = await _write(CreatePolicy(document, principal().actor_label))
    return _policy_out(stored), 201


@bp.get("/policies")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_READ)
@tag(["policies"])
@query(ListQuery)
@document_response(Page[PolicyOut])
async def list_policies(query: ListQuery) -> dict[str, Any]:
    """List the tenant's policy documents, oldest first (deleted ones are left out)."""
    items, total = await _repo().list_live(
        tenant_id(), active_only=query.active_only, limit=query.limit, offset=query.skip
    )
    return page([_policy_out(p) for p in items], total, query.limit, query.skip)


@bp.get("/policies/templates")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_READ)
@tag(["policies"])
@query(PageQuery)
@document_response(Page[TemplateOut])
async def list_templates(query: PageQuery) -> dict[str, Any]:
    """Ready-made policies: description, parameters, Cedar text, example checks and their decisions."""
    chosen = TEMPLATES[query.skip : query.skip + query.limit]
    return page([t.to_dict() for t in chosen], len(TEMPLATES), query.limit, query.skip)


@bp.get("/policies/settings")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_READ)
@tag(["policies"])
@document_response(PolicySettings)
async def get_settings() -> dict[str, Any]:
    """The tenant's policy settings: the decision when no policy applies (deny by default)."""
    return {"default_decision": await _repo().default_decision(tenant_id())}


@bp.put("/policies/settings")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_WRITE)
@tag(["policies"])
@json_body(PolicySettings)
@document_response(PolicySettings)
async def put_settings(data: PolicySettings) -> dict[str, Any]:
    """Change the decision when no policy applies (Admin). Checks use it as soon as this answers."""
    return {"default_decision": await _write(SetDefaultDecision(data.default_decision))}


@bp.post("/policies/check")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_CHECK)
@tag(["policies"])
@document_request(CheckRequest)
@document_response(CheckResponse)
async def check() -> Response:
    """Evaluate the tenant's active policies for an agent's action; the decision is also audited.

    Served by `agentgov.http.hot_path` in front of Quart (same contract); this view documents the route and
    serves it when the app is built without the hot path.
    """
    return jsonify(await run_check(services(), principal(), await read_json()))


async def run_check(svc: Services, who: Principal, payload: Any) -> dict[str, Any]:
    """The `POST /policies/check` answer for `payload` (the parsed JSON body), checked by `who`.

    The body is checked by hand (the same 422 answers as `CheckRequest`) and the answer built as a plain
    dict: this is the hot path. Raises `ApiError` 422 (bad body), 404 (unknown agent), 503 (too slow).
    """
    agent_id, action, resource, context = _check_request(payload)
    assert who.tenant_id is not None  # the route is tenant-scoped
    try:
        with trio.fail_after(CHECK_TIMEOUT):
            result = await check_action(svc, who.tenant_id, agent_id, action, resource, context, actor=who.actor_label)
            note_use(svc, who.tenant_id, "checks", agent_id)
            return result.to_response()
    except AgentNotFound:
        raise ApiError(404, "Agent not found") from None
    except InvalidRequestError as exc:
        raise ApiError(422, f"Invalid request body: {exc}") from None
    except trio.TooSlowError:
        raise ApiError(503, "The policy check did not complete in time", headers={"Retry-After": "1"}) from None


def _body_error(field: str, message: str, kind: str) -> ApiError:
    return ApiError(
        422, f"Invalid request body: {field}: {message}", errors=[{"field": field, "message": message, "type": kind}]
    )


_CHECK_FIELDS = frozenset(CheckRequest.model_fields)


def _length_limits(field: str) -> tuple[int, int]:
    """(min, max) length of a string field of `CheckRequest`, read from the model itself."""
    low, high = 0, None
    for rule in CheckRequest.model_fields[field].metadata:
        low = getattr(rule, "min_length", low)
        high = getattr(rule, "max_length", high)
    assert high is not None, f"CheckRequest.{field} needs a max_length"
    return low, high


_CHECK_STRINGS = tuple((field, *_length_limits(field)) for field in ("agent_id", "action", "resource"))


def _check_request(raw: Any) -> tuple[str, str, str, dict[str, Any]]:
    """(agent_id, action, resource, context) of a check body. Raises `ApiError` 422 naming the field.

    Applies `CheckRequest` (field names and length limits are read from the model): `agent_id` a UUID string,
    `action` and `resource` within their lengths, `context` an object (missing or null: empty); any other
    key is a 422 naming it.
    """
    if not isinstance(raw, dict):
        raise ApiError(422, "Invalid request body: expected a JSON object", errors=[])
    for key in raw:
        if key not in _CHECK_FIELDS:
            raise _body_error(key, "Extra inputs are not permitted", "extra_forbidden")
    values: dict[str, str] = {}
    for field, low, high in _CHECK_STRINGS:
        value = raw.get(field)
        if value is None:
            raise _body_error(field, "Field required", "missing")
        if not isinstance(value, str):
            raise _body_error(field, "Input should be a valid string", "string_type")
        if not low <= len(value) <= high:
            raise _body_error(field, f"length must be {low}..{high} characters", "string_length")
        values[field] = value
    context = raw.get("context")
    if context is None:
        context = {}
    elif not isinstance(context, dict):
        raise _body_error("context", "Input should be a valid dictionary (a JSON object)", "dict_type")
    return _policy_uuid(values["agent_id"], "agent_id", "request body"), values["action"], values["resource"], context


@bp.get("/policies/<policy_id>")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_READ)
@tag(["policies"])
@document_response(PolicyOut)
async def get_policy(policy_id: str) -> dict[str, Any]:
    """One policy document."""
    stored = await _repo().get(tenant_id(), _policy_uuid(policy_id))
    if stored is None:
        raise ApiError(404, "Policy not found")
    return _policy_out(stored)


@bp.put("/policies/<policy_id>")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_WRITE)
@tag(["policies"])
@json_body(PolicyUpdate)
@document_response(PolicyOut)
async def update_policy(policy_id: str, data: PolicyUpdate) -> dict[str, Any]:
    """Change a policy (any subset of name, description, cedar, is_active); the old version is kept."""
    pid = _policy_uuid(policy_id)
    changes = {name: getattr(data, name) for name in data.model_fields_set}
    for required in ("name", "cedar", "is_active"):
        if required in changes and changes[required] is None:
            raise ApiError(
                422,
                f"Invalid request body: {required}: may not be null",
                errors=[{"field": required, "message": "may not be null", "type": "null"}],
            )
    if not changes:
        raise ApiError(
            422,
            "Invalid request body: give at least one of name, description, cedar, is_active",
            errors=[],
        )
    stored = await _write(UpdatePolicy(pid, changes, principal().actor_label))
    return _policy_out(stored)


@bp.delete("/policies/<policy_id>")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_WRITE)
@tag(["policies"])
async def delete_policy(policy_id: str) -> tuple[str, int]:
    """Delete a policy: it stops applying at once; its history stays readable at /versions."""
    await _write(DeletePolicy(_policy_uuid(policy_id), principal().actor_label))
    return "", 204


@bp.get("/policies/<policy_id>/versions")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_READ)
@tag(["policies"])
@query(PageQuery)
@document_response(Page[PolicyVersionOut])
async def list_versions(policy_id: str, query: PageQuery) -> dict[str, Any]:
    """Every version of a policy, newest first (also for a deleted policy)."""
    found = await _repo().versions(tenant_id(), _policy_uuid(policy_id), limit=query.limit, offset=query.skip)
    if found is None:
        raise ApiError(404, "Policy not found")
    items, total = found
    return page([_version_out(v) for v in items], total, query.limit, query.skip)


@bp.get("/policies/<policy_id>/versions/<int:version>")
@authorize(Scheme.API_KEY, permission=Permission.POLICIES_READ)
@tag(["policies"])
@document_response(PolicyVersionOut)
async def get_version(policy_id: str, version: int) -> dict[str, Any]:
    """One version of a policy."""
    policy_uuid = _policy_uuid(policy_id)
    found = None if version > INT64_MAX else await _repo().get_version(tenant_id(), policy_uuid, version)
    if found is None:
        raise ApiError(404, "Policy version not found")
    return _version_out(found)
