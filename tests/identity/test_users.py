"""User management: tenant scoping, roles, last Admin, blocking and deletion."""

from __future__ import annotations

import uuid

import pytest

from tests.identity.conftest import PASSWORD, bearer, create_user, login
from tests.support.app import ADMIN_KEY


async def test_create_list_get_update_delete(client, admin_session) -> None:
    headers = bearer(admin_session)
    dev = await create_user(client, admin_session, "Dev@Acme.example", "developer")
    assert dev["role"] == "Developer" and dev["email"] == "Dev@Acme.example"
    await create_user(client, admin_session, "analyst@acme.example", "Security Analyst")

    listing = await (await client.get("/api/v1/users?limit=2", headers=headers)).get_json()
    assert listing["total"] == 3 and len(listing["items"]) == 2 and listing["limit"] == 2
    analysts = await (await client.get("/api/v1/users?role=security_analyst", headers=headers)).get_json()
    assert [u["email"] for u in analysts["items"]] == ["analyst@acme.example"]
    found = await (await client.get("/api/v1/users?search=DEV", headers=headers)).get_json()
    assert [u["id"] for u in found["items"]] == [dev["id"]]

    response = await client.put(f"/api/v1/users/{dev['id']}", json={"full_name": "Dee Veloper"}, headers=headers)
    assert response.status_code == 200 and (await response.get_json())["full_name"] == "Dee Veloper"
    assert (await client.get(f"/api/v1/users/{dev['id']}", headers=headers)).status_code == 200
    assert (await client.delete(f"/api/v1/users/{dev['id']}", headers=headers)).status_code == 204
    assert (await client.get(f"/api/v1/users/{dev['id']}", headers=headers)).status_code == 404


async def test_list_limit_is_capped(client, admin_session) -> None:
    response = await client.get("/api/v1/users?limit=201", headers=bearer(admin_session))
    assert response.status_code == 422 and "limit" in (await response.get_json())["detail"]
    response = await client.get("/api/v1/users?is_active=maybe", headers=bearer(admin_session))
    assert response.status_code == 422 and "is_active" in (await response.get_json())["detail"]


async def test_emails_are_unique_per_tenant_case_insensitively(client, admin_session) -> None:
    await create_user(client, admin_session, "dup@acme.example")
    response = await client.post(
        "/api/v1/users", json={"email": "DUP@acme.example", "password": PASSWORD}, headers=bearer(admin_session)
    )
    assert response.status_code == 409


@pytest.mark.parametrize(
    ("body", "status", "needle"),
    [
        ({"email": "x@acme.example", "password": "short"}, 422, "password"),
        ({"email": "x@acme.example", "password": PASSWORD, "role": "Super Admin"}, 403, "Super Admin"),
        ({"email": "x@acme.example", "password": PASSWORD, "role": "Overlord"}, 422, "role"),
        ({"email": "not an email", "password": PASSWORD}, 422, "email"),
    ],
)
async def test_bad_user_bodies(client, admin_session, body: dict, status: int, needle: str) -> None:
    response = await client.post("/api/v1/users", json=body, headers=bearer(admin_session))
    assert response.status_code == status and needle in (await response.get_json())["detail"]


async def test_admin_cannot_reach_another_tenants_users(client, admin_session) -> None:
    response = await client.post(
        "/api/v1/tenants",
        json={"name": "Beta", "admin_email": "boss@beta.example", "admin_password": PASSWORD},
        headers={"X-Admin-Key": ADMIN_KEY},
    )
    beta_admin = (await response.get_json())["admin_user_id"]
    headers = bearer(admin_session)
    for method, path, body in [
        ("get", f"/api/v1/users/{beta_admin}", None),
        ("put", f"/api/v1/users/{beta_admin}", {"full_name": "Taken Over"}),
        ("post", f"/api/v1/users/{beta_admin}/block", None),
        ("put", f"/api/v1/users/{beta_admin}/role", {"role": "Developer"}),
        ("post", f"/api/v1/users/{beta_admin}/reset-password", {"new_password": PASSWORD}),
        ("delete", f"/api/v1/users/{beta_admin}", None),
    ]:
        response = await getattr(client, method)(path, json=body, headers=headers)
        assert response.status_code == 404, (method, path)
    listing = await (await client.get("/api/v1/users", headers=headers)).get_json()
    assert all(u["email"] != "boss@beta.example" for u in listing["items"])
    response = await client.get(f"/api/v1/users/{uuid.uuid4()}", headers=headers)
    assert response.status_code == 404
    response = await client.get("/api/v1/users/not-a-uuid", headers=headers)
    assert response.status_code == 422


async def test_last_active_admin_is_protected(client, acme, admin_session) -> None:
    admin_id = acme["admin_user_id"]
    headers = bearer(admin_session)
    for method, path, body in [
        ("put", f"/api/v1/users/{admin_id}/role", {"role": "Developer"}),
        ("post", f"/api/v1/users/{admin_id}/block", None),
        ("delete", f"/api/v1/users/{admin_id}", None),
    ]:
        response = await getattr(client, method)(path, json=body, headers=headers)
        assert response.status_code == 409 and "last active Admin" in (await response.get_json())["detail"]
    second = await create_user(client, admin_session, "second@acme.example", "Admin")
    response = await client.put(f"/api/v1/users/{admin_id}/role", json={"role": "Developer"}, headers=headers)
    assert response.status_code == 200 and (await response.get_json())["role"] == "Developer"
    second_session = await login(client, "second@acme.example")
    response = await client.post(f"/api/v1/users/{second['id']}/block", headers=bearer(second_session))
    assert response.status_code == 409


async def test_blocking_stops_login_tokens_and_keys_at_once(client, admin_session) -> None:
    dev = await create_user(client, admin_session, "blocked@acme.example")
    session = await login(client, "blocked@acme.example")
    key = await client.post("/api/v1/api-keys", json={"name": "ci"}, headers=bearer(session))
    raw_key = (await key.get_json())["api_key"]
    assert (await client.get("/api/v1/status", headers={"X-API-Key": raw_key})).status_code == 200

    response = await client.post(f"/api/v1/users/{dev['id']}/block", headers=bearer(admin_session))
    assert response.status_code == 200 and (await response.get_json())["is_active"] is False
    assert (await client.get("/api/v1/users/me", headers=bearer(session))).status_code == 401
    assert (await client.get("/api/v1/status", headers={"X-API-Key": raw_key})).status_code == 401
    assert (await client.get("/api/v1/status", headers={"X-API-Key": session["api_key"]})).status_code == 401
    response = await client.post("/api/v1/auth/login", json={"email": "blocked@acme.example", "password": PASSWORD})
    assert response.status_code == 401 and (await response.get_json())["detail"] == "Invalid email or password"

    # Unblocking restores login, not the keys the block ended: they stay revoked; the user makes new ones.
    assert (await client.post(f"/api/v1/users/{dev['id']}/unblock", headers=bearer(admin_session))).status_code == 200
    assert (await client.get("/api/v1/status", headers={"X-API-Key": raw_key})).status_code == 401
    assert (await client.get("/api/v1/status", headers={"X-API-Key": session["api_key"]})).status_code == 401
    assert (await client.get("/api/v1/users/me", headers=bearer(session))).status_code == 401
    listed = await client.get("/api/v1/api-keys", headers=bearer(await login(client, "blocked@acme.example")))
    assert all(k["revoked_at"] for k in (await listed.get_json())["items"] if k["name"] == "ci")
    fresh = await login(client, "blocked@acme.example")
    assert (await client.get("/api/v1/status", headers={"X-API-Key": fresh["api_key"]})).status_code == 200
    new_key = await client.post("/api/v1/api-keys", json={"name": "ci-2"}, headers=bearer(fresh))
    raw_new = (await new_key.get_json())["api_key"]
    assert (await client.get("/api/v1/status", headers={"X-API-Key": raw_new})).status_code == 200


async def test_demotion_caps_the_users_keys(client, admin_session) -> None:
    admin2 = await create_user(client, admin_session, "admin2@acme.example", "Admin")
    session = await login(client, "admin2@acme.example")
    raw = (await (await client.post("/api/v1/api-keys", json={"name": "k"}, headers=bearer(session))).get_json())[
        "api_key"
    ]
    assert (await client.get("/api/v1/users", headers={"X-API-Key": raw})).status_code == 200
    response = await client.put(
        f"/api/v1/users/{admin2['id']}/role", json={"role": "Developer"}, headers=bearer(admin_session)
    )
    assert response.status_code == 200
    assert (await client.get("/api/v1/users", headers={"X-API-Key": raw})).status_code == 403


async def _keys_of(client, session: dict) -> list[str]:
    """The session's key and a user key made with it."""
    made = await client.post("/api/v1/api-keys", json={"name": "own"}, headers=bearer(session))
    assert made.status_code == 201
    return [session["api_key"], (await made.get_json())["api_key"]]


async def _work(client, keys: list[str]) -> list[int]:
    return [(await client.get("/api/v1/agents", headers={"X-API-Key": raw})).status_code for raw in keys]


async def test_password_reset_and_change(client, admin_session) -> None:
    dev = await create_user(client, admin_session, "pw@acme.example")
    before = await _keys_of(client, await login(client, "pw@acme.example"))
    assert await _work(client, before) == [200, 200]
    response = await client.post(
        f"/api/v1/users/{dev['id']}/reset-password",
        json={"new_password": "a brand new passphrase"},
        headers=bearer(admin_session),
    )
    assert response.status_code == 204
    assert await _work(client, before) == [401, 401]  # a reset ends the session key and the user's own keys
    session = await login(client, "pw@acme.example", "a brand new passphrase")
    keys = await _keys_of(client, session)
    response = await client.post(
        "/api/v1/users/me/change-password",
        json={"current_password": "wrong wrong wrong", "new_password": "another passphrase!"},
        headers=bearer(session),
    )
    assert response.status_code == 403
    response = await client.post(
        "/api/v1/users/me/change-password",
        json={"current_password": "a brand new passphrase", "new_password": "tiny"},
        headers=bearer(session),
    )
    assert response.status_code == 422
    response = await client.post(
        "/api/v1/users/me/change-password",
        json={"current_password": "a brand new passphrase", "new_password": "another passphrase!"},
        headers=bearer(session),
    )
    assert response.status_code == 204
    assert (await client.get("/api/v1/users/me", headers=bearer(session))).status_code == 401
    assert await _work(client, keys) == [401, 401]  # so does a change
    after = await _keys_of(client, await login(client, "pw@acme.example", "another passphrase!"))
    assert await _work(client, after) == [200, 200]


async def test_own_profile(client, admin_session) -> None:
    await create_user(client, admin_session, "me@acme.example")
    session = await login(client, "me@acme.example")
    response = await client.put("/api/v1/users/me", json={"full_name": "Me Myself"}, headers=bearer(session))
    assert response.status_code == 200
    me = await (await client.get("/api/v1/users/me", headers=bearer(session))).get_json()
    assert me["full_name"] == "Me Myself" and me["role"] == "Developer"
    response = await client.put("/api/v1/users/me", json={"email": "admin@acme.example"}, headers=bearer(session))
    assert response.status_code == 409


async def test_tenant_key_manages_users_but_has_no_profile(client, acme) -> None:
    headers = {"X-API-Key": acme["api_key"]}
    response = await client.post(
        "/api/v1/users", json={"email": "via-key@acme.example", "password": PASSWORD}, headers=headers
    )
    assert response.status_code == 201
    assert (await client.get("/api/v1/users/me", headers=headers)).status_code == 403
    assert (await client.get("/api/v1/api-keys", headers=headers)).status_code == 403


@pytest.mark.parametrize("role", ["Developer", "Security Analyst"])
async def test_non_admins_cannot_manage_users(client, admin_session, role: str) -> None:
    await create_user(client, admin_session, "someone@acme.example", role)
    session = await login(client, "someone@acme.example")
    for method, path in [("get", "/api/v1/users"), ("post", "/api/v1/users")]:
        response = await getattr(client, method)(
            path, json={"email": "z@acme.example", "password": PASSWORD}, headers=bearer(session)
        )
        assert response.status_code == 403
