"""The policy check served from ASGI in front of Quart (`agentgov.http.hot_path`): the same contract as the
Quart view, proven request by request against an app built without the hot path, plus what only a raw
ASGI handler has to get right (bodies in pieces, a client that leaves, keep-alive after an early answer).
"""

from __future__ import annotations

import json
import logging
import uuid
from typing import Any

import pytest
import trio

from agentgov.http.app import create_app
from tests.policies.helpers import API, PERMIT_ACTIVE, create_policy, flush_audit, key, register_agent
from tests.support.app import live_server, settings_for

CHECK = f"{API}/policies/check"
VOLATILE = {"decision_id", "evaluated_at"}


@pytest.fixture
def quart_only(app):
    """A second app on the same services, with every route (the check included) served by Quart."""
    return create_app(app.extensions["agentgov"], hot_path=False)


@pytest.fixture
def quart_paths(app, quart_only) -> dict[str, list[str]]:
    """Paths each app's Quart request hooks saw: the hot path bypasses them."""
    seen: dict[str, list[str]] = {"hot": [], "quart": []}
    for name, each in (("hot", app), ("quart", quart_only)):

        async def record(paths: list[str] = seen[name]) -> None:
            from quart import request

            paths.append(request.path)

        each.before_request(record)
    return seen


def _requests(api_key: str, agent_id: str, developer_key: str) -> list[tuple[str, dict[str, Any]]]:
    as_json = {**key(api_key), "Content-Type": "application/json"}
    good = {"agent_id": agent_id, "action": "files.read", "resource": "s3://b/k", "context": {"amount": 3}}
    raw = json.dumps(good).encode()
    return [
        ("allowed", {"json": good, "headers": key(api_key)}),
        ("developer may check", {"json": good, "headers": key(developer_key)}),
        ("no credentials", {"json": good}),
        ("bearer is not accepted here", {"json": good, "headers": {"Authorization": "Bearer x.y.z"}}),
        ("malformed key", {"json": good, "headers": key("nonsense")}),
        ("unknown key", {"json": good, "headers": key("agk_" + "0" * 16 + "x" * 43)}),
        ("not json", {"data": raw, "headers": {**key(api_key), "Content-Type": "text/plain"}}),
        (
            "json with charset",
            {"data": raw, "headers": {**key(api_key), "Content-Type": "application/json; charset=utf-8"}},
        ),
        ("empty body", {"data": b"", "headers": as_json}),
        ("broken json", {"data": b"{nope", "headers": as_json}),
        ("not an object", {"json": [1, 2], "headers": key(api_key)}),
        ("missing field", {"json": {"agent_id": agent_id}, "headers": key(api_key)}),
        ("bad agent id", {"json": {**good, "agent_id": "42"}, "headers": key(api_key)}),
        ("unknown agent", {"json": {**good, "agent_id": str(uuid.uuid4())}, "headers": key(api_key)}),
        ("mistyped context", {"json": {**good, "context": {"amount": "lots"}}, "headers": key(api_key)}),
        (
            "too large",
            {
                "data": b"{" + b" " * (1024 * 1024) + b"}",
                "headers": {**key(api_key), "Content-Type": "application/json"},
            },
        ),
        ("own request id", {"json": good, "headers": {**key(api_key), "X-Request-ID": "trace-42"}}),
    ]


async def test_same_answers_as_the_quart_view(app, quart_only, quart_paths, tenant, role_keys) -> None:
    hot, plain = app.test_client(), quart_only.test_client()
    api_key = tenant["api_key"]
    agent = await register_agent(hot, api_key)
    await create_policy(hot, api_key, PERMIT_ACTIVE)
    del quart_paths["hot"][:], quart_paths["quart"][:]

    statuses = {}
    for name, kwargs in _requests(api_key, agent["id"], role_keys["Developer"]):
        a = await hot.post(CHECK, **kwargs)
        b = await plain.post(CHECK, **kwargs)
        body_a, body_b = await a.get_json(), await b.get_json()
        assert a.status_code == b.status_code, name
        if a.status_code == 200:
            assert {k: v for k, v in body_a.items() if k not in VOLATILE} == {
                k: v for k, v in body_b.items() if k not in VOLATILE
            }, name
        else:
            assert set(body_a) >= {"detail"}, name
            assert body_a == body_b, name
        assert a.headers["Content-Type"] == "application/json", name
        for header in ("WWW-Authenticate", "Retry-After"):
            assert a.headers.get(header) == b.headers.get(header), (name, header)
        assert a.headers["X-Request-ID"], name
        statuses[name] = a.status_code

    assert statuses == {
        "allowed": 200,
        "developer may check": 200,
        "no credentials": 401,
        "bearer is not accepted here": 401,
        "malformed key": 401,
        "unknown key": 401,
        "not json": 415,
        "json with charset": 200,
        "empty body": 400,
        "broken json": 400,
        "not an object": 422,
        "missing field": 422,
        "bad agent id": 422,
        "unknown agent": 404,
        "mistyped context": 422,
        "too large": 413,
        "own request id": 200,
    }
    # the hot app answered every check without Quart's request machinery; the other one used it
    assert CHECK not in quart_paths["hot"]
    assert quart_paths["quart"].count(CHECK) == len(statuses)


async def test_request_ids_and_the_log_line(client, tenant, caplog) -> None:
    agent = await register_agent(client, tenant["api_key"])
    body = {"agent_id": agent["id"], "action": "files.read", "resource": "r"}
    with caplog.at_level(logging.INFO, logger="agentgov.http"):
        kept = await client.post(CHECK, json=body, headers={**key(tenant["api_key"]), "X-Request-ID": "trace-42"})
        made = await client.post(CHECK, json=body, headers={**key(tenant["api_key"]), "X-Request-ID": "bad id!"})
        denied = await client.post(CHECK, json=body)
    assert kept.headers["X-Request-ID"] == "trace-42"
    assert made.headers["X-Request-ID"] != "bad id!" and len(made.headers["X-Request-ID"]) == 32
    assert denied.status_code == 401 and denied.headers["X-Request-ID"]
    lines = [r for r in caplog.records if r.getMessage() == "request" and r.fields["path"] == CHECK]
    assert [(r.fields["request_id"], r.fields["status"]) for r in lines] == [
        ("trace-42", 200),
        (made.headers["X-Request-ID"], 200),
        (denied.headers["X-Request-ID"], 401),
    ]


async def test_other_methods_go_to_quart(client, tenant) -> None:
    response = await client.patch(CHECK, headers=key(tenant["api_key"]))
    assert response.status_code == 405
    assert "POST" in response.headers["Allow"]
    assert (await response.get_json())["detail"] == "Method not allowed"


class _Asgi:
    """Drive the app's ASGI callable directly: the body in the given pieces, then what `after` says."""

    def __init__(self, pieces: list[bytes], after: str = "wait") -> None:
        self.incoming: list[dict[str, Any]] = [
            {"type": "http.request", "body": p, "more_body": i < len(pieces) - 1} for i, p in enumerate(pieces)
        ]
        if after == "disconnect":
            self.incoming[-1]["more_body"] = True
            self.incoming.append({"type": "http.disconnect"})
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> dict[str, Any]:
        if self.incoming:
            return self.incoming.pop(0)
        await trio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def answer(self) -> tuple[int, dict[str, Any]]:
        start, body = self.sent
        return start["status"], json.loads(body["body"])


def _scope(api_key: str) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": CHECK,
        "raw_path": CHECK.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"content-type", b"application/json"), (b"x-api-key", api_key.encode())],
        "client": ("127.0.0.1", 5000),
        "server": ("127.0.0.1", 8000),
        "extensions": {},
    }


async def test_a_body_in_pieces_and_the_size_limit(app, client, tenant) -> None:
    agent = await register_agent(client, tenant["api_key"])
    raw = json.dumps({"agent_id": agent["id"], "action": "files.read", "resource": "r"}).encode()
    pieces = _Asgi([raw[:10], raw[10:30], raw[30:]])
    await app.asgi_app(_scope(tenant["api_key"]), pieces.receive, pieces.send)
    status, body = pieces.answer()
    assert status == 200 and body["allowed"] is False and body["default_applied"] is True

    chunk = b" " * (256 * 1024)
    too_big = _Asgi([b"{", chunk, chunk, chunk, chunk, b"}"])  # no Content-Length: counted as it arrives
    await app.asgi_app(_scope(tenant["api_key"]), too_big.receive, too_big.send)
    assert too_big.answer() == (413, {"detail": "Request body too large"})


async def test_a_client_that_leaves_mid_body_gets_nothing_and_nothing_is_recorded(app, client, tenant) -> None:
    agent = await register_agent(client, tenant["api_key"])
    raw = json.dumps({"agent_id": agent["id"], "action": "files.read", "resource": "r"}).encode()
    gone = _Asgi([raw[:20]], after="disconnect")
    await app.asgi_app(_scope(tenant["api_key"]), gone.receive, gone.send)
    assert gone.sent == []
    stayed = _Asgi([raw])
    await app.asgi_app(_scope(tenant["api_key"]), stayed.receive, stayed.send)
    assert stayed.answer()[0] == 200
    await flush_audit(app.extensions["agentgov"], tenant["id"])
    response = await client.get(f"{API}/audit?action=files.read", headers=key(tenant["api_key"]))
    assert (await response.get_json())["total"] == 1  # only the check that was answered


async def test_keep_alive_after_an_early_answer_through_hypercorn(database_url: str) -> None:
    """A 401 answered before the body was read leaves the connection usable for the next request."""
    from tests.support.app import ADMIN_KEY

    async with live_server(settings_for(database_url)) as (http, _running):
        tenant = (await http.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})).json()
        api_key = tenant["api_key"]
        agent = (
            await http.post(f"{API}/agents/register", json={"name": "bot", "type": "llm"}, headers=key(api_key))
        ).json()
        body = {"agent_id": agent["id"], "action": "files.read", "resource": "r", "context": {"pad": "x" * 50_000}}
        for _ in range(3):
            refused = await http.post(CHECK, json=body, headers=key("nonsense"))
            assert refused.status_code == 401 and refused.json() == {"detail": "Invalid API key"}
            answered = await http.post(CHECK, json=body, headers=key(api_key))
            assert answered.status_code == 200 and answered.json()["default_applied"] is True
