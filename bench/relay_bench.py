"""Notification latency across processes: a denied policy check on process A reaches WebSocket subscribers
connected to process B (relayed through Redis pub/sub), against subscribers connected to A itself, measured in
the same run. Run by hand; prints figures.

    python bench/relay_bench.py [--subscribers 50] [--rounds 30]
        [--database-url postgresql://postgres@127.0.0.1:5432/test] [--redis-url redis://127.0.0.1:6379/0]

Two `python run.py` processes share a fresh PostgreSQL database and a Redis prefix. `--subscribers` trio-
websocket clients connect to each process. Each round sends one check that a forbid policy denies, through
process A, takes `t0` just before sending, and records when each subscriber receives that decision's
`policy.violated`. Latency = receipt time - `t0` (one clock, this process), so it covers the HTTP request,
the decision, the fan-out and, for B's subscribers, the relay through Redis.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import trio
from trio_websocket import open_websocket_url

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

from harness import free_port, wait_http  # noqa: E402
from scale_bench import fresh_database  # noqa: E402

ADMIN_KEY = "relay-bench-admin-key-0123456789"
PASSWORD = "A-long-enough-passphrase-42"
FORBID = '@id("no-drop") @reason("no") forbid (principal, action, resource) when { context.action like "sql.drop*" };'
PERMIT = '@id("ok") permit (principal, action, resource) when { principal.status == "active" };'


def _start(database_url: str, redis_url: str, prefix: str, data_dir: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
        "REDIS_PREFIX": prefix,
        "ADMIN_KEY": ADMIN_KEY,
        "DATA_DIR": data_dir,
        "LOG_LEVEL": "WARNING",
        "ANOMALY_AUTO_TRAIN": "off",
    }
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), "--port", str(port)], env=env)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/api/v1/health/ready", timeout=60)
    return proc, url


def _percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return f"p50 {statistics.median(ordered):7.2f} ms  p95 {p(0.95):7.2f} ms  p99 {p(0.99):7.2f} ms"


async def measure(url_a: str, url_b: str, subscribers: int, rounds: int) -> dict[str, list[float]]:
    async with httpx.AsyncClient(base_url=url_a, timeout=30) as a:
        created = await a.post(
            "/api/v1/tenants",
            json={"name": "bench", "admin_email": "admin@bench.example", "admin_password": PASSWORD},
            headers={"X-Admin-Key": ADMIN_KEY},
        )
        key = {"X-API-Key": created.json()["api_key"]}
        for name, cedar in (("permit", PERMIT), ("forbid", FORBID)):
            await a.post("/api/v1/policies", json={"name": name, "cedar": cedar}, headers=key)
        agent = (await a.post("/api/v1/agents/register", json={"name": "bot", "type": "llm"}, headers=key)).json()
        token = (
            await a.post("/api/v1/auth/login", json={"email": "admin@bench.example", "password": PASSWORD})
        ).json()["access_token"]
        arrivals: dict[str, list[tuple[str, float]]] = {"same process (A)": [], "other process (B), via Redis": []}
        sent: dict[str, float] = {}
        expected = subscribers * 2 * rounds
        received = trio.Semaphore(0, max_value=expected)

        async def subscriber(url: str, label: str, ready: trio.Event) -> None:
            ws_url = url.replace("http://", "ws://") + f"/api/v1/ws?token={token}"
            async with open_websocket_url(ws_url) as ws:
                await ws.get_message()  # system.status
                ready.set()
                while True:
                    message = await ws.get_message()
                    at = time.perf_counter()
                    if '"policy.violated"' in message:
                        import json

                        arrivals[label].append((json.loads(message)["data"]["decision_id"], at))
                        received.release()

        async with trio.open_nursery() as nursery:
            for url, label in ((url_a, "same process (A)"), (url_b, "other process (B), via Redis")):
                for _ in range(subscribers):
                    ready = trio.Event()
                    nursery.start_soon(subscriber, url, label, ready)
                    await ready.wait()
            check = {"agent_id": agent["id"], "action": "sql.drop_table", "resource": "db://x", "context": {}}
            for _ in range(rounds):
                t0 = time.perf_counter()
                answer = (await a.post("/api/v1/policies/check", json=check, headers=key)).json()
                sent[answer["decision_id"]] = t0
                await trio.sleep(0.2)
            with trio.fail_after(60):
                for _ in range(expected):
                    await received.acquire()
            nursery.cancel_scope.cancel()
        return {label: [(at - sent[d]) * 1000 for d, at in pairs] for label, pairs in arrivals.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--subscribers", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    prefix = f"relay-bench-{uuid.uuid4().hex[:8]}:"
    with fresh_database(args.database_url) as database_url, tempfile.TemporaryDirectory() as data:
        procs = []
        try:
            proc_a, url_a = _start(database_url, args.redis_url, prefix, f"{data}/a")
            procs.append(proc_a)
            proc_b, url_b = _start(database_url, args.redis_url, prefix, f"{data}/b")
            procs.append(proc_b)
            latencies = trio.run(measure, url_a, url_b, args.subscribers, args.rounds)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(15)
    print(f"{args.subscribers} subscribers on each process, {args.rounds} denied checks sent through process A")
    for label, values in latencies.items():
        print(f"{label:32s} {len(values):5d} deliveries  {_percentiles(values)}")


if __name__ == "__main__":
    main()
