"""Every route, every role: the declared rule matches the matrix below, and is enforced.

`EXPECTED` lists each (method, path) with the permission it needs (None: public; "admin-key": the
provisioning key). A route missing from the table, or declared differently, fails the first test, so
every new route gets a reviewed rule. The second test calls each route as each role (with a fresh user
session) and checks 403 exactly where the matrix denies, and 401 without credentials.
"""

from __future__ import annotations

import re
import uuid

import pytest

from agentgov.http.auth import ROUTE_RULE_ATTR, RouteRule, Scheme
from agentgov.security.roles import Role, has_permission
from agentgov.security.sessions import create_session
from agentgov.storage.identity import NewUser

EXPECTED: dict[tuple[str, str], str | None] = {
    ("GET", "/"): None,
    ("GET", "/api/v1/health"): None,
    ("GET", "/api/v1/health/ready"): None,
    ("GET", "/api/v1/status"): "status:read",
    ("POST", "/api/v1/tenants"): "admin-key",
    ("GET", "/api/v1/tenants"): "tenants:list",
    ("POST", "/api/v1/auth/login"): None,
    ("POST", "/api/v1/auth/logout"): "profile:self",
    ("GET", "/api/v1/auth/me"): "profile:self",
    ("GET", "/api/v1/users/me"): "profile:self",
    ("PUT", "/api/v1/users/me"): "profile:self",
    ("POST", "/api/v1/users/me/change-password"): "profile:self",
    ("POST", "/api/v1/users"): "users:manage",
    ("GET", "/api/v1/users"): "users:manage",
    ("GET", "/api/v1/users/<user_id>"): "users:manage",
    ("PUT", "/api/v1/users/<user_id>"): "users:manage",
    ("POST", "/api/v1/users/<user_id>/reset-password"): "users:manage",
    ("PUT", "/api/v1/users/<user_id>/role"): "users:manage",
    ("POST", "/api/v1/users/<user_id>/block"): "users:manage",
    ("POST", "/api/v1/users/<user_id>/unblock"): "users:manage",
    ("DELETE", "/api/v1/users/<user_id>"): "users:manage",
    ("POST", "/api/v1/api-keys"): "api_keys:own",
    ("GET", "/api/v1/api-keys"): "api_keys:own",
    ("DELETE", "/api/v1/api-keys/<key_id>"): "api_keys:own",
    ("POST", "/webhooks/agent"): "audit:write",
    ("POST", "/api/v1/policies"): "policies:write",
    ("GET", "/api/v1/policies"): "policies:read",
    ("GET", "/api/v1/policies/templates"): "policies:read",
    ("GET", "/api/v1/policies/settings"): "policies:read",
    ("PUT", "/api/v1/policies/settings"): "policies:write",
    ("POST", "/api/v1/policies/check"): "policies:check",
    ("GET", "/api/v1/policies/<policy_id>"): "policies:read",
    ("PUT", "/api/v1/policies/<policy_id>"): "policies:write",
    ("DELETE", "/api/v1/policies/<policy_id>"): "policies:write",
    ("GET", "/api/v1/policies/<policy_id>/versions"): "policies:read",
    ("GET", "/api/v1/policies/<policy_id>/versions/<int:version>"): "policies:read",
    ("POST", "/api/v1/agents/register"): "agents:write",
    ("GET", "/api/v1/agents"): "agents:read",
    ("GET", "/api/v1/agents/search"): "agents:read",
    ("GET", "/api/v1/agents/<agent_id>"): "agents:read",
    ("GET", "/api/v1/agents/<agent_id>/details"): "agents:read",
    ("POST", "/api/v1/agents/<agent_id>/heartbeat"): "agents:write",
    ("PUT", "/api/v1/agents/<agent_id>"): "agents:write",
    ("DELETE", "/api/v1/agents/<agent_id>"): "agents:write",
    ("POST", "/api/v1/discovery/ingest"): "agents:update",
    ("POST", "/api/v1/discovery/ingest/batch"): "agents:update",
    ("POST", "/api/v1/discovery/cluster"): "agents:update",
    ("GET", "/api/v1/discovery/jobs/<job_id>"): "agents:read",
    ("GET", "/api/v1/discovery/candidates"): "agents:read",
    ("GET", "/api/v1/discovery/candidates/<candidate_id>"): "agents:read",
    ("POST", "/api/v1/discovery/candidates/<candidate_id>/confirm"): "agents:update",
    ("POST", "/api/v1/discovery/candidates/<candidate_id>/dismiss"): "agents:update",
    ("GET", "/api/v1/auth/sso/providers"): None,
    ("GET", "/api/v1/auth/sso/login"): None,
    ("GET", "/api/v1/auth/sso/callback"): None,
    ("POST", "/api/v1/auth/sso/exchange"): None,
    ("POST", "/api/v1/audit/log"): "audit:write",
    ("GET", "/api/v1/audit"): "audit:read",
    ("GET", "/api/v1/audit/verify"): "audit:verify",
    ("GET", "/api/v1/audit/<log_id>"): "audit:read",
    ("POST", "/api/v1/hitl/request"): "hitl:request",
    ("POST", "/api/v1/hitl/approve/<approval_id>"): "hitl:decide",
    ("POST", "/api/v1/hitl/reject/<approval_id>"): "hitl:decide",
    ("GET", "/api/v1/hitl/status/<approval_id>"): "hitl:read",
    ("GET", "/api/v1/hitl/pending"): "hitl:read",
    ("GET", "/api/v1/anomalies"): "anomalies:read",
    ("GET", "/api/v1/anomalies/stats"): "anomalies:read",
    ("POST", "/api/v1/anomalies/report"): "anomalies:report",
    ("GET", "/api/v1/anomalies/detector/status"): "anomalies:read",
    ("GET", "/api/v1/anomalies/detector/metrics"): "anomalies:read",
    ("GET", "/api/v1/anomalies/detector/versions"): "anomalies:read",
    ("POST", "/api/v1/anomalies/detector/train"): "anomalies:manage",
    ("GET", "/api/v1/anomalies/detector/training/status"): "anomalies:read",
    ("GET", "/api/v1/anomalies/detector/training-status/<task_id>"): "anomalies:read",
    ("POST", "/api/v1/anomalies/detector/rollback/<version>"): "anomalies:manage",
    ("PUT", "/api/v1/anomalies/detector/threshold"): "anomalies:manage",
    ("DELETE", "/api/v1/anomalies/detector/cancel"): "anomalies:manage",
    ("GET", "/api/v1/guard/health"): None,
    ("GET", "/api/v1/"): None,
    ("GET", "/api/v1/stats"): "stats:read",
    ("GET", "/api/v1/siem/status"): "siem:manage",
    ("POST", "/api/v1/siem/test"): "siem:manage",
    ("GET", "/api/v1/integrations/<integration>/status"): None,
    ("GET", "/api/v1/audit/export"): "audit:export",
    ("GET", "/api/v1/audit/export/csv"): "audit:export",
    ("GET", "/api/v1/audit/export/json"): "audit:export",
    ("GET", "/api/v1/audit/export/manifest/<export_id>"): "audit:export",
    ("GET", "/api/v1/audit/export/public-key"): None,
    ("POST", "/api/v1/audit/export/async"): "audit:export",
    ("GET", "/api/v1/audit/export/status/<job_id>"): "audit:export",
    ("GET", "/api/v1/audit/export/download/<job_id>"): "audit:export",
    ("POST", "/api/v1/guard/validate"): "guard:use",
    ("GET", "/api/v1/guard/stats"): "guard:use",
    ("GET", "/api/v1/guard/settings"): "guard:use",
    ("PUT", "/api/v1/guard/settings"): "guard:manage",
    ("GET", "/api/v1/guard/detector/status"): "guard:use",
    ("GET", "/api/v1/guard/detector/metrics"): "guard:use",
    ("GET", "/api/v1/guard/detector/versions"): "guard:use",
    ("POST", "/api/v1/guard/detector/train"): "guard:manage",
    ("GET", "/api/v1/guard/detector/training/status"): None,
    ("POST", "/api/v1/guard/detector/rollback/<version>"): "guard:manage",
    ("DELETE", "/api/v1/guard/detector/cancel"): "guard:manage",
    ("POST", "/api/v1/guard/detector/feedback"): "guard:manage",
}
_SKIP_ENDPOINTS = {"openapi", "swagger_ui", "_docs_assets.asset", "static"}
TENANT_ROLES = [Role.DEVELOPER, Role.SECURITY_ANALYST, Role.ADMIN]


def _routes(app) -> list[tuple[str, str, RouteRule]]:
    out = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint in _SKIP_ENDPOINTS or getattr(rule, "websocket", False):
            continue
        declared = getattr(app.view_functions[rule.endpoint], ROUTE_RULE_ATTR)
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            out.append((method, rule.rule, declared))
    return out


def _label(rule: RouteRule) -> str | None:
    if rule.schemes == (Scheme.ADMIN_KEY,):
        return "admin-key"
    return None if rule.permission is None else rule.permission.value


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_every_route_has_the_expected_rule(app) -> None:
    actual = {(method, path): _label(rule) for method, path, rule in _routes(app)}
    missing = sorted(set(actual) - set(EXPECTED))
    assert not missing, f"routes without an entry in the permission matrix: {missing}"
    stale = sorted(set(EXPECTED) - set(actual))
    assert not stale, f"matrix entries for routes that no longer exist: {stale}"
    wrong = {route: (actual[route], EXPECTED[route]) for route in actual if actual[route] != EXPECTED[route]}
    assert not wrong, f"declared rule differs from the matrix (declared, expected): {wrong}"


def _value(match: re.Match[str]) -> str:
    converter, name = match[1], match[2]
    if converter in ("int", "float"):
        return "1"
    return "0000000000000000" if "key" in name else str(uuid.uuid4())


def _concrete(path: str) -> str:
    return re.sub(r"<(?:([^:>]+):)?([^>]+)>", _value, path)


@pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)
async def test_every_route_enforces_the_matrix_for_every_role(app, client, tenant) -> None:
    svc = app.extensions["agentgov"]
    users = {
        role: await svc.identity.create_user(
            tenant["id"], NewUser(email=f"{role.name.lower()}@matrix.example", role=role.value, password_hash=None)
        )
        for role in TENANT_ROLES
    }
    checked = 0
    for method, path, rule in _routes(app):
        if not rule.schemes or rule.schemes == (Scheme.ADMIN_KEY,) or Scheme.QUERY_TOKEN in rule.schemes:
            continue
        if path.startswith("/webhooks/"):
            continue  # the signature is checked before the key: covered by the webhook's own tests
        url = _concrete(path)
        response = await client.open(url, method=method, json={})
        assert response.status_code == 401, (method, path, url, "unauthenticated", response.status_code)
        for role, user in users.items():
            session = await create_session(svc, user)
            if Scheme.BEARER in rule.schemes:
                headers = {"Authorization": f"Bearer {session['access_token']}"}
            else:
                headers = {"X-API-Key": session["api_key"]}
            response = await client.open(url, method=method, json={}, headers=headers)
            allowed = rule.permission is None or has_permission(role, rule.permission)
            if allowed:
                assert response.status_code not in (401, 403), (method, path, role.value, response.status_code)
            else:
                assert response.status_code == 403, (method, path, role.value, response.status_code)
            checked += 1
    assert checked >= 3 * 20
