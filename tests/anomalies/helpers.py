"""Helpers for the anomaly tests: agents, back-filled history over HTTP, training to the end."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import trio

API = "/api/v1"
TASKS = [
    ["search_files", "read_file", "summarise"],
    ["list_invoices", "read_invoice", "send_email"],
    ["search_files", "read_file", "read_file", "send_email"],
]
HISTORY_START = datetime(2026, 5, 4, tzinfo=UTC)  # a Monday


def key(api_key: str) -> dict[str, str]:
    return {"X-API-Key": api_key}


async def register(client: Any, api_key: str, name: str) -> dict[str, Any]:
    response = await client.post(f"{API}/agents/register", json={"name": name, "type": "tool"}, headers=key(api_key))
    assert response.status_code == 201, await response.get_data(as_text=True)
    return await response.get_json()


def history(agent_id: str, *, days: int = 14, seed: int = 1) -> list[dict[str, Any]]:
    """An office-hours agent's actions: four sessions a weekday, each a known task, calls 3-15 s apart."""
    rng = random.Random(seed)
    out = []
    for day in range(days):
        date = HISTORY_START + timedelta(days=day)
        if date.weekday() >= 5:
            continue
        for session in range(4):
            at = date + timedelta(hours=9 + 2 * session, minutes=rng.randint(0, 50))
            for tool in rng.choice(TASKS):
                at += timedelta(seconds=rng.uniform(3, 15))
                out.append(
                    {
                        "agent_id": agent_id,
                        "action": tool,
                        "resource": f"res:{tool}",
                        "input": {"folder": rng.choice(["a", "b"])},
                        "timestamp": at.isoformat(),
                    }
                )
    return out


async def backfill(client: Any, api_key: str, agent_ids: Sequence[str], days: int = 14) -> int:
    """Log each agent's history with its event times; returns how many entries."""
    entries = [e for n, agent_id in enumerate(agent_ids) for e in history(agent_id, days=days, seed=n + 1)]
    for entry in entries:
        response = await client.post(f"{API}/audit/log", json=entry, headers=key(api_key))
        assert response.status_code == 201, await response.get_data(as_text=True)
    return len(entries)


async def train_and_wait(
    client: Any, api_key: str, params: dict[str, Any] | None = None, within: float = 60
) -> dict[str, Any]:
    """Start a training and poll its status until it ends; returns the final task."""
    response = await client.post(f"{API}/anomalies/detector/train", json=params or {}, headers=key(api_key))
    accepted = await response.get_json()
    assert response.status_code == 202, accepted
    with trio.fail_after(within):
        while True:
            response = await client.get(accepted["status_url"], headers=key(api_key))
            task = await response.get_json()
            if task["status"] not in ("queued", "running"):
                return task
            await trio.sleep(0.05)


async def wait_for_scored(client: Any, api_key: str, entry_ids: Sequence[str], within: float = 5.0) -> dict[str, Any]:
    """Each entry's `anomaly`, once every one is scored (fails after `within` seconds)."""
    with trio.fail_after(within):
        while True:
            found = {}
            for entry_id in entry_ids:
                entry = await (await client.get(f"{API}/audit/{entry_id}", headers=key(api_key))).get_json()
                found[entry_id] = entry["anomaly"]
            if all(v is not None for v in found.values()):
                return found
            await trio.sleep(0.05)
