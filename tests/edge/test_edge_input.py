"""Input at the edge of what the service accepts is refused with a clear 4xx, the same on both backends.

Every route with a JSON body is taken from the OpenAPI document and sent, with valid credentials: JSON
nested 10,000 deep and 65 deep (400), text no database can store (NUL, a lone surrogate) in a key or a
value, an integer beyond 64 bits (422 naming the field) and an unknown field (422 naming it). Every list
is asked for an offset beyond 64 bits and every route for a query parameter holding NUL (422). None of
these may be a 5xx, and the service keeps working afterwards.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import types
import typing
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import ValidationError
from quart_trio import QuartTrio

from agentgov.http.app import create_app
from agentgov.server import bootstrap_superadmin
from tests.identity.conftest import PASSWORD, login
from tests.support.app import ADMIN_KEY, running_services, settings_for

ROOT_EMAIL = "root@platform.example"
WEBHOOK_SECRET = b"test-webhook-secret-0123456789"
PATH_PARAMETER = re.compile(r"\{([^}]+)\}")


@pytest.fixture
async def app(database_url: str) -> AsyncIterator[QuartTrio]:
    """The service with a Super Admin, whose token lists tenants."""
    settings = settings_for(database_url, superadmin_email=ROOT_EMAIL, superadmin_password=PASSWORD)
    async with running_services(settings) as services:
        await bootstrap_superadmin(services)
        yield create_app(services)


@pytest.fixture
async def credentials(client, tenant_admin) -> dict[str, str]:
    """Headers that satisfy every route's first scheme: a tenant Admin's key and token, the admin key."""
    return {
        "X-API-Key": tenant_admin["api_key"],
        "Authorization": f"Bearer {tenant_admin['access_token']}",
        "X-Admin-Key": ADMIN_KEY,
    }


@pytest.fixture
async def tenant_admin(client) -> dict[str, Any]:
    response = await client.post(
        "/api/v1/tenants",
        json={"name": "Edge", "admin_email": "admin@edge.example", "admin_password": PASSWORD},
        headers={"X-Admin-Key": ADMIN_KEY},
    )
    assert response.status_code == 201
    return await login(client, "admin@edge.example")


async def operations(client, *, with_body: bool) -> list[tuple[str, str]]:
    document = await (await client.get("/openapi.json")).get_json()
    found = []
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            if with_body == ("requestBody" in operation) and path != "/webhooks/agent":
                found.append((method.upper(), PATH_PARAMETER.sub(_path_value, path)))
    assert found
    return found


def _path_value(match: re.Match[str]) -> str:
    return "1" if match.group(1) == "version" else str(uuid.uuid4())


def _signed(body: bytes) -> dict[str, str]:
    return {"X-Webhook-Signature": hmac.new(WEBHOOK_SECRET, body, hashlib.sha256).hexdigest()}


BAD_BODIES: dict[str, tuple[bytes, int, str | None]] = {
    # name: (raw body, status, field the answer must name)
    "nested 10,000 deep": (b"[" * 10_000 + b"]" * 10_000, 400, None),
    "nested 65 deep": (b'{"a":' * 65 + b"1" + b"}" * 65, 400, None),
    "NUL in a value": (b'{"zz_text": "a\\u0000b"}', 422, "zz_text"),
    "lone surrogate in a value": (b'{"zz_text": ["ok", "\\ud800"]}', 422, "zz_text.1"),
    "NUL in a key": (b'{"zz\\u0000": 1}', 422, "zz\\x00"),
    "integer beyond 64 bits": (b'{"zz_number": 9223372036854775808}', 422, "zz_number"),
    "negative integer beyond 64 bits": (b'{"zz_number": -9223372036854775809}', 422, "zz_number"),
    "unknown field": (b'{"zz_unknown_field": 1}', 422, "zz_unknown_field"),
}


@pytest.mark.parametrize("case", list(BAD_BODIES))
async def test_every_json_route_refuses_edge_bodies(client, credentials, case: str) -> None:
    raw, status, field = BAD_BODIES[case]
    wrong = []
    for method, path in await operations(client, with_body=True):
        response = await client.open(
            path, method=method, data=raw, headers={**credentials, "Content-Type": "application/json"}
        )
        body = await response.get_json()
        named = [e["field"] for e in (body or {}).get("errors", [])]
        if response.status_code != status or not body.get("detail") or (field is not None and field not in named):
            wrong.append((method, path, response.status_code, body))
    assert not wrong, wrong
    assert (await client.get("/api/v1/agents", headers=credentials)).status_code == 200


@pytest.mark.parametrize("case", list(BAD_BODIES))
async def test_the_signed_webhook_refuses_edge_bodies(client, credentials, case: str) -> None:
    raw, status, field = BAD_BODIES[case]
    response = await client.post(
        "/webhooks/agent",
        data=raw,
        headers={"X-API-Key": credentials["X-API-Key"], "Content-Type": "application/json", **_signed(raw)},
    )
    body = await response.get_json()
    assert response.status_code == status, body
    if field is not None:
        assert field in [e["field"] for e in body["errors"]]


async def test_unknown_fields_inside_a_webhook_payload_are_named(client, credentials) -> None:
    raw = json.dumps({"event": "agent.action", "payload": {"agent_id": str(uuid.uuid4()), "colour": "red"}}).encode()
    response = await client.post(
        "/webhooks/agent",
        data=raw,
        headers={"X-API-Key": credentials["X-API-Key"], "Content-Type": "application/json", **_signed(raw)},
    )
    body = await response.get_json()
    assert response.status_code == 422
    assert "payload.colour" in [e["field"] for e in body["errors"]]


async def test_an_unknown_field_changes_nothing(client, credentials) -> None:
    response = await client.put("/api/v1/users/me", json={"name": "Renamed"}, headers=credentials)
    assert response.status_code == 422
    assert [e["field"] for e in (await response.get_json())["errors"]] == ["name"]
    me = await (await client.get("/api/v1/auth/me", headers=credentials)).get_json()
    assert "Renamed" not in json.dumps(me)


async def test_a_stored_text_round_trips_when_it_is_valid_unicode(client, credentials) -> None:
    name = "Agent ünïcødé 😀 \t tab"
    response = await client.post(
        "/api/v1/agents/register", json={"name": name, "type": "llm", "description": "fine"}, headers=credentials
    )
    assert response.status_code == 201, await response.get_json()
    assert (await response.get_json())["name"] == name.strip()


async def test_nan_in_a_check_context_is_still_accepted(client, credentials) -> None:
    agent = await (
        await client.post("/api/v1/agents/register", json={"name": "bot", "type": "llm"}, headers=credentials)
    ).get_json()
    raw = b'{"agent_id": "%s", "action": "read", "resource": "r", "context": {"score": NaN}}' % agent["id"].encode()
    response = await client.post(
        "/api/v1/policies/check", data=raw, headers={**credentials, "Content-Type": "application/json"}
    )
    assert response.status_code == 200, await response.get_json()


async def test_every_list_refuses_an_offset_beyond_64_bits(client, credentials) -> None:
    root = {"Authorization": f"Bearer {(await login(client, ROOT_EMAIL))['access_token']}"}
    wrong = []
    checked = 0
    document = await (await client.get("/openapi.json")).get_json()
    for path, methods in document["paths"].items():
        operation = methods.get("get")
        names = {p["name"] for p in (operation or {}).get("parameters", []) if p["in"] == "query"}
        for name in names & {"offset", "skip"}:
            checked += 1
            url = PATH_PARAMETER.sub(_path_value, path)
            # listing tenants is for the Super Admin, not a tenant's Admin
            headers = root if path == "/api/v1/tenants" else credentials
            response = await client.get(f"{url}?{name}={2**64}", headers=headers)
            body = await response.get_json()
            if response.status_code != 422 or name not in [e["field"] for e in body["errors"]]:
                wrong.append((path, name, response.status_code, body))
    assert checked >= 8
    assert not wrong, wrong


async def test_every_get_route_refuses_nul_in_the_query_string(client, credentials) -> None:
    wrong = []
    for method, path in await operations(client, with_body=False):
        if method != "GET" or path.startswith("/api/v1/auth/sso"):
            continue
        response = await client.get(f"{path}?q=a%00b", headers=credentials)
        if response.status_code >= 500 or (response.status_code == 200 and path.startswith("/api/v1/agents/search")):
            wrong.append((path, response.status_code, await response.get_json()))
    assert not wrong, wrong
    response = await client.get("/api/v1/agents/search?q=a%00b", headers=credentials)
    assert response.status_code == 422
    assert (await response.get_json())["errors"][0]["field"] == "q"


async def test_a_huge_policy_version_is_not_found(client, credentials) -> None:
    created = await client.post(
        "/api/v1/policies",
        json={"name": "p", "cedar": "permit(principal, action, resource);"},
        headers=credentials,
    )
    assert created.status_code == 201, await created.get_json()
    policy_id = (await created.get_json())["id"]
    for version in (2**63, 2**64, 10**40):
        response = await client.get(f"/api/v1/policies/{policy_id}/versions/{version}", headers=credentials)
        assert response.status_code == 404
        assert (await response.get_json())["detail"] == "Policy version not found"
    assert (await client.get(f"/api/v1/policies/{policy_id}/versions/1", headers=credentials)).status_code == 200


def _request_models() -> list[type[Any]]:
    """Every request body model (every route module is imported with `create_app`)."""
    from agentgov.http.schemas import RequestModel

    models, stack = [], list(RequestModel.__subclasses__())
    while stack:
        model = stack.pop()
        models.append(model)
        stack.extend(model.__subclasses__())
    return models


def test_every_boolean_in_a_request_body_takes_a_json_boolean_only() -> None:
    """A body's `true`/`false` is never read from "yes", "off", 1 or 0 (pydantic's lax mode would): each boolean
    field of every request model is strict, so a wrong type is a 422 naming it."""
    models = _request_models()
    booleans = [
        (model, name)
        for model in models
        for name, field in model.model_fields.items()
        if field.annotation is bool or bool in typing.get_args(field.annotation)
    ]
    assert len(booleans) >= 4  # the guard's settings, discovery's batches, policies, webhooks
    loose = []
    for model, name in booleans:
        for value in ("yes", 1):
            try:
                model.model_validate({name: value})
            except ValidationError as exc:
                if any(error["loc"][:1] == (name,) for error in exc.errors()):
                    continue
            loose.append((model.__name__, name, value))
    assert not loose


def _base_types(annotation: Any) -> set[Any]:
    """The plain types an annotation admits (unwrapping Annotated and unions, not containers)."""
    if typing.get_origin(annotation) is typing.Annotated:
        return _base_types(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return set().union(*(_base_types(arg) for arg in typing.get_args(annotation)))
    return {annotation}


def test_every_number_in_a_request_body_takes_a_json_number_only() -> None:
    """A body's number is never read from text ("0.5", "1"): each int and float field of every request model
    is strict, so a string is a 422 of type int_type/float_type naming the field."""
    models = _request_models()
    numbers = [
        (model, name)
        for model in models
        for name, field in model.model_fields.items()
        if _base_types(field.annotation) & {int, float} and bool not in _base_types(field.annotation)
    ]
    assert len(numbers) >= 15  # risk scores, training parameters, thresholds
    loose = []
    for model, name in numbers:
        try:
            model.model_validate({name: "1"})
        except ValidationError as exc:
            if any(e["loc"][:1] == (name,) and e["type"] in ("int_type", "float_type") for e in exc.errors()):
                continue
        loose.append((model.__name__, name))
    assert not loose


async def test_json_that_cannot_be_sent_back_is_refused_where_it_would_be_kept(client, credentials) -> None:
    """NaN and infinities (Python's reader accepts them) in agent metadata would make every later listing
    invalid JSON: a 422 naming the field, on create and update."""
    raw = b'{"name": "n", "type": "llm", "metadata": {"x": NaN}}'
    json_headers = {**credentials, "Content-Type": "application/json"}
    response = await client.post("/api/v1/agents/register", data=raw, headers=json_headers)
    body = await response.get_json()
    assert response.status_code == 422 and "NaN" in body["detail"] and body["errors"][0]["field"] == "metadata"
    created = await client.post("/api/v1/agents/register", json={"name": "n", "type": "llm"}, headers=credentials)
    agent = await created.get_json()
    response = await client.put(
        f"/api/v1/agents/{agent['id']}", data=b'{"metadata": {"z": -Infinity}}', headers=json_headers
    )
    assert response.status_code == 422 and (await response.get_json())["errors"][0]["field"] == "metadata"
    listing = await client.get("/api/v1/agents", headers=credentials)
    assert b"NaN" not in await listing.get_data() and b"Infinity" not in await listing.get_data()
