"""Password login, sessions, logout and throttling."""

from __future__ import annotations

import dataclasses

import jwt
import pytest

from agentgov.http.app import create_app
from agentgov.security import throttle
from agentgov.security.tokens import TokenService, key_id, signing_key
from tests.identity.conftest import PASSWORD, bearer, create_user, login
from tests.support.app import ADMIN_KEY, running_services, settings_for


async def test_login_returns_token_session_key_and_profile(client, acme) -> None:
    session = await login(client, "ADMIN@acme.example")
    assert set(session) >= {"access_token", "expires_in", "user", "api_key"}
    assert session["user"]["email"] == "admin@acme.example" and session["user"]["role"] == "Admin"
    assert "password_hash" not in session["user"]
    header = jwt.get_unverified_header(session["access_token"])
    claims = jwt.decode(session["access_token"], options={"verify_signature": False})
    assert header["kid"] and {"exp", "iat", "jti", "sub", "tid", "role"} <= set(claims)
    assert claims["tid"] == acme["id"] and claims["role"] == "Admin"

    me = await client.get("/api/v1/auth/me", headers=bearer(session))
    body = await me.get_json()
    assert me.status_code == 200 and body["email"] == "admin@acme.example" and "users:manage" in body["permissions"]
    status = await client.get("/api/v1/status", headers={"X-API-Key": session["api_key"]})
    assert status.status_code == 200


@pytest.mark.parametrize(
    ("email", "password"), [("admin@acme.example", "wrong password here"), ("nobody@acme.example", PASSWORD)]
)
async def test_failed_login_never_says_whether_the_email_exists(client, acme, email: str, password: str) -> None:
    response = await client.post("/api/v1/auth/login", json={"email": email, "password": password})
    assert response.status_code == 401
    assert (await response.get_json())["detail"] == "Invalid email or password"


async def test_login_body_is_validated(client) -> None:
    response = await client.post("/api/v1/auth/login", json={"email": "a@b.example"})
    assert response.status_code == 422 and "password" in (await response.get_json())["detail"]


async def test_failed_logins_are_throttled_per_account(client, acme) -> None:
    for _ in range(throttle.ACCOUNT_LIMIT):
        response = await client.post("/api/v1/auth/login", json={"email": "admin@acme.example", "password": "nope"})
        assert response.status_code == 401
    response = await client.post("/api/v1/auth/login", json={"email": "admin@acme.example", "password": PASSWORD})
    assert response.status_code == 429
    assert 0 < int(response.headers["Retry-After"]) <= throttle.WINDOW
    # unknown accounts are throttled the same way: no difference to observe
    for _ in range(throttle.ACCOUNT_LIMIT):
        await client.post("/api/v1/auth/login", json={"email": "ghost@acme.example", "password": "nope"})
    response = await client.post("/api/v1/auth/login", json={"email": "ghost@acme.example", "password": "x"})
    assert response.status_code == 429


async def test_failed_logins_are_throttled_per_address(client, acme) -> None:
    for i in range(throttle.ADDRESS_LIMIT):
        await client.post("/api/v1/auth/login", json={"email": f"user{i}@acme.example", "password": "nope"})
    response = await client.post("/api/v1/auth/login", json={"email": "admin@acme.example", "password": PASSWORD})
    assert response.status_code == 429


async def test_logout_ends_token_and_session_key(client, admin_session) -> None:
    response = await client.post("/api/v1/auth/logout", headers=bearer(admin_session))
    assert response.status_code == 204
    response = await client.get("/api/v1/auth/me", headers=bearer(admin_session))
    assert response.status_code == 401 and "revoked" in (await response.get_json())["detail"]
    response = await client.get("/api/v1/status", headers={"X-API-Key": admin_session["api_key"]})
    assert response.status_code == 401


async def test_logout_needs_a_token(client, acme) -> None:
    response = await client.post("/api/v1/auth/logout", headers={"X-API-Key": acme["api_key"]})
    assert response.status_code == 401
    response = await client.post("/api/v1/auth/logout")
    assert response.status_code == 401


@pytest.mark.parametrize(
    "header",
    ["Bearer not-a-jwt", "Basic abc", "Bearer ", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.c2lnbmF0dXJl"],
)
async def test_bad_bearer_tokens_are_401(client, header: str) -> None:
    response = await client.get("/api/v1/auth/me", headers={"Authorization": header})
    assert response.status_code == 401


async def test_expired_and_foreign_tokens_are_refused(app, client, admin_session) -> None:
    svc = app.extensions["agentgov"]
    claims = jwt.decode(admin_session["access_token"], options={"verify_signature": False})
    expired = jwt.encode(
        {**claims, "exp": claims["iat"] - 10},
        signing_key(svc.settings.jwt_secret),
        algorithm="HS256",
        headers={"kid": key_id(svc.settings.jwt_secret)},
    )
    response = await client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {expired}"})
    assert response.status_code == 401 and "expired" in (await response.get_json())["detail"]
    forged = jwt.encode(claims, signing_key("another-secret-entirely"), algorithm="HS256", headers={"kid": key_id("x")})
    response = await client.get("/api/v1/auth/me", headers={"Authorization": f"Bearer {forged}"})
    assert response.status_code == 401 and "unknown key" in (await response.get_json())["detail"]


async def test_signing_key_rotation_keeps_old_tokens_valid(sqlite_url: str) -> None:
    old = settings_for(sqlite_url)
    rotated = dataclasses.replace(
        old, jwt_secret="a-brand-new-secret-0123456789", jwt_previous_secrets=(old.jwt_secret,)
    )
    async with running_services(old) as svc:
        tokens = TokenService(old, svc.cache)
        token = tokens.issue(user_id="u1", tenant_id="t1", role="Admin", session_key_id=None)
        assert (await TokenService(rotated, svc.cache).verify(token.token))["sub"] == "u1"
        fresh = TokenService(rotated, svc.cache).issue(user_id="u1", tenant_id="t1", role="Admin", session_key_id=None)
        assert jwt.get_unverified_header(fresh.token)["kid"] == key_id(rotated.jwt_secret)


async def test_email_in_two_tenants_needs_the_tenant(client, acme) -> None:
    response = await client.post(
        "/api/v1/tenants",
        json={"name": "Beta", "admin_email": "admin@acme.example", "admin_password": PASSWORD},
        headers={"X-Admin-Key": ADMIN_KEY},
    )
    beta = await response.get_json()
    response = await client.post("/api/v1/auth/login", json={"email": "admin@acme.example", "password": PASSWORD})
    assert response.status_code == 422 and "tenant" in (await response.get_json())["detail"]
    by_name = await login(client, "admin@acme.example", tenant="beta")
    assert by_name["user"]["tenant_id"] == beta["id"]
    by_id = await login(client, "admin@acme.example", tenant=acme["id"])
    assert by_id["user"]["tenant_id"] == acme["id"]


@pytest.mark.redis
async def test_logout_is_seen_by_every_process_sharing_redis(tmp_path, redis_settings) -> None:
    url, prefix = redis_settings
    settings = dataclasses.replace(
        settings_for(f"sqlite:///{tmp_path / 'shared.db'}", redis_url=url), redis_prefix=prefix
    )
    async with running_services(settings) as one, running_services(settings) as two:
        first, second = create_app(one).test_client(), create_app(two).test_client()
        response = await first.post(
            "/api/v1/tenants",
            json={"name": "Shared", "admin_email": "a@shared.example", "admin_password": PASSWORD},
            headers={"X-Admin-Key": ADMIN_KEY},
        )
        assert response.status_code == 201
        session = await login(first, "a@shared.example")
        assert (await second.get("/api/v1/auth/me", headers=bearer(session))).status_code == 200
        assert (await second.get("/api/v1/status", headers={"X-API-Key": session["api_key"]})).status_code == 200
        assert (await first.post("/api/v1/auth/logout", headers=bearer(session))).status_code == 204
        assert (await second.get("/api/v1/auth/me", headers=bearer(session))).status_code == 401
        assert (await second.get("/api/v1/status", headers={"X-API-Key": session["api_key"]})).status_code == 401


async def test_session_key_role_follows_the_user(client, admin_session) -> None:
    dev = await create_user(client, admin_session, "dev@acme.example", "Developer")
    session = await login(client, "dev@acme.example")
    assert session["user"]["id"] == dev["id"]
    response = await client.get("/api/v1/users", headers={"X-API-Key": session["api_key"]})
    assert response.status_code == 403
