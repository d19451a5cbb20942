"""SIEM forwarding to a Splunk HTTP Event Collector emulator that answers as Splunk documents: token auth,
the batch as concatenated event objects, Splunk's error codes surfaced in `POST /siem/test`, and an outage
(503 busy, then connection refused) that loses nothing."""

from __future__ import annotations

from tests.siem.helpers import ADMIN, API, drained, produce, siem_app, status
from tests.support.polling import wait_until
from tests.support.splunk_hec import splunk_hec_server


def _of(hec, tenant_id: str) -> list[dict]:
    return [e for e in hec.events if e.get("fields", {}).get("tenant_id") == tenant_id]


async def _until(predicate, seconds: float = 15) -> None:
    await wait_until(predicate, within=seconds)


async def test_events_reach_the_collector_with_the_token(database_url: str) -> None:
    async with (
        splunk_hec_server(token="hec-token-1") as hec,
        siem_app(
            database_url, transport="splunk-hec", url=hec.url, token="hec-token-1", format="json", batch_size=50
        ) as app,
    ):
        client = app.test_client()
        made = await produce(client, "hec")
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        assert response.status_code == 200, await response.get_json()

        def arrived() -> bool:
            seen = {(e["event"]["request_id"], e["event"]["name"]) for e in _of(hec, made.tenant_id)}
            return all(pair in seen for pair in made.expected.items())

        await _until(arrived)
        assert all(x.headers["authorization"] == "Splunk hec-token-1" for x in hec.exchanges)
        event = next(e for e in _of(hec, made.tenant_id) if e["event"]["name"] == "policy.denied")
        assert event["sourcetype"] == "agentgov:json" and event["source"] == "agentgov"
        assert event["event"]["tenant_id"] == made.tenant_id and isinstance(event["time"], float)
        assert any(e["event"]["name"] == "siem.test" for e in hec.events)
        report = await status(client)
        assert report["destination"] == hec.url and report["last_error"] is None


async def test_cef_bodies_are_sent_as_event_strings(database_url: str) -> None:
    async with (
        splunk_hec_server(token="hec-token-2") as hec,
        siem_app(database_url, transport="splunk-hec", url=hec.url, token="hec-token-2", format="cef") as app,
    ):
        client = app.test_client()
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        assert response.status_code == 200
        test = next(e for e in hec.events if "siem.test" in str(e["event"]))
        assert test["event"].startswith("CEF:0|agentgov|agentgov|") and test["sourcetype"] == "agentgov:cef"


async def test_a_wrong_token_is_a_502_naming_splunks_answer(database_url: str) -> None:
    async with (
        splunk_hec_server(token="the-right-token") as hec,
        siem_app(database_url, transport="splunk-hec", url=hec.url, token="a-wrong-token") as app,
    ):
        client = app.test_client()
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        body = await response.get_json()
        assert response.status_code == 502
        assert "HTTP 403, code 4: Invalid token" in body["detail"]
        assert "a-wrong-token" not in body["detail"]
        report = await status(client)
        assert "code 4" in report["last_error"] and "a-wrong-token" not in str(report)
        assert hec.events == []


async def test_collector_outage_loses_nothing(database_url: str) -> None:
    async with (
        splunk_hec_server(token="hec-token-3") as hec,
        siem_app(database_url, transport="splunk-hec", url=hec.url, token="hec-token-3", format="json") as app,
    ):
        client = app.test_client()
        hec.available = False  # Splunk answers 503 "Server is busy" (code 9)
        busy = await produce(client, "busy")
        response = await client.post(f"{API}/siem/test", headers=ADMIN)
        assert response.status_code == 502 and "code 9" in (await response.get_json())["detail"]
        await hec.stop()  # then nothing listens at all
        down = await produce(client, "down")
        report = await status(client)
        assert report["outbox_depth"] > 0 and report["failed"] > 0

        hec.available = True
        await hec.start()
        for made in (busy, down):

            def arrived(made=made) -> bool:
                seen = {(e["event"]["request_id"], e["event"]["name"]) for e in _of(hec, made.tenant_id)}
                return all(pair in seen for pair in made.expected.items())

            await _until(arrived, 20)
        await wait_until(lambda: drained(client), within=20)
        names = {e["event"]["name"] for e in hec.events}
        assert {"tenant.created", "audit.action", "policy.denied", "auth.login_failed"} <= names
