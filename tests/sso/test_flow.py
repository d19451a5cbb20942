"""The whole single sign-on flow against the real loopback OpenID provider, through the real app."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from agentgov.http.auth import resolve_access_token
from agentgov.security import sso as sso_module
from agentgov.security.sessions import public_user
from tests.sso.conftest import (
    ADMIN_EMAIL,
    CALLBACK,
    CLIENTS,
    FRONTEND,
    LOCAL_CALLBACK,
    OFFLINE_ISSUER,
    PROVIDERS,
    Harness,
    harness,
    query_of,
    sso_settings,
)
from tests.support.oidc import drive_login


async def test_providers_lists_all_four_with_their_state(sso_offline: Harness) -> None:
    response = await sso_offline.client.get("/api/v1/auth/sso/providers")
    assert response.status_code == 200
    assert await response.get_json() == {
        "providers": [
            {"id": "google", "name": "Google", "enabled": True},
            {"id": "microsoft", "name": "Microsoft Entra ID", "enabled": True},
            {"id": "okta", "name": "Okta", "enabled": True},
            {"id": "oidc", "name": "Keycloak", "enabled": True},
        ]
    }


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_full_flow_signs_in_the_tenant_user(sso: Harness, provider: str) -> None:
    tenant = await sso.create_tenant("Acme")
    providers = await (await sso.client.get("/api/v1/auth/sso/providers")).get_json()
    assert {p["id"]: p["enabled"] for p in providers["providers"]}[provider] is True

    # 1. login: a redirect to the provider with state, nonce and PKCE S256, and a browser-binding cookie.
    response = await sso.client.get("/api/v1/auth/sso/login", query_string={"provider": provider})
    assert response.status_code == 302
    assert response.headers["Cache-Control"] == "no-store"
    authorize_url = response.headers["Location"]
    assert authorize_url.startswith(sso.issuer + "/")
    params = query_of(authorize_url)
    assert params["response_type"] == "code"
    assert params["client_id"] == CLIENTS[provider]["client_id"]
    assert params["redirect_uri"] == CALLBACK
    assert set(params["scope"].split()) == {"openid", "email", "profile"}
    assert params["code_challenge_method"] == "S256"
    assert len(params["code_challenge"]) == 43
    assert len(params["state"]) >= 32 and len(params["nonce"]) >= 32
    cookie = response.headers["Set-Cookie"]
    assert cookie.startswith(f"{sso_module.BINDING_COOKIE}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/api/v1/auth/sso" in cookie

    # 2. the provider's login and consent screens, then its redirect back to our callback.
    back = await _drive(sso, authorize_url, ADMIN_EMAIL)
    assert query_of(back)["state"] == params["state"]

    # 3. callback: a redirect to the frontend's default page with a one-time code.
    response = await sso.callback(back)
    assert response.status_code == 302, await response.get_data(as_text=True)
    location = response.headers["Location"]
    assert location.startswith(f"{FRONTEND}/dashboard?sso_code=")
    code = query_of(location)["sso_code"]
    assert await sso.services.cache.ttl(sso_module.code_key(code)) == pytest.approx(60.0)

    # 4. exchange: the login response, exactly as a password login.
    response = await sso.exchange(code)
    assert response.status_code == 200, await response.get_data(as_text=True)
    body = await response.get_json()
    assert set(body) == {"access_token", "token_type", "expires_in", "user", "api_key"}
    assert body["token_type"] == "bearer" and body["expires_in"] == 3600
    user = await sso.services.identity.get_user(tenant["admin_user_id"])
    assert user is not None and user.last_login_at is not None
    assert body["user"] == public_user(user)
    assert body["user"]["email"] == ADMIN_EMAIL and body["user"]["tenant_id"] == tenant["id"]

    # The access token and the session key both work.
    claims = await sso.services.tokens.verify(body["access_token"])
    assert claims["sub"] == user.id and claims["tid"] == tenant["id"] and claims["role"] == "Admin"
    who = await resolve_access_token(sso.services, body["access_token"])
    assert who.user_id == user.id and who.tenant_id == tenant["id"]
    status = await sso.client.get("/api/v1/status", headers={"X-API-Key": body["api_key"]})
    assert status.status_code == 200
    assert (await status.get_json())["tenant_id"] == tenant["id"]


async def _drive(sso: Harness, authorize_url: str, login: str) -> str:
    return await drive_login(sso.browser, authorize_url, login)


async def test_redirect_keeps_its_query_and_fragment(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    response = await sso_lite.sign_in(ADMIN_EMAIL, redirect="/agents?tab=risk#top")
    location = response.headers["Location"]
    parts = urlsplit(location)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == ("http", "app.test", "/agents", "top")
    assert query_of(location)["tab"] == "risk" and query_of(location)["sso_code"]


async def test_without_base_urls_the_callback_is_same_origin(idp, browser, sqlite_url) -> None:
    settings = sso_settings(idp.issuer, frontend_url="")
    async with harness(idp.issuer, browser, sqlite_url, public_base_url="", sso=settings) as h:
        await h.create_tenant("Acme")
        authorize_url = await h.start()
        assert query_of(authorize_url)["redirect_uri"] == LOCAL_CALLBACK
        response = await h.callback(await _drive(h, authorize_url, ADMIN_EMAIL))
        assert response.status_code == 302
        assert response.headers["Location"].startswith("/dashboard?sso_code=")


async def test_a_second_sign_in_reuses_the_browser_binding(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    first = await sso_lite.start()
    second = await sso_lite.start()  # e.g. another tab: the first sign-in must still complete
    for authorize_url in (first, second):
        response = await sso_lite.callback(await _drive(sso_lite, authorize_url, ADMIN_EMAIL))
        assert response.status_code == 302, await response.get_data(as_text=True)


# --------------------------------------------------------------------------- login refusals


@pytest.mark.parametrize(
    "redirect",
    [
        "https://evil.example/",
        "//evil.example/path",
        "/\\evil.example",
        "\\\\evil.example",
        "dashboard",
        "javascript:alert(1)",
        "/ok\r\nSet-Cookie: x=1",
        "/with space",
        "/" + "a" * 2048,
    ],
)
async def test_foreign_or_malformed_redirect_is_refused(sso_offline: Harness, redirect: str) -> None:
    response = await sso_offline.client.get(
        "/api/v1/auth/sso/login", query_string={"provider": "oidc", "redirect": redirect}
    )
    assert response.status_code == 422
    body = await response.get_json()
    assert body["errors"][0]["field"] == "redirect"
    assert "Location" not in response.headers


async def test_unknown_or_missing_provider_is_422(sso_offline: Harness) -> None:
    for params in ({"provider": "github"}, {}, {"provider": ["oidc", "okta"]}):
        response = await sso_offline.client.get("/api/v1/auth/sso/login", query_string=params)
        assert response.status_code == 422, params
        body = await response.get_json()
        assert body["errors"][0]["field"] == "provider"


async def test_disabled_provider_is_400_naming_what_is_missing(browser, sqlite_url) -> None:
    settings = sso_settings(OFFLINE_ISSUER, google_client_secret="", okta_issuer="", okta_discovery_url="")
    async with harness(OFFLINE_ISSUER, browser, sqlite_url, sso=settings) as h:
        listed = await (await h.client.get("/api/v1/auth/sso/providers")).get_json()
        assert {p["id"]: p["enabled"] for p in listed["providers"]} == {
            "google": False,
            "microsoft": True,
            "okta": False,
            "oidc": True,
        }
        response = await h.client.get("/api/v1/auth/sso/login", query_string={"provider": "google"})
        assert response.status_code == 400
        assert (await response.get_json())["detail"] == (
            "Single sign-on with Google is not enabled on this server (missing: SSO_GOOGLE_CLIENT_SECRET)"
        )
        response = await h.client.get("/api/v1/auth/sso/login", query_string={"provider": "okta"})
        assert response.status_code == 400
        assert "SSO_OKTA_ISSUER or SSO_OKTA_DISCOVERY_URL" in (await response.get_json())["detail"]


async def test_unknown_tenant_hint_is_like_an_unknown_account(sso_lite: Harness) -> None:
    """The public routes never tell whether a tenant exists: an unknown hint ends as "no account"."""
    await sso_lite.create_tenant("Acme")
    for hint in ("no such tenant", "00000000-0000-0000-0000-000000000000"):
        response = await sso_lite.sign_in(ADMIN_EMAIL, tenant=hint)
        assert response.status_code == 403
        assert (await response.get_json())["detail"] == (
            f"No account for {ADMIN_EMAIL} in this tenant; ask an administrator to create it"
        )


async def test_unreachable_provider_is_502(sso_offline: Harness) -> None:
    for provider in ("google", "oidc"):
        response = await sso_offline.client.get("/api/v1/auth/sso/login", query_string={"provider": provider})
        assert response.status_code == 502
        assert "could not be reached for its discovery document" in (await response.get_json())["detail"]


async def test_discovery_document_of_another_issuer_is_refused(idp, browser, sqlite_url) -> None:
    # The generic provider's issuer is configured, with no override: the document must name it.
    settings = sso_settings(idp.issuer, oidc_issuer=OFFLINE_ISSUER, oidc_discovery_url=idp.discovery_url)
    async with harness(idp.issuer, browser, sqlite_url, sso=settings) as h:
        assert (await h.client.get("/api/v1/auth/sso/login?provider=oidc")).status_code == 302
    # Same server under another name: the document it serves names 127.0.0.1, not localhost.
    settings = sso_settings(idp.issuer, oidc_issuer=idp.issuer.replace("127.0.0.1", "localhost"))
    async with harness(idp.issuer, browser, sqlite_url, sso=settings) as h:
        response = await h.client.get("/api/v1/auth/sso/login?provider=oidc")
        assert response.status_code == 502
        assert "names issuer" in (await response.get_json())["detail"]


# --------------------------------------------------------------------------- callback refusals


async def test_tampered_or_missing_state_is_400(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    back = await sso_lite.authorize(ADMIN_EMAIL)
    state = query_of(back)["state"]
    tampered = back.replace(f"state={state}", f"state={state[:-2]}xx")
    response = await sso_lite.callback(tampered)
    assert response.status_code == 400
    assert "Unknown, expired or already used sign-in state" in (await response.get_json())["detail"]
    response = await sso_lite.callback(back.replace(f"state={state}", "nostate=1"))
    assert response.status_code == 400
    assert (await response.get_json())["detail"].startswith("Missing state")
    # The genuine state still works once.
    assert (await sso_lite.callback(back)).status_code == 302


async def test_replayed_callback_is_400(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    back = await sso_lite.authorize(ADMIN_EMAIL)
    assert (await sso_lite.callback(back)).status_code == 302
    response = await sso_lite.callback(back)
    assert response.status_code == 400
    assert "already used" in (await response.get_json())["detail"]


async def test_expired_state_is_400(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    back = await sso_lite.authorize(ADMIN_EMAIL)
    sso_lite.clock.advance(sso_lite.services.settings.sso.state_ttl + 1)
    response = await sso_lite.callback(back)
    assert response.status_code == 400


async def test_callback_in_another_browser_is_400(sso_lite: Harness) -> None:
    """Login CSRF: a callback URL carried to another browser (without the binding cookie) is refused."""
    await sso_lite.create_tenant("Acme")
    back = await sso_lite.authorize(ADMIN_EMAIL)
    response = await sso_lite.callback(back, client=sso_lite.app.test_client())
    assert response.status_code == 400
    assert "another browser" in (await response.get_json())["detail"]


async def test_wrong_nonce_is_refused(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    back = await sso_lite.authorize(ADMIN_EMAIL)
    cache = sso_lite.services.cache
    key = sso_module.state_key(query_of(back)["state"])
    record = json.loads(await cache.get(key))
    record["nonce"] = "not-the-nonce-sent-to-the-provider"
    await cache.set(key, json.dumps(record), ttl=60)
    response = await sso_lite.callback(back)
    assert response.status_code == 401
    assert "nonce does not match" in (await response.get_json())["detail"]


async def test_wrong_pkce_verifier_is_refused_by_the_provider(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    back = await sso_lite.authorize(ADMIN_EMAIL)
    cache = sso_lite.services.cache
    key = sso_module.state_key(query_of(back)["state"])
    record = json.loads(await cache.get(key))
    record["code_verifier"] = "x" * 64
    await cache.set(key, json.dumps(record), ttl=60)
    response = await sso_lite.callback(back)
    assert response.status_code == 400
    assert (await response.get_json())["detail"] == "Keycloak refused the authorization code: invalid_grant"


async def test_provider_error_and_foreign_issuer_are_400(sso_lite: Harness) -> None:
    state = query_of(await sso_lite.start())["state"]
    response = await sso_lite.client.get(
        "/api/v1/auth/sso/callback",
        query_string={
            "state": state,
            "iss": sso_lite.issuer,
            "error": "access_denied",
            "error_description": "user cancelled",
        },
    )
    assert response.status_code == 400
    assert (await response.get_json())["detail"] == "Keycloak refused the sign-in: access_denied (user cancelled)"

    state = query_of(await sso_lite.start())["state"]
    response = await sso_lite.client.get(
        "/api/v1/auth/sso/callback", query_string={"state": state, "code": "abc", "iss": "https://evil.example"}
    )
    assert response.status_code == 400
    assert "another issuer" in (await response.get_json())["detail"]

    # This provider always sends iss (RFC 9207): a response without it is refused.
    state = query_of(await sso_lite.start())["state"]
    response = await sso_lite.client.get("/api/v1/auth/sso/callback", query_string={"state": state, "code": "c"})
    assert response.status_code == 400
    assert "lacks the iss parameter" in (await response.get_json())["detail"]

    state = query_of(await sso_lite.start())["state"]
    response = await sso_lite.client.get(
        "/api/v1/auth/sso/callback", query_string={"state": state, "iss": sso_lite.issuer}
    )
    assert response.status_code == 400
    assert (await response.get_json())["detail"].startswith("Missing code")


async def test_unverified_email_is_403(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme", admin_email="unverified@acme.example")
    response = await sso_lite.sign_in("unverified@acme.example")
    assert response.status_code == 403
    assert (await response.get_json())["detail"] == (
        "Keycloak has not verified the email address unverified@acme.example"
    )


async def test_unknown_email_without_provisioning_is_403(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    response = await sso_lite.sign_in("stranger@acme.example")
    assert response.status_code == 403
    assert "No account for stranger@acme.example" in (await response.get_json())["detail"]
    # A tenant hint without just-in-time provisioning does not create it either.
    response = await sso_lite.sign_in("stranger@acme.example", tenant="Acme")
    assert response.status_code == 403
    assert await sso_lite.services.identity.users_by_email("stranger@acme.example") == []


async def test_blocked_user_is_refused_at_callback_and_exchange(sso: Harness) -> None:
    tenant = await sso.create_tenant("Acme")
    code = await sso.sso_code(ADMIN_EMAIL)

    async def set_active(active: bool) -> None:
        await sso.services.db.write(
            lambda c: c.execute(
                "UPDATE users SET is_active = :a WHERE id = :id", {"a": int(active), "id": tenant["admin_user_id"]}
            )
        )

    await set_active(False)
    response = await sso.exchange(code)
    assert response.status_code == 401
    assert "blocked" in (await response.get_json())["detail"]
    response = await sso.sign_in(ADMIN_EMAIL)
    assert response.status_code == 403
    assert (await response.get_json())["detail"] == "This account is blocked"


async def test_platform_accounts_do_not_sign_in_by_sso(sso_lite: Harness) -> None:
    from agentgov.storage.identity import NewUser

    await sso_lite.services.identity.create_user(
        "", NewUser(email="root@platform.example", role="Super Admin", password_hash=None)
    )
    response = await sso_lite.sign_in("root@platform.example")
    assert response.status_code == 403


# --------------------------------------------------------------------------- the one-time code


async def test_replayed_code_is_400(sso: Harness) -> None:
    await sso.create_tenant("Acme")
    code = await sso.sso_code(ADMIN_EMAIL)
    assert (await sso.exchange(code)).status_code == 200
    response = await sso.exchange(code)
    assert response.status_code == 400
    assert (await response.get_json())["detail"] == "This sso_code has already been used; sign in again"


async def test_expired_code_is_400(sso_lite: Harness) -> None:
    await sso_lite.create_tenant("Acme")
    fresh = await sso_lite.sso_code(ADMIN_EMAIL)
    stale = await sso_lite.sso_code(ADMIN_EMAIL)
    sso_lite.clock.advance(59)
    assert (await sso_lite.exchange(fresh)).status_code == 200
    sso_lite.clock.advance(2)
    response = await sso_lite.exchange(stale)
    assert response.status_code == 400
    assert (await response.get_json())["detail"] == (
        "This sso_code is invalid or has expired (codes are valid 60 s); sign in again"
    )


async def test_bad_exchange_bodies(sso_offline: Harness) -> None:
    client = sso_offline.client
    response = await sso_offline.exchange("never-issued")
    assert response.status_code == 400
    for body in ({}, {"code": ""}, {"code": 5}, []):
        response = await client.post("/api/v1/auth/sso/exchange", json=body)
        assert response.status_code == 422, body
        assert "detail" in await response.get_json()
    response = await client.post("/api/v1/auth/sso/exchange", data="code=x")
    assert response.status_code == 415


# --------------------------------------------------------------------------- linking


async def test_email_matches_case_insensitively(sso_lite: Harness) -> None:
    tenant = await sso_lite.create_tenant("Acme", admin_email="Alice@Acme.Example")
    response = await sso_lite.exchange(await sso_lite.sso_code("alice@acme.example"))
    assert response.status_code == 200
    assert (await response.get_json())["user"]["id"] == tenant["admin_user_id"]


async def test_email_in_several_tenants_needs_a_hint(sso: Harness) -> None:
    acme = await sso.create_tenant("Acme")
    other = await sso.create_tenant("Other Corp")
    response = await sso.sign_in(ADMIN_EMAIL)
    assert response.status_code == 409
    assert "several tenants" in (await response.get_json())["detail"]
    for hint, expected in ((other["id"], other), ("acme", acme), ("  Other Corp ", other)):
        response = await sso.exchange(await sso.sso_code(ADMIN_EMAIL, tenant=hint))
        assert response.status_code == 200
        user = (await response.get_json())["user"]
        assert (user["id"], user["tenant_id"]) == (expected["admin_user_id"], expected["id"])


async def test_just_in_time_provisioning(sso: Harness) -> None:
    tenant = await sso.create_tenant("Acme", admin_email=None)
    await sso.services.identity.update_tenant_settings(
        tenant["id"], {"sso_jit_role": "Developer", "sso_jit_domains": ["Example.Test"]}
    )
    # Without the tenant hint nothing is provisioned.
    assert (await sso.sign_in("newcomer")).status_code == 403

    response = await sso.exchange(await sso.sso_code("newcomer", tenant=tenant["id"]))
    assert response.status_code == 200
    user = (await response.get_json())["user"]
    assert (user["email"], user["role"], user["tenant_id"], user["full_name"]) == (
        "newcomer@example.test",
        "Developer",
        tenant["id"],
        "newcomer",
    )
    # The next sign-in links the same account, with or without the hint.
    for params in ({"tenant": "Acme"}, {}):
        again = await sso.exchange(await sso.sso_code("newcomer", **params))
        assert (await again.get_json())["user"]["id"] == user["id"]
    assert len(await sso.services.identity.users_by_email("newcomer@example.test")) == 1


@pytest.mark.parametrize(
    ("settings", "detail"),
    [
        ({"sso_jit_role": "Developer"}, "may not sign up by SSO"),
        ({"sso_jit_role": "Developer", "sso_jit_domains": ["corp.example"]}, "may not sign up by SSO"),
        ({"sso_jit_role": "Super Admin", "sso_jit_domains": ["*"]}, "not a tenant role"),
        ({"sso_jit_role": "Boss", "sso_jit_domains": ["*"]}, "not a tenant role"),
        ({"sso_jit_domains": ["*"]}, "ask an administrator to create it"),
    ],
)
async def test_just_in_time_provisioning_refusals(sso_lite: Harness, settings: dict, detail: str) -> None:
    tenant = await sso_lite.create_tenant("Acme", admin_email=None)
    await sso_lite.services.identity.update_tenant_settings(tenant["id"], settings)
    response = await sso_lite.sign_in("newcomer", tenant=tenant["id"])
    assert response.status_code == 403
    assert detail in (await response.get_json())["detail"]
    assert await sso_lite.services.identity.users_by_email("newcomer@example.test") == []


async def test_wildcard_domain_allows_any_verified_email(sso_lite: Harness) -> None:
    tenant = await sso_lite.create_tenant("Acme", admin_email=None)
    await sso_lite.services.identity.update_tenant_settings(
        tenant["id"], {"sso_jit_role": "security_analyst", "sso_jit_domains": ["*"]}
    )
    response = await sso_lite.exchange(await sso_lite.sso_code("someone@anywhere.example", tenant="Acme"))
    assert (await response.get_json())["user"]["role"] == "Security Analyst"
