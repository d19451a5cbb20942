"""Through the HTTP layer, a failing statement is a 500 that quotes the request id and is logged with its
traceback, and a database that cannot serve the call is a 503, the same on SQLite and PostgreSQL.

The failing statement is real: the test drops a table the route reads (as a missing migration would).
The route reads storage directly, without an actor in between."""

from __future__ import annotations

import logging
import uuid

from agentgov.storage.database import Connection


async def test_a_broken_statement_is_a_500_on_every_backend(app, client, tenant, caplog) -> None:
    caplog.set_level(logging.ERROR, logger="agentgov.http")
    svc = app.extensions["agentgov"]

    def drop(conn: Connection) -> None:
        conn.execute("DROP TABLE policy_versions")

    await svc.db.write(drop)
    response = await client.get(f"/api/v1/policies/{uuid.uuid4()}/versions", headers={"X-API-Key": tenant["api_key"]})
    assert response.status_code == 500
    body = await response.get_json()
    assert "quote request id" in body["detail"]
    assert response.headers["X-Request-ID"] in body["detail"]
    assert any(r.exc_info and "QueryError" in repr(r.exc_info[1]) for r in caplog.records)


async def test_a_closed_database_is_a_503_on_every_backend(app, client, tenant) -> None:
    svc = app.extensions["agentgov"]
    await svc.db.close()
    response = await client.get(f"/api/v1/policies/{uuid.uuid4()}/versions", headers={"X-API-Key": tenant["api_key"]})
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "5"
    assert "not reachable" in (await response.get_json())["detail"]
