"""Single sign-on test harness: the real loopback OpenID provider and the real app around it.

`sso` (a `Harness`) runs the whole flow the way a browser does: the app's `/auth/sso/login` redirect,
the provider's login and consent screens (`drive_login`), the app's callback, and the code exchange.
The app's cache is a real `MemoryCache` on a clock the test moves (`Harness.clock`), so expiry is tested
without sleeping.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from quart_trio import QuartTrio

from agentgov.actors.runtime import ActorSystem
from agentgov.config import Settings, SsoSettings
from agentgov.http.app import create_app
from agentgov.services import Services
from agentgov.storage import open_database
from agentgov.storage.cache import Cache, MemoryCache
from tests.support.app import ADMIN_KEY, settings_for
from tests.support.oidc import OIDCProvider, drive_login, oidc_client, require_oidc_provider, run_oidc_provider

PUBLIC_BASE = "http://agentgov.test"
FRONTEND = "http://app.test"
CALLBACK_PATH = "/api/v1/auth/sso/callback"
CALLBACK = PUBLIC_BASE + CALLBACK_PATH
# The Quart test client's own origin, used when PUBLIC_BASE_URL is not set.
LOCAL_CALLBACK = "http://localhost" + CALLBACK_PATH
OFFLINE_ISSUER = "http://127.0.0.1:9"  # the discard port: nothing listens there
PROVIDERS = ("google", "microsoft", "okta", "oidc")
CLIENTS = {pid: oidc_client(f"agentgov-{pid}", [CALLBACK, LOCAL_CALLBACK]) for pid in PROVIDERS}
ADMIN_EMAIL = "admin@acme.example"
PASSWORD = "a long passphrase for tests"


class Clock:
    """A monotonic clock the test advances by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def sso_settings(issuer: str, **overrides: Any) -> SsoSettings:
    """Every provider enabled and pointed at the loopback issuer (Google, Entra ID and Okta through their
    discovery-URL override, the generic provider through its issuer)."""
    discovery_url = issuer + "/.well-known/openid-configuration"
    values: dict[str, Any] = {"frontend_url": FRONTEND}
    for pid, client in CLIENTS.items():
        values[f"{pid}_client_id"] = client["client_id"]
        values[f"{pid}_client_secret"] = client["client_secret"]
    values.update(
        google_discovery_url=discovery_url,
        microsoft_tenant="contoso.onmicrosoft.com",
        microsoft_discovery_url=discovery_url,
        okta_issuer="dev-123.okta.example",
        okta_discovery_url=discovery_url,
        oidc_issuer=issuer,
        oidc_name="Keycloak",
    )
    values.update(overrides)
    return SsoSettings(**values)


@asynccontextmanager
async def open_app(settings: Settings, cache: Cache) -> AsyncIterator[QuartTrio]:
    """The real app over real storage and the given cache."""
    db = await open_database(settings.effective_database_url)
    try:
        async with ActorSystem.open(mailbox_capacity=settings.mailbox_capacity) as actors:
            yield create_app(Services(settings=settings, db=db, cache=cache, actors=actors))
    finally:
        await db.close()
        await cache.close()


def query_of(url: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(url).query).items()}


def path_of(url: str) -> str:
    parts = urlsplit(url)
    return parts.path + ("?" + parts.query if parts.query else "")


@dataclasses.dataclass
class Harness:
    app: QuartTrio
    issuer: str
    clock: Clock
    browser: httpx.AsyncClient  # the user's browser at the identity provider
    client: Any  # the same browser at agentgov (Quart test client, keeps cookies)

    @property
    def services(self) -> Services:
        return self.app.extensions["agentgov"]

    async def create_tenant(self, name: str, admin_email: str | None = ADMIN_EMAIL) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name}
        if admin_email is not None:
            body.update(admin_email=admin_email, admin_password=PASSWORD)
        response = await self.client.post("/api/v1/tenants", json=body, headers={"X-Admin-Key": ADMIN_KEY})
        assert response.status_code == 201, await response.get_data(as_text=True)
        return await response.get_json()

    async def start(self, provider: str = "oidc", client: Any = None, **params: str) -> str:
        """GET /auth/sso/login; returns the provider's authorization URL."""
        response = await (client or self.client).get(
            "/api/v1/auth/sso/login", query_string={"provider": provider, **params}
        )
        assert response.status_code == 302, await response.get_data(as_text=True)
        return response.headers["Location"]

    async def authorize(self, login: str, provider: str = "oidc", **params: str) -> str:
        """Start a sign-in and log in at the provider; returns the provider's redirect to our callback."""
        return await drive_login(self.browser, await self.start(provider, **params), login)

    async def callback(self, url: str, client: Any = None) -> Any:
        assert url.startswith((CALLBACK + "?", LOCAL_CALLBACK + "?")), url
        return await (client or self.client).get(path_of(url))

    async def sign_in(self, login: str, provider: str = "oidc", **params: str) -> Any:
        """The whole browser part; returns the callback's response."""
        return await self.callback(await self.authorize(login, provider, **params))

    async def sso_code(self, login: str, provider: str = "oidc", **params: str) -> str:
        response = await self.sign_in(login, provider, **params)
        assert response.status_code == 302, await response.get_data(as_text=True)
        return query_of(response.headers["Location"])["sso_code"]

    async def exchange(self, code: str) -> Any:
        return await self.client.post("/api/v1/auth/sso/exchange", json={"code": code})


@pytest.fixture(scope="session")
def oidc_ready() -> None:
    require_oidc_provider()


@pytest.fixture
async def idp(oidc_ready: None) -> AsyncIterator[OIDCProvider]:
    async with run_oidc_provider(list(CLIENTS.values())) as provider:
        yield provider


@pytest.fixture
async def browser() -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(timeout=30) as client:
        yield client


@asynccontextmanager
async def harness(
    issuer: str, browser: httpx.AsyncClient, database_url: str, **settings: Any
) -> AsyncIterator[Harness]:
    """A harness whose providers all use `issuer` (see `sso_settings`) unless `sso=` says otherwise."""
    sso = settings.pop("sso", None) or sso_settings(issuer)
    clock = Clock()
    config = settings_for(database_url, public_base_url=settings.pop("public_base_url", PUBLIC_BASE), sso=sso)
    async with open_app(dataclasses.replace(config, **settings), MemoryCache(clock=clock)) as app:
        yield Harness(app=app, issuer=issuer, clock=clock, browser=browser, client=app.test_client())


@pytest.fixture
async def sso(idp: OIDCProvider, browser: httpx.AsyncClient, database_url: str) -> AsyncIterator[Harness]:
    """The harness on each database backend (SQLite, PostgreSQL)."""
    async with harness(idp.issuer, browser, database_url) as h:
        yield h


@pytest.fixture
async def sso_lite(idp: OIDCProvider, browser: httpx.AsyncClient, sqlite_url: str) -> AsyncIterator[Harness]:
    """The harness on SQLite only (for failure cases that do not touch storage differently)."""
    async with harness(idp.issuer, browser, sqlite_url) as h:
        yield h


@pytest.fixture
async def sso_offline(browser: httpx.AsyncClient, sqlite_url: str) -> AsyncIterator[Harness]:
    """The harness with every provider enabled but nothing listening at the issuer: for requests that are
    refused before the provider is contacted (and for an unreachable provider)."""
    async with harness(OFFLINE_ISSUER, browser, sqlite_url) as h:
        yield h
