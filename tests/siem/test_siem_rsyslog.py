"""SIEM forwarding to a real rsyslog (started by the tests on free loopback ports): every transport and
format, the events each request causes with its tenant, event id and request id, an outage of the receiver
(events queue, then all arrive), and a restart of the service with events pending. Both backends."""

from __future__ import annotations

import json

import pytest

from tests.siem.helpers import ADMIN, API, drained, parse_syslog, produce, siem_app, status
from tests.support.polling import wait_until
from tests.support.rsyslog import RsyslogReceiver, rsyslogd_path, skip_reason

pytestmark = pytest.mark.skipif(rsyslogd_path() is None, reason=skip_reason)


def _settings(receiver: RsyslogReceiver, fmt: str) -> dict:
    transport = {"udp": "syslog-udp", "tcp": "syslog-tcp", "tls": "syslog-tls"}[receiver.transport]
    extra = {"tls_ca": receiver.ca_file, "host": "localhost"} if receiver.transport == "tls" else {}
    return {"transport": transport, "host": receiver.host, "port": receiver.port, "format": fmt, **extra}


async def _failed_once(client) -> bool:
    return (await status(client))["failed"] > 0


def _parsed(lines: list[str]) -> list[dict[str, str]]:
    return [parse_syslog(line) for line in lines]


def _has(expected: dict[str, str], tenant_id: str):
    def done(lines: list[str]) -> bool:
        seen = {(m.get("requestId"), m["msgid"]) for m in _parsed(lines) if m.get("tenantId") == tenant_id}
        return all((rid, name) in seen for rid, name in expected.items())

    return done


@pytest.mark.parametrize(("transport", "fmt"), [("udp", "cef"), ("tcp", "leef"), ("tls", "json")])
async def test_events_reach_rsyslog(database_url: str, tmp_path, transport: str, fmt: str) -> None:
    receiver = RsyslogReceiver(tmp_path / "rsyslog", transport)  # type: ignore[arg-type]
    async with receiver, siem_app(database_url, **_settings(receiver, fmt)) as app:
        client = app.test_client()
        made = await produce(client, "r1")
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        assert response.status_code == 200, await response.get_json()
        test = await response.get_json()
        expected = _has(made.expected, made.tenant_id)

        def complete(lines: list[str]) -> bool:
            return expected(lines) and any(f'eventId="{test["event_id"]}"' in line for line in lines)

        lines = await receiver.await_messages(complete, timeout=15)
        messages = _parsed(lines)
        mine = [m for m in messages if m.get("tenantId") == made.tenant_id]
        names = {m["msgid"] for m in mine}
        assert {"tenant.created", "audit.action", "policy.allowed", "policy.denied"} <= names
        assert any(m["msgid"] == "siem.test" and m["eventId"] == test["event_id"] for m in messages)
        assert any(m["msgid"] == "auth.login_failed" for m in messages)
        denied = next(m for m in mine if m["msgid"] == "policy.denied")
        assert int(denied["pri"]) == 13 * 8 + 3  # log audit, error
        body = denied["body"]
        if fmt == "cef":
            assert body.startswith("CEF:0|agentgov|agentgov|") and "|policy.denied|" in body
            assert f"cs1={made.tenant_id}" in body and f"externalId={denied['eventId']}" in body
        elif fmt == "leef":
            assert body.startswith("LEEF:2.0|agentgov|agentgov|") and "|policy.denied|x09|" in body
            assert f"tenantId={made.tenant_id}" in body and f"eventId={denied['eventId']}" in body
        else:
            data = json.loads(body)
            assert data["name"] == "policy.denied" and data["tenant_id"] == made.tenant_id
            assert data["event_id"] == denied["eventId"] and data["request_id"] == "r1-sql.drop_table"
            assert data["details"]["decision"]["allowed"] is False
        ids = [m["eventId"] for m in mine]
        assert len(ids) == len(set(ids))  # no receiver outage here: each event once
        report = await status(client)
        assert report["sent"] >= len(mine) and report["last_error"] is None and report["outbox_depth"] == 0


async def test_receiver_outage_loses_nothing(database_url: str, tmp_path) -> None:
    receiver = RsyslogReceiver(tmp_path / "rsyslog", "tcp")
    async with receiver, siem_app(database_url, **_settings(receiver, "cef")) as app:
        client = app.test_client()
        before = await produce(client, "before")
        await receiver.await_messages(_has(before.expected, before.tenant_id), timeout=15)

        await receiver.astop()
        during = [await produce(client, f"down{n}") for n in range(3)]  # every request still succeeds
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        assert response.status_code == 502
        report = await status(client)
        assert report["outbox_depth"] > 0 and report["last_error"] and report["failed"] > 0

        await receiver.arestart_on_same_port()
        for made in during:
            await receiver.await_messages(_has(made.expected, made.tenant_id), timeout=20)
        await wait_until(lambda: drained(client), within=20)
        delivered = {m["eventId"] for m in _parsed(receiver.messages())}
        tenants = {made.tenant_id for made in during}
        created = [m for m in _parsed(receiver.messages()) if m["msgid"] == "tenant.created"]
        assert tenants <= {m["tenantId"] for m in created}
        report = await status(client)
        assert report["sent"] >= len(delivered) and report["last_success_at"] > report["last_error_at"]


async def test_pending_events_are_sent_after_a_restart(tmp_path) -> None:
    database_url = f"sqlite:///{tmp_path / 'siem.db'}"
    receiver = RsyslogReceiver(tmp_path / "rsyslog", "tcp")
    async with siem_app(database_url, **_settings(receiver, "json")) as app:  # receiver not started yet
        client = app.test_client()
        made = await produce(client, "pending")
        await wait_until(lambda: _failed_once(client), within=10)
        assert (await status(client))["outbox_depth"] > 0
    async with receiver, siem_app(database_url, **_settings(receiver, "json")) as app:
        await receiver.await_messages(_has(made.expected, made.tenant_id), timeout=20)
        created = [m for m in _parsed(receiver.messages()) if m["msgid"] == "tenant.created"]
        assert made.tenant_id in {m["tenantId"] for m in created}
        await wait_until(lambda: drained(app.test_client()), within=10)
