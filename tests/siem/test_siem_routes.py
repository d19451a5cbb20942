"""`GET /siem/status` and `POST /siem/test`: who may call them, what they answer with forwarding off, with an
unreachable destination (502, nothing lost, the request that caused an event unaffected) and with a full
outbox (oldest dropped and counted). Both backends."""

from __future__ import annotations

from tests.siem.helpers import ADMIN, API, PASSWORD, closed_port, root_token, siem_app, status


async def test_who_may_call_the_siem_routes(database_url: str) -> None:
    async with siem_app(database_url) as app:
        client = app.test_client()
        created = await client.post(
            f"{API}/tenants",
            json={"name": "Acme", "admin_email": "admin@acme.example", "admin_password": PASSWORD},
            headers=ADMIN,
        )
        tenant = await created.get_json()
        login = await client.post(f"{API}/auth/login", json={"email": "admin@acme.example", "password": PASSWORD})
        admin_jwt = {"Authorization": f"Bearer {(await login.get_json())['access_token']}"}
        for method in ("get", "post"):
            path = f"{API}/siem/{'status' if method == 'get' else 'test'}"
            call = getattr(client, method)
            assert (await call(path)).status_code == 401
            assert (await call(path, headers={"X-Admin-Key": "wrong-admin-key-0000"})).status_code == 401
            for denied in ({"X-API-Key": tenant["api_key"]}, admin_jwt):
                response = await call(path, headers=denied)
                assert response.status_code in (401, 403), (path, denied)
                assert "detail" in await response.get_json()
            assert (await call(path, headers=admin_jwt)).status_code == 403
        root = await root_token(client)
        for headers in (ADMIN, root):
            response = await client.get(f"{API}/siem/status", headers=headers)
            body = await response.get_json()
            assert response.status_code == 200 and body["enabled"] is False and body["transport"] is None
            assert body["sent"] == body["failed"] == body["dropped"] == body["outbox_depth"] == 0
            response = await client.post(f"{API}/siem/test", headers=headers)
            assert response.status_code == 409 and "SIEM_TRANSPORT" in (await response.get_json())["detail"]
        document = await (await client.get("/openapi.json")).get_json()
        assert {"409", "502"} <= set(document["paths"][f"{API}/siem/test"]["post"]["responses"])  # as answered


async def test_unreachable_destination_is_a_502_and_events_wait_in_the_outbox(database_url: str) -> None:
    port = closed_port()
    async with siem_app(database_url, transport="syslog-tcp", host="127.0.0.1", port=port, format="json") as app:
        client = app.test_client()
        created = await client.post(f"{API}/tenants", json={"name": "Acme"}, headers=ADMIN)
        assert created.status_code == 201  # the event it caused cannot be delivered: the request is unaffected
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        body = await response.get_json()
        assert response.status_code == 502
        assert f"syslog-tcp 127.0.0.1:{port}" in body["detail"] and "refused" in body["detail"].lower()
        report = await status(client)
        assert report["enabled"] and report["transport"] == "syslog-tcp" and report["format"] == "json"
        assert report["destination"] == f"127.0.0.1:{port}"
        assert report["queued_events"] == 1 and report["outbox_depth"] >= 1
        assert report["failed"] >= 1 and report["sent"] == 0 and report["dropped"] == 0
        assert "refused" in report["last_error"].lower() and report["last_error_at"]
        assert report["last_success_at"] is None


async def test_the_outbox_is_bounded_oldest_events_dropped_and_counted(database_url: str) -> None:
    port = closed_port()
    async with siem_app(database_url, transport="syslog-tcp", host="127.0.0.1", port=port, outbox_max=3) as app:
        client = app.test_client()
        svc = app.extensions["agentgov"]
        from agentgov.siem.outbox import Flush, outbox_writer
        from agentgov.storage.siem import SiemRepo

        for n in range(5):
            assert (await client.post(f"{API}/tenants", json={"name": f"T{n}"}, headers=ADMIN)).status_code == 201
        await outbox_writer(svc).ask(Flush())  # answered once everything queued before it is stored
        report = await status(client)
        assert report["queued_events"] == 3 and report["dropped"] == 2
        queued = await SiemRepo(svc.db).queued(10)
        assert [e.summary for e in queued] == ["tenant 'T2' created", "tenant 'T3' created", "tenant 'T4' created"]
