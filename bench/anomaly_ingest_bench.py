"""What anomaly detection costs the hot paths, measured against the same service without it, in one run.

`python bench/anomaly_ingest_bench.py [--seconds 5] [--rounds 3] [--database-url URL]`

1. `POST /audit/log` throughput of a tenant whose model is active (every entry scored at ingest, verdicts
   written back) against a tenant without a model, in interleaved rounds (wrk, 8 connections).
2. `POST /policies/check` throughput and latency while trainings run back to back (each fit in a worker
   process) against the same checks with no training, in interleaved rounds: the event loop stays responsive.
3. Time from an entry being accepted to its verdict being readable (`GET /audit/{id}`), over 50 entries.
"""

from __future__ import annotations

import argparse
import random
import statistics
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from harness import ADMIN_KEY, Result, agentgov_server, wrk

TASKS = [["search_files", "read_file", "summarise"], ["list_invoices", "read_invoice", "send_email"]]


def history(agent_id: str, days: int = 14) -> list[dict[str, Any]]:
    rng = random.Random(1)
    out, start = [], datetime(2026, 5, 4, tzinfo=UTC)
    for day in range(days):
        for session in range(6):
            at = start + timedelta(days=day, hours=8 + session, minutes=rng.randint(0, 40))
            for tool in rng.choice(TASKS):
                at += timedelta(seconds=rng.uniform(3, 15))
                out.append(
                    {"agent_id": agent_id, "action": tool, "resource": f"res:{tool}", "timestamp": at.isoformat()}
                )
    return out


def tenant_with_agent(http: httpx.Client, name: str) -> tuple[dict[str, str], str]:
    tenant = http.post("/api/v1/tenants", json={"name": name}, headers={"X-Admin-Key": ADMIN_KEY}).json()
    headers = {"X-API-Key": tenant["api_key"]}
    agent = http.post("/api/v1/agents/register", json={"name": "bot", "type": "tool"}, headers=headers).json()
    return headers, agent["id"]


def train(http: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    accepted = http.post("/api/v1/anomalies/detector/train", json={}, headers=headers).json()
    while (task := http.get(accepted["status_url"], headers=headers).json())["status"] in ("queued", "running"):
        time.sleep(0.02)
    return task


def log_script(agent_id: str) -> str:
    body = '{"agent_id":"%s","action":"read_file","resource":"res:read_file"}' % agent_id  # noqa: UP031
    return f"wrk.method = \"POST\"\nwrk.body = '{body}'\n"


def check_script(agent_id: str) -> str:
    body = '{"agent_id":"%s","action":"read_file","resource":"res:read_file"}' % agent_id  # noqa: UP031
    return f"wrk.method = \"POST\"\nwrk.body = '{body}'\n"


def median(results: list[Result]) -> Result:
    ordered = sorted(results, key=lambda r: r.requests_per_s)
    return ordered[len(ordered) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    env = {"DATABASE_URL": args.database_url} if args.database_url else {}
    with agentgov_server(ANOMALY_AUTO_TRAIN="off", **env) as base, httpx.Client(base_url=base, timeout=60) as http:
        plain_headers, plain_agent = tenant_with_agent(http, "without-model")
        model_headers, model_agent = tenant_with_agent(http, "with-model")
        for entry in history(model_agent):
            http.post("/api/v1/audit/log", json=entry, headers=model_headers).raise_for_status()
        task = train(http, model_headers)
        assert task["status"] == "succeeded", task

        json_headers = {"Content-Type": "application/json"}
        without, with_model = [], []
        for _ in range(args.rounds):
            without.append(
                wrk(
                    "POST /audit/log, no model",
                    base + "/api/v1/audit/log",
                    connections=8,
                    seconds=args.seconds,
                    script=log_script(plain_agent),
                    headers={**plain_headers, **json_headers},
                )
            )
            with_model.append(
                wrk(
                    "POST /audit/log, model active",
                    base + "/api/v1/audit/log",
                    connections=8,
                    seconds=args.seconds,
                    script=log_script(model_agent),
                    headers={**model_headers, **json_headers},
                )
            )
        a, b = median(without), median(with_model)
        print(f"audit log ingest, {args.rounds} interleaved rounds of {args.seconds}s, 8 connections; medians:")
        print(a.row())
        print(b.row(a))

        idle, training = [], []
        trainings = 0
        for _ in range(args.rounds):
            idle.append(
                wrk(
                    "POST /policies/check, no training",
                    base + "/api/v1/policies/check",
                    connections=8,
                    seconds=args.seconds,
                    script=check_script(model_agent),
                    headers={**model_headers, **json_headers},
                )
            )
            stop = threading.Event()

            def keep_training(stop: threading.Event = stop) -> None:
                nonlocal trainings
                with httpx.Client(base_url=base, timeout=60) as own:
                    while not stop.is_set():
                        train(own, model_headers)
                        trainings += 1

            worker = threading.Thread(target=keep_training)
            worker.start()
            training.append(
                wrk(
                    "POST /policies/check, training meanwhile",
                    base + "/api/v1/policies/check",
                    connections=8,
                    seconds=args.seconds,
                    script=check_script(model_agent),
                    headers={**model_headers, **json_headers},
                )
            )
            stop.set()
            worker.join()
        a, b = median(idle), median(training)
        print(f"policy checks while trainings run back to back ({trainings} trainings completed meanwhile):")
        print(a.row())
        print(b.row(a))

        delays = []
        for i in range(50):
            body = {
                "agent_id": model_agent,
                "action": "read_file",
                "resource": "res:read_file",
                "timestamp": (datetime(2026, 5, 25, 9, tzinfo=UTC) + timedelta(seconds=7 * i)).isoformat(),
            }
            started = time.perf_counter()
            entry = http.post("/api/v1/audit/log", json=body, headers=model_headers).json()
            while http.get(f"/api/v1/audit/{entry['id']}", headers=model_headers).json()["anomaly"] is None:
                time.sleep(0.005)
            delays.append((time.perf_counter() - started) * 1000)
        delays.sort()
        print(
            f"accepted -> verdict readable: median {statistics.median(delays):.0f} ms, "
            f"p95 {delays[int(len(delays) * 0.95)]:.0f} ms, max {delays[-1]:.0f} ms"
        )


if __name__ == "__main__":
    main()
