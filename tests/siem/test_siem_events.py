"""Which requests record which SIEM events (those that are not audit entries): approvals and their outcome,
anomaly reports, password and single sign-on failures, and changes to users, API keys and tenants — each with
its tenant, a stable event id and the request id. The destination is unreachable, so the events stay in the
outbox, where they are read back. Both backends."""

from __future__ import annotations

from agentgov.siem.outbox import Flush, outbox_writer
from agentgov.storage.siem import SiemRepo
from tests.policies.helpers import register_agent
from tests.siem.helpers import ADMIN, API, PASSWORD, closed_port, siem_app


async def test_requests_record_their_events(database_url: str) -> None:
    async with siem_app(database_url, transport="syslog-tcp", host="127.0.0.1", port=closed_port()) as app:
        client = app.test_client()
        svc = app.extensions["agentgov"]
        created = await client.post(
            f"{API}/tenants",
            json={"name": "Acme", "admin_email": "admin@acme.example", "admin_password": PASSWORD},
            headers={**ADMIN, "X-Request-ID": "req-tenant"},
        )
        tenant = await created.get_json()
        key = {"X-API-Key": tenant["api_key"]}
        login = await client.post(f"{API}/auth/login", json={"email": "admin@acme.example", "password": PASSWORD})
        admin = {"Authorization": f"Bearer {(await login.get_json())['access_token']}"}

        user = await (
            await client.post(
                f"{API}/users",
                json={"email": "dev@acme.example", "password": PASSWORD, "role": "Developer"},
                headers={**admin, "X-Request-ID": "req-user"},
            )
        ).get_json()
        assert (
            await client.put(f"{API}/users/{user['id']}/role", json={"role": "Admin"}, headers=admin)
        ).status_code == 200
        assert (await client.post(f"{API}/users/{user['id']}/block", headers=admin)).status_code == 200
        assert (await client.delete(f"{API}/users/{user['id']}", headers=admin)).status_code == 204
        made_key = await (await client.post(f"{API}/api-keys", json={"name": "ci"}, headers=admin)).get_json()
        assert (await client.delete(f"{API}/api-keys/{made_key['id']}", headers=admin)).status_code == 204

        bad = await client.post(
            f"{API}/auth/login",
            json={"email": "admin@acme.example", "password": "not-the-password"},
            headers={"X-Request-ID": "req-badlogin"},
        )
        assert bad.status_code == 401
        sso = await client.post(f"{API}/auth/sso/exchange", json={"code": "no-such-code-0123456789"})
        assert 400 <= sso.status_code < 500

        agent = await register_agent(client, tenant["api_key"])
        approval = await (
            await client.post(
                f"{API}/hitl/request",
                json={"agent_id": agent["id"], "action": "payments.transfer", "resource": "acct:1", "reason": "big"},
                headers={**key, "X-Request-ID": "req-approval"},
            )
        ).get_json()
        decided = await client.post(
            f"{API}/hitl/reject/{approval['id']}", json={"comment": "no"}, headers={**key, "X-Request-ID": "req-decide"}
        )
        assert decided.status_code == 200
        report = await client.post(
            f"{API}/anomalies/report",
            json={"agent_id": agent["id"], "description": "odd burst", "severity": "high"},
            headers={**key, "X-Request-ID": "req-anomaly"},
        )
        assert report.status_code == 201
        report_id = (await report.get_json())["id"]

        await outbox_writer(svc).ask(Flush())
        events = await SiemRepo(svc.db).queued(100)
        by_name = {e.name: e for e in events}
        expected = {
            "tenant.created",
            "user.created",
            "user.role_changed",
            "user.blocked",
            "user.deleted",
            "api_key.created",
            "api_key.revoked",
            "auth.login_failed",
            "auth.sso_failed",
            "approval.requested",
            "approval.rejected",
            "anomaly.detected",
        }
        assert expected <= set(by_name), expected - set(by_name)
        assert len({e.event_id for e in events}) == len(events)
        for name in expected - {"auth.sso_failed"}:
            assert by_name[name].tenant_id == tenant["id"], name
        assert by_name["auth.sso_failed"].tenant_id == ""
        assert by_name["tenant.created"].request_id == "req-tenant"
        assert by_name["user.created"].request_id == "req-user" and by_name["user.created"].severity == 4
        assert by_name["user.role_changed"].details["role"] == "Admin" and by_name["user.role_changed"].severity == 6
        assert by_name["auth.login_failed"].request_id == "req-badlogin"
        assert by_name["auth.login_failed"].details["reason"] == "invalid credentials"
        assert by_name["approval.requested"].request_id == "req-approval"
        assert by_name["approval.rejected"].request_id == "req-decide"
        assert by_name["approval.rejected"].details["comment"] == "no"
        assert by_name["anomaly.detected"].event_id == report_id
        assert by_name["anomaly.detected"].request_id == "req-anomaly" and by_name["anomaly.detected"].severity == 8
        assert all(e.actor for e in events if e.name.startswith(("user.", "api_key.")))


async def test_nothing_is_recorded_while_forwarding_is_off(database_url: str) -> None:
    async with siem_app(database_url) as app:
        client = app.test_client()
        svc = app.extensions["agentgov"]
        assert (await client.post(f"{API}/tenants", json={"name": "Acme"}, headers=ADMIN)).status_code == 201
        assert (
            await client.post(f"{API}/auth/login", json={"email": "x@y.example", "password": "nope"})
        ).status_code == 401
        assert await SiemRepo(svc.db).queued(10) == []
        state = await SiemRepo(svc.db).state()
        assert state.outbox_depth == 0 and state.started_at is None
