"""The OpenAPI document at /openapi.json, completed from what the code declares.

quart-schema builds each operation from the view's decorators (request, query and response models). This
provider adds what those decorators cannot say, in one place rather than on every route:

- error answers derived from the code: the `@authorize` rule gives 401 (and 403 when a permission or a
  tenant is required); a JSON body gives 400, 413, 415 and 422; a query model 422 and 431 (the HTTP
  server refuses an over-long request line, with no JSON body); a path parameter 404 and 422; anything
  that reaches storage or an actor 503. The app's errors share the `Error` body
  `{"detail": string, "errors"?: [{"field", "message", "type"}]}`;
- statuses a handler raises itself (409 conflicts, 404 for a referenced agent, ...) and success statuses
  that have no response model (204, 302), from `EXTRA_RESPONSES`;
- `format: uuid` on ids, enums on roles and statuses, `required: true` on request bodies a route cannot
  do without;
- the correct path for rules with converters (quart-schema's pattern merges `<a>/x/<int:b>` into `{b}`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from quart_schema.openapi import OpenAPIProvider
from werkzeug.routing import Rule

from agentgov.http.auth import ROUTE_RULE_ATTR, RouteRule
from agentgov.security.roles import Role

PATH_PARAMETER = re.compile(r"<(?:[^<>:]*:)?([^<>]+)>")
ERROR_REF = {"$ref": "#/components/schemas/Error"}

ERROR_SCHEMA: dict[str, Any] = {
    "title": "Error",
    "type": "object",
    "required": ["detail"],
    "properties": {
        "detail": {"type": "string", "description": "What went wrong, for a person to read"},
        "errors": {
            "type": "array",
            "description": "For 422: one item per wrong field",
            "items": {
                "type": "object",
                "required": ["field", "message", "type"],
                "properties": {
                    "field": {"type": "string"},
                    "message": {"type": "string"},
                    "type": {"type": "string"},
                },
            },
        },
    },
    "additionalProperties": True,
}

ERROR_DESCRIPTIONS = {
    400: "Bad request: the body is empty or not JSON",
    401: "Missing or invalid credentials",
    403: "Authenticated, but not allowed to do this",
    404: "Not found",
    409: "Conflict with the current state",
    410: "Gone: it existed and was removed (e.g. an expired export file)",
    413: "Request body too large",
    415: "Content-Type must be application/json",
    422: "Validation failed: `errors` names each wrong field",
    429: "Too many failed attempts; see Retry-After",
    502: "An upstream service (the identity provider, the SIEM) could not be reached or answered wrongly",
    503: "Service unavailable (busy, stopping, or storage unreachable); see Retry-After",
}

SUCCESS_DESCRIPTIONS = {200: "OK", 201: "Created", 202: "Accepted", 204: "No content", 302: "Redirect"}

# Statuses a view answers beyond what its decorators imply: success codes without a response model, and
# errors the handler raises itself. Keyed by endpoint name.
EXTRA_RESPONSES: dict[str, tuple[int, ...]] = {
    "root.platform_info": (200,),
    "system.api_platform_info": (200,),
    "system.health": (200,),
    "exports.export": (200,),
    "exports.export_csv": (200,),
    "exports.export_json": (200,),
    "exports.manifest": (200,),
    "exports.public_key": (200,),
    "exports.download": (200, 404, 409, 410),
    "siem.siem_test": (409, 502),
    "tenants.create_tenant": (409,),
    "tenants.list_tenants": (200,),
    "auth.login": (401, 429),
    "auth.logout": (204,),
    "auth.me": (200,),
    "users.update_me": (409,),
    "users.change_password": (204,),
    "users.create_user": (409,),
    "users.list_users": (200,),
    "users.update_user": (409,),
    "users.reset_password": (204,),
    "users.change_role": (409,),
    "users.block_user": (409,),
    "users.unblock_user": (409,),
    "users.delete_user": (204, 409),
    "api_keys.list_keys": (200,),
    "api_keys.revoke_key": (204,),
    "policies.create_policy": (409,),
    "policies.update_policy": (409,),
    "policies.delete_policy": (204, 409),
    "policies.put_settings": (409,),
    "policies.check": (404,),
    "agents.delete_agent": (204,),
    "discovery.ingest": (404, 409),
    "discovery.ingest_batch": (404, 409),
    "discovery.confirm_candidate": (200, 409),
    "discovery.dismiss_candidate": (409,),
    "sso.login": (302, 400, 404, 502),
    "sso.callback": (302, 400, 401, 403, 404, 502),
    "sso.exchange": (400, 401),
    "sso.list_providers": (),
    "audit.create_entry": (200, 404),
    "hitl.request_approval": (200, 404),
    "hitl.approve": (409,),
    "hitl.reject": (409,),
    "webhooks.agent_webhook": (401, 404),
    "anomalies.report": (404,),
    "anomalies.train": (409,),
    "anomalies.cancel": (409,),
    "anomalies.set_threshold": (409,),
    "anomalies.current_training": (404,),
    "guard.validate_prompt": (404,),
    "guard.feedback": (404,),
    "guard.train": (409,),
    "guard.cancel": (409,),
    "guard.training_status": (404,),
}

# Routes answering a file: the media types of their 200 (the export formats).
_ALL_FORMATS = ("text/csv", "application/json", "application/x-ndjson")
FILE_RESPONSES: dict[str, tuple[str, ...]] = {
    "exports.export": _ALL_FORMATS,
    "exports.export_csv": ("text/csv",),
    "exports.export_json": ("application/json",),
    "exports.download": _ALL_FORMATS,
}
FILE_SCHEMAS = {
    "text/csv": {"type": "string"},
    "application/json": {"type": "array", "items": {"type": "object"}},
    "application/x-ndjson": {"type": "string"},
}

# Routes whose body may be left out (the model's defaults apply).
OPTIONAL_BODY = {
    "agents.heartbeat",
    "discovery.start_clustering",
    "discovery.confirm_candidate",
    "hitl.approve",
    "hitl.reject",
    "anomalies.train",
    "guard.train",
}

# Routes that answer without storage or actors (no 503).
NO_BACKEND = {
    "root.platform_info",
    "system.api_platform_info",
    "system.health",
    "system.ready",
    "sso.list_providers",
    "guard.health",
    "exports.public_key",
}

UUID_PATH_PARAMETERS = {
    "user_id",
    "policy_id",
    "agent_id",
    "job_id",
    "export_id",
    "candidate_id",
    "log_id",
    "approval_id",
    "task_id",
}

# (schema title, property) -> extra keywords. "*" matches any schema.
ROLE_ENUM = [role.value for role in Role]
TENANT_ROLE_ENUM = [role.value for role in Role if role is not Role.SUPER_ADMIN]
PROPERTY_KEYWORDS: dict[tuple[str, str], dict[str, Any]] = {
    ("UserOut", "id"): {"format": "uuid"},
    ("UserOut", "tenant_id"): {"format": "uuid"},
    ("UserOut", "role"): {"enum": ROLE_ENUM},
    ("UserCreate", "role"): {"enum": TENANT_ROLE_ENUM},
    ("RoleChange", "role"): {"enum": TENANT_ROLE_ENUM},
    ("ApiKeyCreate", "role"): {"enum": ROLE_ENUM},
    ("PolicyOut", "id"): {"format": "uuid"},
    ("PolicyVersionOut", "policy_id"): {"format": "uuid"},
    ("AgentOut", "id"): {"format": "uuid"},
    ("AgentOut", "status"): {"enum": ["active", "inactive", "error"]},
    ("SearchHitOut", "id"): {"format": "uuid"},
    ("SearchHitOut", "status"): {"enum": ["active", "inactive", "error"]},
    ("IngestResultOut", "candidate_id"): {"format": "uuid"},
    ("IngestResultOut", "agent_id"): {"format": "uuid"},
    ("CandidateOut", "id"): {"format": "uuid"},
    ("CandidateOut", "agent_id"): {"format": "uuid"},
    ("CandidateOut", "status"): {"enum": ["pending", "confirmed", "dismissed", "merged"]},
    ("AuditEntryOut", "id"): {"format": "uuid"},
    ("FindingOut", "entry_id"): {"format": "uuid"},
    ("ApprovalOut", "id"): {"format": "uuid"},
    ("ApprovalOut", "agent_id"): {"format": "uuid"},
    ("ApprovalOut", "status"): {"enum": ["pending", "approved", "rejected", "expired"]},
    ("ComponentStatus", "status"): {"enum": ["ok", "down"]},
    ("CheckRequest", "agent_id"): {"format": "uuid"},
}

# (endpoint, query parameter) -> extra keywords.
QUERY_KEYWORDS: dict[tuple[str, str], dict[str, Any]] = {
    ("users.list_users", "role"): {"enum": ROLE_ENUM},
    ("users.list_users", "tenant_id"): {"format": "uuid"},
}


def openapi_path(rule: str) -> str:
    """The OpenAPI path of a werkzeug rule: `/p/<a>/v/<int:b>` -> `/p/{a}/v/{b}`."""
    return PATH_PARAMETER.sub(r"{\1}", rule)


class CompleteOpenAPIProvider(OpenAPIProvider):
    """quart-schema's provider plus the error answers, formats and enums described in the module doc."""

    def schema(self) -> dict[str, Any]:
        document = super().schema()
        document["components"]["schemas"]["Error"] = ERROR_SCHEMA
        for schema in _object_schemas(document):
            _apply_property_keywords(schema)
        return document

    def build_paths(self, rule: Rule) -> tuple[dict, dict]:
        paths, components = super().build_paths(rule)
        (operations,) = paths.values()
        view = self._app.view_functions[rule.endpoint]
        for operation in operations.values():
            self._complete(operation, rule, view)
        return {openapi_path(rule.rule): operations}, components

    def _complete(self, operation: dict[str, Any], rule: Rule, view: Any) -> None:
        endpoint = rule.endpoint
        operation["responses"] = dict(operation["responses"])
        statuses: set[int] = set(EXTRA_RESPONSES.get(endpoint, ()))
        auth: RouteRule | None = getattr(view, ROUTE_RULE_ATTR, None)
        if auth is not None and auth.schemes:
            statuses.add(401)
            if auth.permission is not None or auth.tenant_scoped:
                statuses.add(403)
        body = operation.get("requestBody")
        if body is not None:
            statuses |= {400, 413, 415, 422}
            operation["requestBody"] = {**body, "required": endpoint not in OPTIONAL_BODY}
        parameters = operation.get("parameters", [])
        if any(p["in"] == "query" for p in parameters):
            statuses |= {422, 431}
        if any(p["in"] == "path" for p in parameters):
            statuses |= {404, 422}
        if endpoint not in NO_BACKEND:
            statuses.add(503)
        parameters = [dict(p) for p in parameters]
        for parameter in parameters:
            if parameter["in"] == "path" and parameter["name"] in UUID_PATH_PARAMETERS:
                parameter["schema"] = {"type": "string", "format": "uuid"}
            keywords = QUERY_KEYWORDS.get((endpoint, parameter["name"]))
            if parameter["in"] == "query" and keywords is not None:
                parameter["schema"] = _constrained(parameter["schema"], keywords)
        operation["parameters"] = parameters
        documented = {int(code) for code in operation["responses"]}
        if not any(200 <= code < 400 for code in documented | statuses):
            statuses.add(200)
        for status in sorted(statuses - documented):
            operation["responses"][str(status)] = _response(status)
        if endpoint in FILE_RESPONSES:
            operation["responses"]["200"] = {
                "description": "The export file (streamed)",
                "content": {media: {"schema": FILE_SCHEMAS[media]} for media in FILE_RESPONSES[endpoint]},
                "headers": {
                    "Content-Disposition": {"schema": {"type": "string"}},
                    "X-Export-Id": {"schema": {"type": "string", "format": "uuid"}},
                },
            }


def _response(status: int) -> dict[str, Any]:
    if status == 204:
        return {"description": SUCCESS_DESCRIPTIONS[204]}
    if status == 431:  # answered by the HTTP server before the app sees the request: no JSON body
        return {"description": "Request line or headers too large (a very long query string)"}
    if status == 302:
        return {"description": SUCCESS_DESCRIPTIONS[302], "headers": {"Location": {"schema": {"type": "string"}}}}
    if status < 400:
        return {
            "description": SUCCESS_DESCRIPTIONS.get(status, "OK"),
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    return {
        "description": ERROR_DESCRIPTIONS.get(status, "Error"),
        "content": {"application/json": {"schema": ERROR_REF}},
    }


def _object_schemas(node: Any) -> Iterator[dict[str, Any]]:
    """Every JSON object in `node` that has a `title` and `properties` (a model's schema)."""
    if isinstance(node, dict):
        if "title" in node and isinstance(node.get("properties"), dict):
            yield node
        for value in node.values():
            yield from _object_schemas(value)
    elif isinstance(node, list):
        for value in node:
            yield from _object_schemas(value)


def _apply_property_keywords(schema: dict[str, Any]) -> None:
    title = schema["title"]
    for name, prop in schema["properties"].items():
        keywords = PROPERTY_KEYWORDS.get((title, name))
        if keywords is not None:
            schema["properties"][name] = _constrained(prop, keywords)


def _constrained(schema: dict[str, Any], keywords: dict[str, Any]) -> dict[str, Any]:
    """`schema` with `keywords` added to it, or to its string branch when it is an optional (anyOf) field."""
    if "anyOf" in schema:
        branches = [{**b, **keywords} if b.get("type") == "string" else b for b in schema["anyOf"]]
        return {**schema, "anyOf": branches}
    return {**schema, **keywords}
