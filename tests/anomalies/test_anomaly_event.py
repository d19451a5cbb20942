"""`anomaly.detected` reaches the tenant's WebSocket subscribers allowed to read anomalies (real server, real
WebSocket clients), when the detector flags a logged action."""

from __future__ import annotations

from datetime import UTC, datetime

import trio

from tests.anomalies.helpers import API, history, key
from tests.notifications.test_websocket import connect, new_tenant, next_event, user_token
from tests.notifications.test_websocket import server as server  # the fixture
from tests.support.polling import wait_until

WAIT = 60


async def test_anomaly_detected_reaches_analysts_only(server) -> None:
    http = server.http
    tenant = await new_tenant(server, "Acme")
    api_key = tenant["api_key"]
    response = await http.post(f"{API}/agents/register", json={"name": "bot", "type": "tool"}, headers=key(api_key))
    agent_id = response.json()["id"]
    for entry in history(agent_id):
        assert (await http.post(f"{API}/audit/log", json=entry, headers=key(api_key))).status_code == 201
    accepted = (await http.post(f"{API}/anomalies/detector/train", json={}, headers=key(api_key))).json()

    async def trained() -> bool:
        return (await http.get(accepted["status_url"], headers=key(api_key))).json()["status"] == "succeeded"

    await wait_until(trained, within=WAIT)

    analyst = await user_token(server, tenant["id"], "Security Analyst")
    developer = await user_token(server, tenant["id"], "Developer")
    async with connect(server.ws_url(analyst)) as ws_analyst, connect(server.ws_url(developer)) as ws_developer:
        at = datetime(2026, 5, 25, 10, 0, tzinfo=UTC).isoformat()
        odd = {"agent_id": agent_id, "action": "drop_database", "resource": "prod", "timestamp": at}
        entry = (await http.post(f"{API}/audit/log", json=odd, headers=key(api_key))).json()
        envelope = await next_event(ws_analyst)
        assert envelope["event"] == "anomaly.detected"
        report = envelope["data"]
        assert report["audit_log_id"] == entry["id"] and report["type"] == "new_tool" and report["source"] == "detector"
        assert "tool drop_database never used by this agent" in report["reasons"]
        # the developer's connection got nothing but status frames meanwhile
        with trio.move_on_after(0.5):
            other = await next_event(ws_developer)
            raise AssertionError(f"a Developer received {other['event']}")
