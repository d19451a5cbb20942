"""The OpenAPI document describes every route completely: error answers, formats, enums, bodies, paths."""

from __future__ import annotations

import re

import pytest
from quart_schema.openapi import QUART_SCHEMA_HIDDEN_ATTRIBUTE

from agentgov.http.auth import ROUTE_RULE_ATTR
from agentgov.http.openapi import openapi_path

BODY_ERRORS = {"400", "413", "415", "422"}


@pytest.fixture
async def document(client) -> dict:
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    return await response.get_json()


def operations(document: dict):
    for path, item in document["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


def test_converter_rules_keep_every_parameter_in_the_path() -> None:
    assert openapi_path("/p/<policy_id>/versions/<int:version>") == "/p/{policy_id}/versions/{version}"
    assert openapi_path("/a/<path:rest>") == "/a/{rest}"


async def test_the_document_is_openapi_3_1_with_an_error_schema(document) -> None:
    assert document["openapi"].startswith("3.1")
    error = document["components"]["schemas"]["Error"]
    assert error["required"] == ["detail"] and error["properties"]["detail"]["type"] == "string"


async def test_every_path_parameter_is_in_its_path_and_declared(document) -> None:
    for path, method, operation in operations(document):
        declared = {p["name"] for p in operation.get("parameters", []) if p["in"] == "path"}
        assert declared == set(re.findall(r"{([^}]+)}", path)), (method, path)
    assert "/api/v1/policies/{version}" not in document["paths"]
    version = document["paths"]["/api/v1/policies/{policy_id}/versions/{version}"]["get"]
    assert {p["name"]: p["schema"] for p in version["parameters"] if p["in"] == "path"} == {
        "policy_id": {"type": "string", "format": "uuid"},
        "version": {"type": "integer"},
    }


async def test_every_served_route_is_documented(app, document) -> None:
    served = set()
    for rule in app.url_map.iter_rules():
        view = app.view_functions[rule.endpoint]
        if rule.websocket or getattr(view, QUART_SCHEMA_HIDDEN_ATTRIBUTE, False):
            continue
        for method in rule.methods - {"HEAD", "OPTIONS"}:
            served.add((method.lower(), openapi_path(rule.rule)))
    documented = {(method, path) for path, method, _ in operations(document)}
    assert served == documented
    assert "/docs" not in document["paths"] and "/docs/assets/{name}" not in document["paths"]


async def test_every_operation_lists_its_error_answers(app, document) -> None:
    rules = {(m.lower(), openapi_path(r.rule)): r for r in app.url_map.iter_rules() for m in r.methods}
    for path, method, operation in operations(document):
        codes = set(operation["responses"])
        where = f"{method.upper()} {path}"
        assert any(code < "400" for code in codes), where
        auth = getattr(app.view_functions[rules[(method, path)].endpoint], ROUTE_RULE_ATTR)
        if auth.schemes:
            assert "401" in codes, where
        if auth.permission is not None:
            assert "403" in codes, where
        if "requestBody" in operation:
            assert codes >= BODY_ERRORS, where
        if any(p["in"] == "path" for p in operation.get("parameters", [])):
            assert {"404", "422"} <= codes, where
        if any(p["in"] == "query" for p in operation.get("parameters", [])):
            assert "422" in codes, where
        for code, response in operation["responses"].items():
            if code >= "400" and "content" in response:
                schema = response["content"]["application/json"]["schema"]
                assert schema == {"$ref": "#/components/schemas/Error"} or code == "503", where


async def test_request_bodies_are_required_unless_optional(document) -> None:
    optional = {
        ("post", "/api/v1/agents/{agent_id}/heartbeat"),
        ("post", "/api/v1/discovery/cluster"),
        ("post", "/api/v1/discovery/candidates/{candidate_id}/confirm"),
        ("post", "/api/v1/hitl/approve/{approval_id}"),
        ("post", "/api/v1/hitl/reject/{approval_id}"),
        ("post", "/api/v1/anomalies/detector/train"),
        ("post", "/api/v1/guard/detector/train"),
    }
    for path, method, operation in operations(document):
        if "requestBody" in operation:
            assert operation["requestBody"]["required"] is ((method, path) not in optional), (method, path)
    assert document["paths"]["/api/v1/agents/register"]["post"]["requestBody"]["required"] is True


async def test_ids_are_uuids_and_roles_and_statuses_are_enums(document) -> None:
    schemas = document["components"]["schemas"]
    for name in ("UserOut", "PolicyOut", "AgentOut", "CandidateOut", "AuditEntryOut", "ApprovalOut"):
        assert schemas[name]["properties"]["id"]["format"] == "uuid", name
    assert schemas["UserOut"]["properties"]["role"]["enum"] == ["Developer", "Security Analyst", "Admin", "Super Admin"]
    assert schemas["AgentOut"]["properties"]["status"]["enum"] == ["active", "inactive", "error"]
    assert schemas["ApprovalOut"]["properties"]["status"]["enum"] == ["pending", "approved", "rejected", "expired"]
    assert schemas["CandidateOut"]["properties"]["status"]["enum"] == ["pending", "confirmed", "dismissed", "merged"]
    role_body = document["paths"]["/api/v1/users/{user_id}/role"]["put"]["requestBody"]
    assert role_body["content"]["application/json"]["schema"]["properties"]["role"]["enum"] == [
        "Developer",
        "Security Analyst",
        "Admin",
    ]
    users = document["paths"]["/api/v1/users"]["get"]["parameters"]
    role = next(p for p in users if p["name"] == "role")
    assert role["schema"]["anyOf"][0]["enum"][0] == "Developer"
    for path, _, operation in operations(document):
        for parameter in operation.get("parameters", []):
            if parameter["in"] == "path" and parameter["name"].endswith("_id") and parameter["name"] != "key_id":
                assert parameter["schema"] == {"type": "string", "format": "uuid"}, path


async def test_docs_page_is_an_html5_document_loading_swagger_ui_5(client) -> None:
    response = await client.get("/docs")
    page = await response.get_data(as_text=True)
    assert response.status_code == 200 and response.mimetype == "text/html"
    assert page.startswith("<!DOCTYPE html>") and "<html" in page and "/openapi.json" in page
    script = await client.get("/docs/assets/swagger-ui-bundle.js")
    assert script.status_code == 200
    # Swagger UI 4 cannot read OpenAPI 3.1; the bundle served must be version 5.
    assert re.search(rb'"5\.\d+\.\d+"', await script.get_data()), "Swagger UI bundle is not version 5"
