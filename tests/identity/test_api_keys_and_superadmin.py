"""A user's API keys; the Super Admin and the tenant list."""

from __future__ import annotations

import dataclasses

from agentgov.http.app import create_app
from agentgov.server import bootstrap_superadmin
from tests.identity.conftest import PASSWORD, bearer, create_user, login
from tests.support.app import ADMIN_KEY, running_services, settings_for


async def test_key_lifecycle(client, admin_session) -> None:
    dev = await create_user(client, admin_session, "keys@acme.example")
    session = await login(client, "keys@acme.example")
    headers = bearer(session)
    created = await client.post(
        "/api/v1/api-keys", json={"name": "deploy bot", "expires_at": "2999-01-01T00:00:00Z"}, headers=headers
    )
    body = await created.get_json()
    assert created.status_code == 201 and body["api_key"].startswith(body["prefix"])
    assert body["role"] == "Developer" and body["expires_at"].startswith("2999-01-01")
    assert (await client.get("/api/v1/status", headers={"X-API-Key": body["api_key"]})).status_code == 200

    listing = await (await client.get("/api/v1/api-keys", headers=headers)).get_json()
    assert listing["total"] == 1
    item = listing["items"][0]
    assert item["id"] == body["id"] and "api_key" not in item and "secret_hash" not in item

    # another user cannot see or revoke it
    admin_keys = await (await client.get("/api/v1/api-keys", headers=bearer(admin_session))).get_json()
    assert admin_keys["total"] == 0
    response = await client.delete(f"/api/v1/api-keys/{body['id']}", headers=bearer(admin_session))
    assert response.status_code == 404
    assert (await client.delete("/api/v1/api-keys/short", headers=headers)).status_code == 422

    assert (await client.delete(f"/api/v1/api-keys/{body['prefix']}", headers=headers)).status_code == 204
    assert (await client.get("/api/v1/status", headers={"X-API-Key": body["api_key"]})).status_code == 401
    assert dev["id"]


async def test_key_role_cannot_exceed_the_callers(client, admin_session) -> None:
    await create_user(client, admin_session, "analyst@acme.example", "Security Analyst")
    session = await login(client, "analyst@acme.example")
    response = await client.post("/api/v1/api-keys", json={"name": "x", "role": "Admin"}, headers=bearer(session))
    assert response.status_code == 403
    response = await client.post("/api/v1/api-keys", json={"name": "x", "role": "Developer"}, headers=bearer(session))
    assert response.status_code == 201 and (await response.get_json())["role"] == "Developer"
    response = await client.post(
        "/api/v1/api-keys", json={"name": "x", "expires_at": "2001-01-01T00:00:00Z"}, headers=bearer(session)
    )
    assert response.status_code == 422 and "future" in (await response.get_json())["detail"]


async def test_superadmin_bootstrap_login_and_tenant_list(sqlite_url: str) -> None:
    settings = dataclasses.replace(
        settings_for(sqlite_url), superadmin_email="root@platform.example", superadmin_password=PASSWORD
    )
    async with running_services(settings) as svc:
        await bootstrap_superadmin(svc)
        await bootstrap_superadmin(svc)  # idempotent
        client = create_app(svc).test_client()
        created = await (
            await client.post(
                "/api/v1/tenants",
                json={"name": "Acme", "admin_email": "admin@acme.example", "admin_password": PASSWORD},
                headers={"X-Admin-Key": ADMIN_KEY},
            )
        ).get_json()
        root = await login(client, "root@platform.example")
        assert root["user"]["role"] == "Super Admin" and root["user"]["tenant_id"] is None
        tenants = await (await client.get("/api/v1/tenants", headers=bearer(root))).get_json()
        assert [t["name"] for t in tenants["items"]] == ["Acme"] and tenants["total"] == 1

        admin = await login(client, "admin@acme.example")
        assert (await client.get("/api/v1/tenants", headers=bearer(admin))).status_code == 403
        assert (await client.get("/api/v1/tenants", headers={"X-API-Key": created["api_key"]})).status_code == 403
        assert (await client.get("/api/v1/tenants")).status_code == 401

        # a Super Admin manages any tenant's users, naming the tenant
        response = await client.get("/api/v1/users", headers=bearer(root))
        assert response.status_code == 422
        listing = await (await client.get(f"/api/v1/users?tenant_id={created['id']}", headers=bearer(root))).get_json()
        assert [u["email"] for u in listing["items"]] == ["admin@acme.example"]
        response = await client.post(
            "/api/v1/users",
            json={"email": "new@acme.example", "password": PASSWORD, "tenant_id": created["id"]},
            headers=bearer(root),
        )
        assert response.status_code == 201
        # a tenant route needs a tenant-bound principal
        assert (await client.get("/api/v1/status", headers={"X-API-Key": root["api_key"]})).status_code == 403
