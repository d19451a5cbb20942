"""Who may do what on the /guard routes: guard:use (Developer+) validates and reads, guard:manage (Security
Analyst+) teaches and trains; health and the training status by task id need no credentials."""

from __future__ import annotations

import pytest

from tests.guard.test_guard_http import API, key

USE = [
    ("POST", "/guard/validate"),
    ("GET", "/guard/stats"),
    ("GET", "/guard/settings"),
    ("GET", "/guard/detector/status"),
    ("GET", "/guard/detector/metrics"),
    ("GET", "/guard/detector/versions"),
]
MANAGE = [
    ("PUT", "/guard/settings"),
    ("POST", "/guard/detector/train"),
    ("POST", "/guard/detector/rollback/1"),
    ("POST", "/guard/detector/rollback/0"),
    ("DELETE", "/guard/detector/cancel"),
    ("POST", "/guard/detector/feedback"),
]
BODIES = {
    "/guard/validate": {"prompt": "hello"},
    "/guard/settings": {"record_prompts": False},
    "/guard/detector/feedback": {"prompt": "hello", "label": "false_positive"},
}


async def call(client, method: str, path: str, api_key: str | None):
    headers = {} if api_key is None else key(api_key)
    return await client.open(f"{API}{path}", method=method, json=BODIES.get(path, {}), headers=headers)


@pytest.mark.parametrize(("method", "path"), USE + MANAGE)
async def test_without_credentials_is_401(client, method: str, path: str) -> None:
    response = await call(client, method, path, None)
    assert response.status_code == 401 and (await response.get_json())["detail"]


@pytest.mark.parametrize(("method", "path"), USE + MANAGE)
async def test_a_wrong_key_is_401(client, method: str, path: str) -> None:
    response = await call(client, method, path, "agk_not_a_real_key")
    assert response.status_code == 401


@pytest.mark.parametrize(("method", "path"), USE)
async def test_developer_validates_and_reads(client, role_keys, method: str, path: str) -> None:
    response = await call(client, method, path, role_keys["Developer"])
    assert response.status_code == 200, await response.get_json()


@pytest.mark.parametrize(("method", "path"), MANAGE)
async def test_developer_may_not_manage(client, role_keys, method: str, path: str) -> None:
    response = await call(client, method, path, role_keys["Developer"])
    assert response.status_code == 403, await response.get_json()
    assert "guard:manage" in (await response.get_json())["detail"]


@pytest.mark.parametrize(("method", "path"), [m for m in MANAGE if m[1] != "/guard/detector/train"])
async def test_security_analyst_manages(client, role_keys, method: str, path: str) -> None:
    response = await call(client, method, path, role_keys["Security Analyst"])
    assert response.status_code in (200, 201, 404, 409), await response.get_json()
    if response.status_code == 404:
        assert path.endswith("rollback/1")  # no version 1: nothing trained
    if response.status_code == 409:
        assert path.endswith("cancel")  # nothing running


async def test_a_developers_feedback_is_not_stored(client, role_keys) -> None:
    await call(client, "POST", "/guard/detector/feedback", role_keys["Developer"])
    status = await (await call(client, "GET", "/guard/detector/status", role_keys["Admin"])).get_json()
    assert status["feedback_count"] == 0
