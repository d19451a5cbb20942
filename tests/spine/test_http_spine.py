"""The HTTP spine through Quart's test client against real storage (SQLite and PostgreSQL)."""

from __future__ import annotations

import dataclasses
import json
import logging
from typing import Any

import pytest
import trio
import trio.testing
from quart import Blueprint

from agentgov.actors.runtime import Actor
from agentgov.http.app import create_app
from agentgov.http.auth import Scheme, authorize, services
from agentgov.security.roles import Permission
from tests.support.app import ADMIN_KEY, running_services, settings_for

ADMIN = {"X-Admin-Key": ADMIN_KEY}


async def test_root_lists_links(client) -> None:
    response = await client.get("/")
    body = await response.get_json()
    assert response.status_code == 200
    assert body["api"] == "/api/v1" and body["links"]["docs"] == "/docs"


async def test_health_and_readiness(client) -> None:
    assert (await (await client.get("/api/v1/health")).get_json()) == {"status": "ok"}
    response = await client.get("/api/v1/health/ready")
    body = await response.get_json()
    assert response.status_code == 200
    assert body["status"] == "ready"
    assert {name: c["status"] for name, c in body["components"].items()} == {
        "database": "ok",
        "cache": "ok",
        "policy_engine": "ok",
    }


async def test_readiness_names_the_database_when_down(app, client) -> None:
    await app.extensions["agentgov"].db.close()
    response = await client.get("/api/v1/health/ready")
    body = await response.get_json()
    assert response.status_code == 503
    assert body["components"]["database"]["status"] == "down"
    assert body["components"]["cache"]["status"] == "ok"
    assert "database" in body["detail"]


async def test_readiness_names_the_cache_when_down(sqlite_url: str) -> None:
    settings = settings_for(sqlite_url, redis_url="redis://127.0.0.1:1/0")
    async with running_services(settings) as svc:
        client = create_app(svc).test_client()
        response = await client.get("/api/v1/health/ready")
        body = await response.get_json()
    assert response.status_code == 503
    assert body["components"]["cache"]["status"] == "down"
    assert body["detail"] == "not ready: cache down"


async def test_create_tenant_and_use_its_key(client) -> None:
    response = await client.post("/api/v1/tenants", json={"name": "Acme"}, headers=ADMIN)
    assert response.status_code == 201
    created = await response.get_json()
    assert set(created) >= {"id", "name", "created_at", "api_key"}
    status = await client.get("/api/v1/status", headers={"X-API-Key": created["api_key"]})
    body = await status.get_json()
    assert status.status_code == 200
    assert body["tenant_id"] == created["id"]
    assert body["status"] == "ok" and body["uptime_seconds"] >= 0


async def test_tenant_with_first_admin_user_is_stored(app, client) -> None:
    response = await client.post(
        "/api/v1/tenants",
        json={
            "name": "Globex",
            "admin_email": "root@globex.example",
            "admin_password": "correct horse battery",
        },
        headers=ADMIN,
    )
    created = await response.get_json()
    assert response.status_code == 201 and created["admin_user_id"]
    user = await app.extensions["agentgov"].identity.get_user(created["admin_user_id"])
    assert user.email == "root@globex.example" and user.role == "Admin"
    assert user.password_hash.startswith("$argon2id$")


async def test_duplicate_tenant_name_is_409(client) -> None:
    assert (await client.post("/api/v1/tenants", json={"name": "Acme"}, headers=ADMIN)).status_code == 201
    response = await client.post("/api/v1/tenants", json={"name": " acme "}, headers=ADMIN)
    assert response.status_code == 409
    assert "already exists" in (await response.get_json())["detail"]


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        ({}, "Missing credentials: send X-Admin-Key"),
        ({"X-Admin-Key": "wrong"}, "Invalid admin key"),
        ({"X-Admin-Key": ""}, "Invalid admin key"),
    ],
)
async def test_tenant_creation_needs_the_admin_key(client, headers: dict[str, str], detail: str) -> None:
    response = await client.post("/api/v1/tenants", json={"name": "Acme"}, headers=headers)
    assert response.status_code == 401
    assert (await response.get_json())["detail"] == detail


async def test_tenant_key_cannot_create_tenants(client, tenant) -> None:
    response = await client.post("/api/v1/tenants", json={"name": "Evil"}, headers={"X-API-Key": tenant["api_key"]})
    assert response.status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "name"),
        ({"name": "   "}, "name"),
        ({"name": 5}, "name"),
        ({"name": "x" * 101}, "name"),
        ({"name": "A", "admin_email": "a@b.example"}, "admin_email and admin_password"),
        (
            {"name": "A", "admin_email": "not-an-email", "admin_password": "long enough password"},
            "admin_email",
        ),
        ({"name": "A", "admin_email": "a@b.example", "admin_password": "short"}, "admin_password"),
    ],
)
async def test_invalid_tenant_body_is_422_naming_the_field(client, body: dict[str, Any], field: str) -> None:
    response = await client.post("/api/v1/tenants", json=body, headers=ADMIN)
    detail = (await response.get_json())["detail"]
    assert response.status_code == 422, detail
    assert field in detail


async def test_non_json_and_malformed_bodies(client) -> None:
    response = await client.post("/api/v1/tenants", data="name=x", headers={**ADMIN, "Content-Type": "text/plain"})
    assert response.status_code == 415
    assert (await response.get_json())["detail"] == "Content-Type must be application/json"
    response = await client.post("/api/v1/tenants", data="{nope", headers={**ADMIN, "Content-Type": "application/json"})
    assert response.status_code == 400
    assert "not valid JSON" in (await response.get_json())["detail"]
    response = await client.post("/api/v1/tenants", json=["name"], headers=ADMIN)
    assert response.status_code == 422


async def test_oversized_body_is_413(client) -> None:
    response = await client.post("/api/v1/tenants", json={"name": "x" * (2 * 1024 * 1024)}, headers=ADMIN)
    assert response.status_code == 413
    assert (await response.get_json())["detail"] == "Request body too large"


@pytest.mark.parametrize(
    ("key", "detail"),
    [
        (None, "Missing credentials: send X-API-Key"),
        ("garbage", "Invalid API key"),
        ("agk_" + "a" * 59, "Invalid API key"),
    ],
)
async def test_status_rejects_bad_keys(client, tenant, key: str | None, detail: str) -> None:
    headers = {} if key is None else {"X-API-Key": key}
    response = await client.get("/api/v1/status", headers=headers)
    assert response.status_code == 401
    assert (await response.get_json())["detail"] == detail


async def test_right_key_id_with_wrong_secret_is_401(client, tenant) -> None:
    forged = tenant["api_key"][:-4] + ("aaaa" if not tenant["api_key"].endswith("aaaa") else "bbbb")
    response = await client.get("/api/v1/status", headers={"X-API-Key": forged})
    assert response.status_code == 401


async def test_admin_key_is_not_a_tenant_credential(client) -> None:
    response = await client.get("/api/v1/status", headers=ADMIN)
    assert response.status_code == 401
    assert "X-API-Key" in (await response.get_json())["detail"]


async def test_request_id_is_echoed_or_generated(client) -> None:
    response = await client.get("/api/v1/health", headers={"X-Request-ID": "abc-123"})
    assert response.headers["X-Request-ID"] == "abc-123"
    response = await client.get("/api/v1/health", headers={"X-Request-ID": "bad id with spaces"})
    generated = response.headers["X-Request-ID"]
    assert generated != "bad id with spaces" and len(generated) == 32
    other = (await client.get("/api/v1/health")).headers["X-Request-ID"]
    assert other != generated


async def test_request_id_appears_in_the_request_log(client, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="agentgov.http")
    await client.get("/api/v1/health", headers={"X-Request-ID": "trace-me-42"})
    lines = [r for r in caplog.records if r.getMessage() == "request"]
    assert lines and lines[-1].fields["request_id"] == "trace-me-42"  # type: ignore[attr-defined]
    assert lines[-1].fields["status"] == 200  # type: ignore[attr-defined]


async def test_unknown_route_and_wrong_method_are_json(client) -> None:
    response = await client.get("/api/v1/nope")
    assert response.status_code == 404 and (await response.get_json()) == {"detail": "Not found"}
    response = await client.delete("/api/v1/health")
    assert response.status_code == 405 and (await response.get_json())["detail"] == "Method not allowed"
    for doubled in ("/api/v1//health", "/api/v1/guard//health"):  # no redirect with an HTML body: no route
        response = await client.get(doubled)
        assert response.status_code == 404 and (await response.get_json()) == {"detail": "Not found"}, doubled


async def test_docs_work_offline(client) -> None:
    page = await (await client.get("/docs")).get_data(as_text=True)
    assert "/docs/assets/swagger-ui-bundle.js" in page and "/openapi.json" in page
    assert "cdn" not in page.lower() and "https://" not in page
    for asset in ("/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"):
        response = await client.get(asset)
        assert response.status_code == 200 and len(await response.get_data()) > 10_000
    assert (await client.get("/docs/assets/../../etc/passwd")).status_code == 404


async def test_openapi_documents_routes_schemas_and_security(client) -> None:
    spec = await (await client.get("/openapi.json")).get_json()
    assert "/api/v1/tenants" in spec["paths"] and "/api/v1/health/ready" in spec["paths"]
    post = spec["paths"]["/api/v1/tenants"]["post"]
    assert post["security"] == [{"AdminKey": []}]
    assert "requestBody" in post
    assert spec["components"]["securitySchemes"]["ApiKey"]["name"] == "X-API-Key"


# -- the mailbox-full path, through a real actor behind a real route ------------------------------


@dataclasses.dataclass(frozen=True)
class Wait:
    pass


class Gate(Actor[Wait]):
    opened = trio.Event()
    entered = trio.Event()

    async def handle(self, message: Wait) -> str:
        Gate.entered.set()
        await Gate.opened.wait()
        return "done"


async def until(predicate: Any) -> None:
    """Checkpoint until `predicate()` holds. Requests may be waiting on database threads, which
    `wait_all_tasks_blocked` counts as blocked, so wait for the state itself (bounded)."""
    with trio.fail_after(30):
        while not predicate():
            await trio.testing.wait_all_tasks_blocked()
            await trio.lowlevel.checkpoint()


async def test_full_mailbox_answers_503(sqlite_url: str) -> None:
    Gate.opened, Gate.entered = trio.Event(), trio.Event()
    async with running_services(settings_for(sqlite_url)) as svc:
        app = create_app(svc)
        extra = Blueprint("gate", __name__)

        @extra.post("/gate")
        @authorize(Scheme.API_KEY, permission=Permission.STATUS_READ)
        async def gate() -> dict[str, str]:
            ref = services().actors.get_or_spawn("gate", Gate, capacity=1)
            return {"result": await ref.ask(Wait())}

        app.register_blueprint(extra, url_prefix="/api/v1")
        client = app.test_client()
        created = await (await client.post("/api/v1/tenants", json={"name": "T"}, headers=ADMIN)).get_json()
        headers = {"X-API-Key": created["api_key"]}
        results: list[int] = []

        async def call() -> None:
            results.append((await client.post("/api/v1/gate", headers=headers)).status_code)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(call)  # taken by the actor, waiting at the gate
            await until(Gate.entered.is_set)
            nursery.start_soon(call)  # fills the one-slot mailbox
            await until(lambda: [a["queued"] for a in svc.actors.stats() if a["name"] == "gate"] == [1])
            response = await client.post("/api/v1/gate", headers=headers)
            assert response.status_code == 503
            assert response.headers["Retry-After"] == "1"
            assert (await response.get_json())["detail"] == "Service busy: the gate mailbox is full; retry shortly"
            Gate.opened.set()
        assert results == [200, 200]


def test_log_formats_carry_fields() -> None:
    from agentgov.logs import JsonFormatter, KeyValueFormatter, fields, request_id_var

    record = logging.LogRecord("agentgov.test", logging.INFO, __file__, 1, "hello world", None, None)
    record.fields = fields(tenant="t1", n=3)["fields"]
    token = request_id_var.set("rid-1")
    try:
        as_json = json.loads(JsonFormatter().format(record))
        as_text = KeyValueFormatter().format(record)
    finally:
        request_id_var.reset(token)
    assert as_json["msg"] == "hello world" and as_json["tenant"] == "t1" and as_json["request_id"] == "rid-1"
    assert 'msg="hello world"' in as_text and "tenant=t1" in as_text and "request_id=rid-1" in as_text
