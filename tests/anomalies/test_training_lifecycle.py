"""The training lifecycle over HTTP: cancel kills the worker process, one training at a time (also across
services sharing the database), a task of a stopped process is failed at start, shutdown cancels training,
automatic training, and the 409s."""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any

import pytest
import trio

from agentgov.config import DetectorSettings
from agentgov.detection import anomaly as anomaly_module
from agentgov.storage.detectors import DetectorRepo
from tests.anomalies.helpers import API, backfill, key, register, train_and_wait
from tests.support.app import ADMIN_KEY, app_for, live_server, settings_for
from tests.support.polling import wait_until
from tests.support.slow_fit import process_gone, slow_fit

WAIT = 30


@pytest.fixture
def slow(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Path]:
    """Make the anomaly fit wait for a release file (it records its pid first)."""
    paths = {"pid": tmp_path / "fit.pid", "release": tmp_path / "fit.release"}
    fit = functools.partial(slow_fit, str(paths["pid"]), str(paths["release"]))
    monkeypatch.setattr(anomaly_module.ANOMALY, "fit_function", lambda: fit)
    return paths


async def fit_pid(paths: dict[str, Path]) -> int:
    await wait_until(lambda: paths["pid"].exists() and bool(paths["pid"].read_text()), within=WAIT)
    return int(paths["pid"].read_text())


@pytest.fixture
async def history(client, tenant) -> dict[str, Any]:
    agents = [await register(client, tenant["api_key"], name) for name in ("billing-bot", "support-bot")]
    await backfill(client, tenant["api_key"], [a["id"] for a in agents])
    return {"api_key": tenant["api_key"], "agents": agents}


async def start(client, api_key: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    response = await client.post(f"{API}/anomalies/detector/train", json=body or {}, headers=key(api_key))
    answer = await response.get_json()
    assert response.status_code == 202, answer
    assert response.headers["Location"] == answer["status_url"]
    return answer


async def test_cancel_kills_the_worker_and_keeps_the_active_version(client, history, slow) -> None:
    api_key = history["api_key"]
    slow["release"].write_text("go")  # the first training runs through
    first = await train_and_wait(client, api_key)
    slow["release"].unlink()
    slow["pid"].unlink()
    task = await start(client, api_key)
    pid = await fit_pid(slow)
    running = await (await client.get(task["status_url"], headers=key(api_key))).get_json()
    assert running["status"] == "running" and running["phase"] == "fitting" and 0 < running["progress"] < 1
    status = await (await client.get(f"{API}/anomalies/detector/status", headers=key(api_key))).get_json()
    assert status["running_task"]["task_id"] == task["task_id"] and status["active_version"] == first["version"]

    response = await client.delete(f"{API}/anomalies/detector/cancel", headers=key(api_key))
    cancelled = await response.get_json()
    assert response.status_code == 200, cancelled
    assert cancelled["task_id"] == task["task_id"] and cancelled["status"] == "cancelled"
    await wait_until(lambda: process_gone(pid), within=1.0, every=0.01)  # the worker is gone within a second
    versions = await (await client.get(f"{API}/anomalies/detector/versions", headers=key(api_key))).get_json()
    assert [v["version"] for v in versions["items"]] == [first["version"]]  # nothing written
    status = await (await client.get(f"{API}/anomalies/detector/status", headers=key(api_key))).get_json()
    assert status["active_version"] == first["version"] and status["running_task"] is None
    response = await client.delete(f"{API}/anomalies/detector/cancel", headers=key(api_key))
    assert response.status_code == 409 and "no training is running" in (await response.get_json())["detail"]


async def test_one_training_at_a_time_also_across_services(client, history, slow, database_url) -> None:
    api_key = history["api_key"]
    task = await start(client, api_key)
    await fit_pid(slow)
    response = await client.post(f"{API}/anomalies/detector/train", json={}, headers=key(api_key))
    answer = await response.get_json()
    assert response.status_code == 409 and task["task_id"] in answer["detail"] and answer["task_id"] == task["task_id"]
    async with app_for(settings_for(database_url)) as other:  # another service on the same database
        response = await other.test_client().post(f"{API}/anomalies/detector/train", json={}, headers=key(api_key))
        assert response.status_code == 409 and task["task_id"] in (await response.get_json())["detail"]
    slow["release"].write_text("go")

    async def finished() -> bool:
        done.update(await (await client.get(task["status_url"], headers=key(api_key))).get_json())
        return done["status"] != "running"

    done: dict[str, Any] = {}
    await wait_until(finished, within=WAIT)
    assert done["status"] == "succeeded" and done["version"] == 1


async def test_training_without_history_fails_with_the_reason(client, tenant) -> None:
    await register(client, tenant["api_key"], "idle-bot")
    task = await train_and_wait(client, tenant["api_key"])
    assert task["status"] == "failed" and "no logged actions" in task["error"]
    status = await (await client.get(f"{API}/anomalies/detector/status", headers=key(tenant["api_key"]))).get_json()
    assert status["active_version"] is None and status["last_task"]["status"] == "failed"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"target_alert_rate": 0.9}, "target_alert_rate"),
        ({"target_alert_rate": "high"}, "target_alert_rate"),
        ({"window_days": -1}, "window_days"),
        ({"min_events_per_agent": 1}, "min_events_per_agent"),
        ({"unknown": 1}, "unknown"),
    ],
)
async def test_bad_training_parameters_are_422(client, tenant, body: dict[str, Any], field: str) -> None:
    response = await client.post(f"{API}/anomalies/detector/train", json=body, headers=key(tenant["api_key"]))
    answer = await response.get_json()
    assert response.status_code == 422, answer
    assert field in [e["field"] for e in answer["errors"]]


async def test_unknown_and_foreign_tasks_are_404(client, history, other_tenant) -> None:
    task = await train_and_wait(client, history["api_key"])
    url = f"{API}/anomalies/detector/training-status/{task['task_id']}"
    assert (await client.get(url, headers=key(other_tenant["api_key"]))).status_code == 404
    unknown = f"{API}/anomalies/detector/training-status/00000000-0000-4000-8000-000000000000"
    assert (await client.get(unknown, headers=key(history["api_key"]))).status_code == 404
    malformed = await client.get(f"{API}/anomalies/detector/training-status/nope", headers=key(history["api_key"]))
    assert malformed.status_code == 422
    none_yet = await client.get(f"{API}/anomalies/detector/training/status", headers=key(other_tenant["api_key"]))
    assert none_yet.status_code == 404
    theirs = await client.get(f"{API}/anomalies/detector/versions", headers=key(other_tenant["api_key"]))
    assert (await theirs.get_json())["total"] == 0
    rollback = await client.post(f"{API}/anomalies/detector/rollback/1", headers=key(other_tenant["api_key"]))
    assert rollback.status_code == 404


async def new_tenant(http: Any) -> dict[str, Any]:
    response = await http.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
    assert response.status_code == 201, response.text
    return response.json()


async def test_a_task_of_a_stopped_process_is_failed_at_start(database_url) -> None:
    settings = settings_for(database_url)
    settings = dataclasses.replace(settings, detectors=DetectorSettings(training_lease=0.2))
    async with live_server(settings) as (http, running):
        tenant = await new_tenant(http)
        repo = DetectorRepo(running.services.db, "anomaly")
        task = await repo.create_task(tenant["id"], requested_by="key:x", trigger="manual", params={}, owner="gone")
        await repo.progress(tenant["id"], task.id, phase="fitting", progress=0.2)  # its process then died
    await trio.sleep(0.3)  # past the lease: nobody refreshed the heartbeat
    async with live_server(settings) as (http, _):
        response = await http.get(f"{API}/anomalies/detector/training-status/{task.id}", headers=key(tenant["api_key"]))
        answer = response.json()
        assert answer["status"] == "failed" and "stopped before it finished" in answer["error"]
        response = await http.post(f"{API}/anomalies/detector/train", json={}, headers=key(tenant["api_key"]))
        assert response.status_code == 202  # the lock went with it


async def test_shutdown_cancels_a_running_training(database_url, slow) -> None:
    settings = settings_for(database_url)
    async with live_server(settings) as (http, _):
        tenant = await new_tenant(http)
        response = await http.post(
            f"{API}/agents/register", json={"name": "bot", "type": "tool"}, headers=key(tenant["api_key"])
        )
        agent_id = response.json()["id"]
        await backfill(_Sync(http), tenant["api_key"], [agent_id], days=7)
        response = await http.post(f"{API}/anomalies/detector/train", json={}, headers=key(tenant["api_key"]))
        task = response.json()
        pid = await fit_pid(slow)
    await wait_until(lambda: process_gone(pid), within=1.0, every=0.01)
    async with app_for(settings) as app:
        repo = DetectorRepo(app.extensions["agentgov"].db, "anomaly")
        stored = await repo.get_task(tenant["id"], task["task_id"])
        assert stored is not None and stored.status == "cancelled"
        assert (await repo.state(tenant["id"])).active_version is None


async def test_automatic_training_once_there_is_enough_history(database_url) -> None:
    settings = dataclasses.replace(
        settings_for(database_url), detectors=DetectorSettings(min_history=100, auto_check_seconds=0.2)
    )
    async with app_for(settings) as app:
        client = app.test_client()
        response = await client.post(f"{API}/tenants", json={"name": "Acme"}, headers={"X-Admin-Key": ADMIN_KEY})
        api_key = (await response.get_json())["api_key"]
        agent = await register(client, api_key, "billing-bot")
        await backfill(client, api_key, [agent["id"]])
        with trio.fail_after(WAIT):
            while True:
                response = await client.get(f"{API}/anomalies/detector/training/status", headers=key(api_key))
                task = await response.get_json()
                if response.status_code == 200 and task["status"] == "succeeded":
                    break
                await trio.sleep(0.1)
        assert task["trigger"] == "automatic" and task["requested_by"] == "system:auto-train" and task["version"] == 1


class _Sync:
    """An httpx client shaped like the Quart test client for the helpers (`get_json`, `status_code`)."""

    def __init__(self, http: Any) -> None:
        self._http = http

    async def post(self, url: str, *, json: Any, headers: dict[str, str]) -> Any:
        return _Response(await self._http.post(url, json=json, headers=headers))


class _Response:
    def __init__(self, response: Any) -> None:
        self.status_code = response.status_code
        self._response = response

    async def get_json(self) -> Any:
        return self._response.json()

    async def get_data(self, as_text: bool = False) -> Any:
        return self._response.text
