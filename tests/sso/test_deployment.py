"""Single sign-on as deployed: through the real hypercorn server, and across processes sharing Redis."""

from __future__ import annotations

import httpx
import pytest

from agentgov.storage.cache import RedisCache
from tests.sso.conftest import ADMIN_EMAIL, CALLBACK_PATH, FRONTEND, PASSWORD, open_app, path_of, query_of, sso_settings
from tests.support.app import ADMIN_KEY, live_server, settings_for
from tests.support.oidc import OIDCProvider, drive_login, oidc_client, run_oidc_provider

# A native client's loopback redirect URI matches any port (RFC 8252), so the provider can be started
# before the server's ephemeral port is known.
LIVE_CLIENT = oidc_client("agentgov-live", "http://127.0.0.1" + CALLBACK_PATH, application_type="native")


async def test_whole_flow_through_the_live_server(oidc_ready: None, sqlite_url: str) -> None:
    async with run_oidc_provider([LIVE_CLIENT]) as idp:
        sso = sso_settings(
            idp.issuer,
            oidc_client_id=LIVE_CLIENT["client_id"],
            oidc_client_secret=LIVE_CLIENT["client_secret"],
            frontend_url="",
        )
        # No PUBLIC_BASE_URL: the callback URL is the server's own origin.
        async with (
            live_server(settings_for(sqlite_url, sso=sso)) as (api, running),
            httpx.AsyncClient(timeout=30) as browser,
        ):
            created = await api.post(
                "/api/v1/tenants",
                json={"name": "Acme", "admin_email": ADMIN_EMAIL, "admin_password": PASSWORD},
                headers={"X-Admin-Key": ADMIN_KEY},
            )
            assert created.status_code == 201
            providers = (await api.get("/api/v1/auth/sso/providers")).json()["providers"]
            assert {"id": "oidc", "name": "Keycloak", "enabled": True} in providers

            login = await api.get("/api/v1/auth/sso/login", params={"provider": "oidc", "redirect": "/agents"})
            assert login.status_code == 302
            authorize_url = login.headers["location"]
            assert query_of(authorize_url)["redirect_uri"] == running.urls[0] + CALLBACK_PATH

            back = await drive_login(browser, authorize_url, ADMIN_EMAIL)
            assert back.startswith(running.urls[0] + CALLBACK_PATH + "?")
            callback = await api.get(path_of(back))  # `api` holds the binding cookie set by the login
            assert callback.status_code == 302, callback.text
            assert callback.headers["location"].startswith("/agents?sso_code=")

            code = query_of(callback.headers["location"])["sso_code"]
            session = await api.post("/api/v1/auth/sso/exchange", json={"code": code})
            assert session.status_code == 200, session.text
            body = session.json()
            assert body["user"]["email"] == ADMIN_EMAIL
            status = await api.get("/api/v1/status", headers={"X-API-Key": body["api_key"]})
            assert status.status_code == 200 and status.json()["tenant_id"] == created.json()["id"]
            replay = await api.post("/api/v1/auth/sso/exchange", json={"code": code})
            assert replay.status_code == 400


@pytest.mark.redis
async def test_state_and_code_are_shared_between_processes(
    idp: OIDCProvider, browser: httpx.AsyncClient, sqlite_url: str, redis_settings: tuple[str, str]
) -> None:
    """Two service instances (as behind a load balancer) share the database and Redis: the sign-in starts
    on one, the provider's callback lands on the other, and each state and code is good exactly once."""
    redis_url, prefix = redis_settings
    settings = settings_for(
        sqlite_url, redis_url, redis_prefix=prefix, public_base_url="http://agentgov.test", sso=sso_settings(idp.issuer)
    )
    async with (
        open_app(settings, RedisCache(redis_url, prefix)) as first,
        open_app(settings, RedisCache(redis_url, prefix)) as second,
    ):
        one, two = first.test_client(), second.test_client()
        created = await one.post(
            "/api/v1/tenants",
            json={"name": "Acme", "admin_email": ADMIN_EMAIL, "admin_password": PASSWORD},
            headers={"X-Admin-Key": ADMIN_KEY},
        )
        assert created.status_code == 201
        login = await one.get("/api/v1/auth/sso/login", query_string={"provider": "okta"})
        cookie = login.headers["Set-Cookie"].split(";")[0]
        back = await drive_login(browser, login.headers["Location"], ADMIN_EMAIL)

        callback = await two.get(path_of(back), headers={"Cookie": cookie})
        assert callback.status_code == 302, await callback.get_data(as_text=True)
        location = callback.headers["Location"]
        assert location.startswith(FRONTEND + "/dashboard?sso_code=")
        assert (await one.get(path_of(back), headers={"Cookie": cookie})).status_code == 400  # state spent

        code = query_of(location)["sso_code"]
        assert (await one.post("/api/v1/auth/sso/exchange", json={"code": code})).status_code == 200
        replay = await two.post("/api/v1/auth/sso/exchange", json={"code": code})
        assert replay.status_code == 400
        assert (await replay.get_json())["detail"] == "This sso_code has already been used; sign in again"
