from __future__ import annotations

import pytest

from tests.support.app import ADMIN_KEY

PASSWORD = "correct horse battery staple"


async def login(client, email: str, password: str = PASSWORD, **extra: str) -> dict:
    response = await client.post("/api/v1/auth/login", json={"email": email, "password": password, **extra})
    assert response.status_code == 200, await response.get_data(as_text=True)
    return await response.get_json()


def bearer(session: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {session['access_token']}"}


@pytest.fixture
async def acme(client) -> dict:
    """A tenant created with its first Admin user (admin@acme.example)."""
    response = await client.post(
        "/api/v1/tenants",
        json={"name": "Acme", "admin_email": "admin@acme.example", "admin_password": PASSWORD},
        headers={"X-Admin-Key": ADMIN_KEY},
    )
    assert response.status_code == 201
    return await response.get_json()


@pytest.fixture
async def admin_session(client, acme) -> dict:
    return await login(client, "admin@acme.example")


async def create_user(client, session: dict, email: str, role: str = "Developer") -> dict:
    response = await client.post(
        "/api/v1/users", json={"email": email, "password": PASSWORD, "role": role}, headers=bearer(session)
    )
    assert response.status_code == 201, await response.get_data(as_text=True)
    return await response.get_json()
