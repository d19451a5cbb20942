from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from quart_trio import QuartTrio

from tests.support.app import ADMIN_KEY, app_for, settings_for
from tests.support.backends import postgres_database, redis_prefix


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path) -> Iterator[str]:
    """Every backend in turn: an SQLite file, then a fresh PostgreSQL database."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'test.db'}"
    else:
        with postgres_database() as url:
            yield url


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'test.db'}"


@pytest.fixture
def redis_settings() -> Iterator[tuple[str, str]]:
    """(url, prefix) of a private key space on the test Redis."""
    from tests.support.backends import REDIS_URL

    with redis_prefix() as prefix:
        yield REDIS_URL, prefix


@pytest.fixture
async def app(database_url: str) -> AsyncIterator[QuartTrio]:
    async with app_for(settings_for(database_url)) as app:
        yield app


@pytest.fixture
async def client(app: QuartTrio):
    return app.test_client()


@pytest.fixture
async def tenant(client) -> dict:
    """A fresh tenant; its `api_key` acts as the tenant's Admin."""
    response = await client.post("/api/v1/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
    assert response.status_code == 201, await response.get_data(as_text=True)
    return await response.get_json()


@pytest.fixture
async def role_keys(app: QuartTrio, tenant: dict) -> dict[str, str]:
    """One API key of the tenant per role: {"Developer": key, "Security Analyst": key, "Admin": key}."""
    from tests.support.app import api_key_with_role

    svc = app.extensions["agentgov"]
    return {
        role: await api_key_with_role(svc, tenant["id"], role) for role in ("Developer", "Security Analyst", "Admin")
    }


@pytest.fixture
async def other_tenant(client) -> dict:
    """A second tenant, for cross-tenant access tests."""
    response = await client.post("/api/v1/tenants", json={"name": "Other Corp"}, headers={"X-Admin-Key": ADMIN_KEY})
    assert response.status_code == 201
    return await response.get_json()
