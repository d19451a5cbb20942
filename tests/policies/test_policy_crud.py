"""Policy documents over HTTP on SQLite and PostgreSQL: CRUD, history, soft delete, validation, access."""

from __future__ import annotations

import uuid

import pytest

from tests.policies.helpers import API, FORBID_DROP, PAYMENTS, PERMIT_ACTIVE, create_policy, key


async def test_create_get_and_list(client, tenant) -> None:
    created = await create_policy(client, tenant["api_key"], PAYMENTS, name="payments", description="money")
    assert uuid.UUID(created["id"])
    assert created["name"] == "payments" and created["description"] == "money"
    assert created["is_active"] is True and created["version"] == 1
    assert created["created_by"].startswith("key:") and created["updated_by"] == created["created_by"]
    assert [r["policy_id"] for r in created["rules"]] == ["pay-small", "pay-large"]
    large = created["rules"][1]
    assert large == {
        "position": 2,
        "effect": "permit",
        "policy_id": "pay-large",
        "ref": "pay-large",
        "reason": "Large payments need a human",
        "severity": "high",
        "requires_approval": True,
    }

    response = await client.get(f"{API}/policies/{created['id']}", headers=key(tenant["api_key"]))
    assert response.status_code == 200
    assert await response.get_json() == created

    response = await client.get(f"{API}/policies", headers=key(tenant["api_key"]))
    body = await response.get_json()
    assert body == {"items": [created], "total": 1, "limit": 50, "offset": 0}


async def test_list_filters_and_pages(client, tenant) -> None:
    api_key = tenant["api_key"]
    first = await create_policy(client, api_key, PERMIT_ACTIVE, name="one")
    second = await create_policy(client, api_key, FORBID_DROP, name="two", is_active=False)
    third = await create_policy(client, api_key, PAYMENTS, name="three")

    body = await (await client.get(f"{API}/policies?active_only=true", headers=key(api_key))).get_json()
    assert [p["id"] for p in body["items"]] == [first["id"], third["id"]] and body["total"] == 2

    body = await (await client.get(f"{API}/policies?skip=1&limit=1", headers=key(api_key))).get_json()
    assert [p["id"] for p in body["items"]] == [second["id"]]
    assert (body["total"], body["limit"], body["offset"]) == (3, 1, 1)

    for bad in ("limit=201", "limit=0", "skip=-1", "active_only=perhaps"):
        response = await client.get(f"{API}/policies?{bad}", headers=key(api_key))
        assert response.status_code == 422, bad
        assert bad.split("=")[0] in (await response.get_json())["detail"]
    # an unknown query parameter is ignored, as on every route (caches and proxies add some)
    assert (await client.get(f"{API}/policies?colour=red", headers=key(api_key))).status_code == 200


async def test_update_keeps_history(client, tenant) -> None:
    api_key = tenant["api_key"]
    created = await create_policy(client, api_key, PERMIT_ACTIVE, name="baseline")
    url = f"{API}/policies/{created['id']}"

    response = await client.put(url, json={"cedar": FORBID_DROP, "description": "now a guard"}, headers=key(api_key))
    updated = await response.get_json()
    assert response.status_code == 200, updated
    assert updated["version"] == 2 and updated["name"] == "baseline"
    assert updated["cedar"] == FORBID_DROP and updated["description"] == "now a guard"
    assert [r["policy_id"] for r in updated["rules"]] == ["no-sql-drop"]
    assert updated["created_at"] == created["created_at"] and updated["updated_at"] >= created["updated_at"]

    response = await client.put(url, json={"is_active": False}, headers=key(api_key))
    assert (await response.get_json())["version"] == 3

    # an update that changes nothing creates no version
    response = await client.put(url, json={"is_active": False, "name": "baseline"}, headers=key(api_key))
    assert (await response.get_json())["version"] == 3

    versions = await (await client.get(f"{url}/versions", headers=key(api_key))).get_json()
    assert versions["total"] == 3
    assert [(v["version"], v["change"], v["is_active"]) for v in versions["items"]] == [
        (3, "updated", False),
        (2, "updated", True),
        (1, "created", True),
    ]
    first = await (await client.get(f"{url}/versions/1", headers=key(api_key))).get_json()
    assert first["cedar"] == PERMIT_ACTIVE and first["rules"][0]["policy_id"] == "allow-active"
    assert first["changed_by"] == created["created_by"]

    page = await (await client.get(f"{url}/versions?skip=1&limit=1", headers=key(api_key))).get_json()
    assert [v["version"] for v in page["items"]] == [2] and page["total"] == 3

    response = await client.get(f"{url}/versions/9", headers=key(api_key))
    assert response.status_code == 404


async def test_update_rejects_empty_null_and_unknown_fields(client, tenant) -> None:
    created = await create_policy(client, tenant["api_key"], PERMIT_ACTIVE)
    url = f"{API}/policies/{created['id']}"
    for body, fragment in (
        ({}, "at least one of"),
        ({"cedar": None}, "cedar"),
        ({"name": None}, "name"),
        ({"is_active": None}, "is_active"),
        ({"is_active": "yes"}, "is_active"),
        ({"name": "   "}, "name"),
        ({"colour": "red"}, "colour"),
    ):
        response = await client.put(url, json=body, headers=key(tenant["api_key"]))
        assert response.status_code == 422, body
        assert fragment in (await response.get_json())["detail"], body
    # description may be cleared
    response = await client.put(url, json={"description": None}, headers=key(tenant["api_key"]))
    assert response.status_code == 200 and (await response.get_json())["description"] is None


async def test_delete_is_soft_and_keeps_history(client, tenant) -> None:
    api_key = tenant["api_key"]
    created = await create_policy(client, api_key, FORBID_DROP)
    url = f"{API}/policies/{created['id']}"

    response = await client.delete(url, headers=key(api_key))
    assert response.status_code == 204 and await response.get_data() == b""

    assert (await client.get(url, headers=key(api_key))).status_code == 404
    assert (await client.put(url, json={"name": "x"}, headers=key(api_key))).status_code == 404
    assert (await client.delete(url, headers=key(api_key))).status_code == 404
    listing = await (await client.get(f"{API}/policies", headers=key(api_key))).get_json()
    assert listing["total"] == 0

    versions = await (await client.get(f"{url}/versions", headers=key(api_key))).get_json()
    assert [(v["version"], v["change"]) for v in versions["items"]] == [(2, "deleted"), (1, "created")]
    assert versions["items"][0]["cedar"] == FORBID_DROP and versions["items"][0]["is_active"] is False

    # the deleted document's @id is free again
    await create_policy(client, api_key, FORBID_DROP, name="again")


@pytest.mark.parametrize(
    ("cedar", "fragments"),
    [
        (
            "permit (principal, action, resource) when { principal.status == };",
            ["invalid policy document 'doc'", "syntax error"],
        ),
        (
            '@id("status-is-number") permit (principal, action, resource) when { principal.status > 3 };',
            ["policy 'status-is-number' (#1)", "type error"],
        ),
        (
            PERMIT_ACTIVE + '@id("urgent") @severity("urgent") forbid (principal, action, resource);',
            ["policy 'urgent' (#2)", "invalid annotation", "@severity must be one of"],
        ),
        (
            '@id("approve-forbid") @requires_approval("true") forbid (principal, action, resource);',
            ["policy 'approve-forbid' (#1)", "only allowed on permit"],
        ),
        (
            '@id("typo") forbid (principal, action, resource) when { context has consnet && context.consnet };',
            ["policy 'typo' (#1)", "`consnet` is not declared"],
        ),
        (
            '@id("twice") permit (principal, action, resource);\n@id("twice") forbid (principal, action, resource);',
            ["policy 'twice' (#2)", "already used by policy #1"],
        ),
        ("// only a comment", ["contains no policy"]),
        (  # the Cedar library overflowed the native stack on this and the process died
            "permit (principal, action, resource) when { " + "(" * 1000 + "1" + ")" * 1000 + " == 1 };",
            ["complexity", "brackets nest more than 64 deep"],
        ),
        (  # too deep for the JSON reader: was a 500
            "permit (principal, action, resource) when { " + " || ".join(["true"] * 600) + " };",
            ["complexity", "nests more than 200 deep"],
        ),
        (  # compiled at write: 70 alternatives were stored, then failed to build and every later write was a 500
            "permit (principal, action, resource) when { "
            + " || ".join(f'action == Action::"tool.{n}"' for n in range(70))
            + " };",
            ["complexity", "cannot be compiled", "action in [...]"],
        ),
    ],
    ids=[
        "syntax",
        "type",
        "severity",
        "approval-on-forbid",
        "undeclared-context",
        "duplicate-in-doc",
        "empty",
        "nested",
        "chained",
        "uncompilable",
    ],
)
async def test_invalid_documents_are_422_naming_the_policy(client, tenant, cedar: str, fragments: list[str]) -> None:
    response = await client.post(
        f"{API}/policies", json={"name": "doc", "cedar": cedar}, headers=key(tenant["api_key"])
    )
    body = await response.get_json()
    assert response.status_code == 422, body
    for fragment in fragments:
        assert fragment in body["detail"], (fragment, body["detail"])
    assert body["errors"] and all({"field", "message", "type"} <= e.keys() for e in body["errors"])
    listing = await (await client.get(f"{API}/policies", headers=key(tenant["api_key"]))).get_json()
    assert listing["total"] == 0


async def test_invalid_update_is_422_and_keeps_the_document(client, tenant) -> None:
    created = await create_policy(client, tenant["api_key"], PERMIT_ACTIVE)
    url = f"{API}/policies/{created['id']}"
    response = await client.put(url, json={"cedar": "forbid (principal"}, headers=key(tenant["api_key"]))
    assert response.status_code == 422 and "syntax error" in (await response.get_json())["detail"]
    current = await (await client.get(url, headers=key(tenant["api_key"]))).get_json()
    assert current["version"] == 1 and current["cedar"] == PERMIT_ACTIVE


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ({"cedar": PERMIT_ACTIVE}, "name"),
        ({"name": "x"}, "cedar"),
        ({"name": "x", "cedar": ""}, "cedar"),
        ({"name": "", "cedar": PERMIT_ACTIVE}, "name"),
        ({"name": "x", "cedar": PERMIT_ACTIVE, "is_active": "true"}, "is_active"),
        ({"name": "x", "cedar": 42}, "cedar"),
        ({"name": "x" * 201, "cedar": PERMIT_ACTIVE}, "name"),
        ({"name": "x", "cedar": PERMIT_ACTIVE, "extra": 1}, "extra"),
    ],
)
async def test_bad_bodies_name_the_field(client, tenant, body: dict, fragment: str) -> None:
    response = await client.post(f"{API}/policies", json=body, headers=key(tenant["api_key"]))
    assert response.status_code == 422
    assert fragment in (await response.get_json())["detail"]


async def test_non_json_and_malformed_json(client, tenant) -> None:
    headers = key(tenant["api_key"])
    response = await client.post(f"{API}/policies", data="name=x", headers={**headers, "Content-Type": "text/plain"})
    assert response.status_code == 415
    response = await client.post(
        f"{API}/policies", data="{not json", headers={**headers, "Content-Type": "application/json"}
    )
    assert response.status_code == 400


async def test_duplicate_id_across_active_documents_is_409(client, tenant) -> None:
    api_key = tenant["api_key"]
    owner = await create_policy(client, api_key, FORBID_DROP, name="guards")
    response = await client.post(f"{API}/policies", json={"name": "copy", "cedar": FORBID_DROP}, headers=key(api_key))
    body = await response.get_json()
    assert response.status_code == 409
    assert "'no-sql-drop'" in body["detail"] and "guards" in body["detail"] and owner["id"] in body["detail"]

    # an inactive copy may exist, but not be activated while the other is active
    copy = await create_policy(client, api_key, FORBID_DROP, name="copy", is_active=False)
    url = f"{API}/policies/{copy['id']}"
    response = await client.put(url, json={"is_active": True}, headers=key(api_key))
    assert response.status_code == 409 and "no-sql-drop" in (await response.get_json())["detail"]

    # updating another document to use the id is refused too
    other = await create_policy(client, api_key, PERMIT_ACTIVE, name="other")
    response = await client.put(
        f"{API}/policies/{other['id']}", json={"cedar": PERMIT_ACTIVE + FORBID_DROP}, headers=key(api_key)
    )
    assert response.status_code == 409

    # deactivating the owner frees the id; re-saving the owner itself never conflicts with itself
    response = await client.put(f"{API}/policies/{owner['id']}", json={"description": "same ids"}, headers=key(api_key))
    assert response.status_code == 200
    await client.put(f"{API}/policies/{owner['id']}", json={"is_active": False}, headers=key(api_key))
    response = await client.put(url, json={"is_active": True}, headers=key(api_key))
    assert response.status_code == 200


@pytest.mark.parametrize("method", ["get", "put", "delete", "versions"])
async def test_malformed_and_unknown_ids(client, tenant, method: str) -> None:
    headers = key(tenant["api_key"])

    async def call(policy_id: str):
        url = f"{API}/policies/{policy_id}"
        if method == "put":
            return await client.put(url, json={"name": "x"}, headers=headers)
        if method == "versions":
            return await client.get(f"{url}/versions", headers=headers)
        return await getattr(client, method)(url, headers=headers)

    response = await call("not-a-uuid")
    assert response.status_code == 422
    assert "policy_id: not a valid UUID" in (await response.get_json())["detail"]
    response = await call(str(uuid.uuid4()))
    assert response.status_code == 404
    assert (await response.get_json())["detail"] == "Policy not found"


async def test_other_tenants_policy_is_404(client, tenant, other_tenant) -> None:
    mine = await create_policy(client, tenant["api_key"], FORBID_DROP)
    theirs = key(other_tenant["api_key"])
    url = f"{API}/policies/{mine['id']}"
    assert (await client.get(url, headers=theirs)).status_code == 404
    assert (await client.put(url, json={"name": "hijack"}, headers=theirs)).status_code == 404
    assert (await client.delete(url, headers=theirs)).status_code == 404
    assert (await client.get(f"{url}/versions", headers=theirs)).status_code == 404
    assert (await client.get(f"{url}/versions/1", headers=theirs)).status_code == 404
    listing = await (await client.get(f"{API}/policies", headers=theirs)).get_json()
    assert listing["total"] == 0
    # the same @id may be used by another tenant
    await create_policy(client, other_tenant["api_key"], FORBID_DROP)
    still = await (await client.get(url, headers=key(tenant["api_key"]))).get_json()
    assert still["version"] == 1 and still["name"] == "doc"


@pytest.mark.parametrize("role", ["Developer", "Security Analyst"])
async def test_only_admins_write_policies(client, tenant, role_keys, role: str) -> None:
    existing = await create_policy(client, role_keys["Admin"], FORBID_DROP)
    headers = key(role_keys[role])
    url = f"{API}/policies/{existing['id']}"
    attempts = [
        await client.post(f"{API}/policies", json={"name": "x", "cedar": PERMIT_ACTIVE}, headers=headers),
        await client.put(url, json={"name": "x"}, headers=headers),
        await client.delete(url, headers=headers),
        await client.put(f"{API}/policies/settings", json={"default_decision": "allow"}, headers=headers),
    ]
    for response in attempts:
        assert response.status_code == 403
        detail = (await response.get_json())["detail"]
        assert "policies:write" in detail and "Admin" in detail
    unchanged = await (await client.get(url, headers=headers)).get_json()
    assert unchanged["version"] == 1 and unchanged["name"] == "doc"


@pytest.mark.parametrize("role", ["Developer", "Security Analyst", "Admin"])
async def test_every_role_reads(client, tenant, role_keys, role: str) -> None:
    existing = await create_policy(client, tenant["api_key"], FORBID_DROP)
    headers = key(role_keys[role])
    for path in (
        "/policies",
        f"/policies/{existing['id']}",
        f"/policies/{existing['id']}/versions",
        f"/policies/{existing['id']}/versions/1",
        "/policies/templates",
        "/policies/settings",
    ):
        response = await client.get(API + path, headers=headers)
        assert response.status_code == 200, (role, path)


async def test_credentials_are_required(client, tenant) -> None:
    for method, path in (
        ("get", "/policies"),
        ("post", "/policies"),
        ("get", "/policies/templates"),
        ("post", "/policies/check"),
        ("get", "/policies/settings"),
        ("get", f"/policies/{uuid.uuid4()}"),
    ):
        response = await getattr(client, method)(API + path)
        assert response.status_code == 401, path
        response = await getattr(client, method)(API + path, headers={"X-API-Key": "agk_wrong"})
        assert response.status_code == 401, path


async def test_default_decision_setting(app, client, tenant) -> None:
    headers = key(tenant["api_key"])
    url = f"{API}/policies/settings"
    assert await (await client.get(url, headers=headers)).get_json() == {"default_decision": "deny"}

    svc = app.extensions["agentgov"]
    await svc.identity.update_tenant_settings(tenant["id"], {"timezone": "Europe/Paris"})
    response = await client.put(url, json={"default_decision": "allow"}, headers=headers)
    assert response.status_code == 200 and await response.get_json() == {"default_decision": "allow"}
    assert await (await client.get(url, headers=headers)).get_json() == {"default_decision": "allow"}
    stored = await svc.identity.get_tenant(tenant["id"])
    assert stored.settings == {"timezone": "Europe/Paris", "policy_default_decision": "allow"}

    for bad in ({"default_decision": "maybe"}, {}, {"default_decision": True}):
        response = await client.put(url, json=bad, headers=headers)
        assert response.status_code == 422
        assert "default_decision" in (await response.get_json())["detail"]


async def test_templates_endpoint(client, tenant) -> None:
    body = await (await client.get(f"{API}/policies/templates", headers=key(tenant["api_key"]))).get_json()
    assert body["total"] >= 8 and len(body["items"]) == body["total"] and body["offset"] == 0
    for template in body["items"]:
        assert {"id", "name", "description", "parameters", "cedar", "examples"} <= template.keys()
        assert template["description"] and template["parameters"] and template["examples"]
        example = template["examples"][0]
        assert {"agent", "action", "resource", "context"} <= example["request"].keys()
        assert {"allowed", "required_approval", "severity"} <= example["decision"].keys()
    page = await (
        await client.get(f"{API}/policies/templates?skip=2&limit=3", headers=key(tenant["api_key"]))
    ).get_json()
    assert [t["id"] for t in page["items"]] == [t["id"] for t in body["items"][2:5]]
    response = await client.get(f"{API}/policies/templates?limit=500", headers=key(tenant["api_key"]))
    assert response.status_code == 422


async def test_openapi_documents_the_policy_routes(client) -> None:
    spec = await (await client.get("/openapi.json")).get_json()
    paths = spec["paths"]
    for path in (
        "/api/v1/policies",
        "/api/v1/policies/check",
        "/api/v1/policies/templates",
        "/api/v1/policies/settings",
        "/api/v1/policies/{policy_id}",
        "/api/v1/policies/{policy_id}/versions",
    ):
        assert path in paths, path
    assert "requestBody" in paths["/api/v1/policies/check"]["post"]
