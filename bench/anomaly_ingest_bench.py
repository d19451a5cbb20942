"""What anomaly detection costs the hot paths, measured against the same service without it, in one run.

`python bench/anomaly_ingest_bench.py [--seconds 5] [--rounds 6] [--database-url URL]`

1. `POST /audit/log` throughput of a tenant whose model is active (every entry scored at ingest, the verdict
   stored with the entry) against a tenant without a model, in interleaved rounds (wrk, 8 connections). The
   traffic is normal traffic: 16 agents, each doing its usual tasks with event times seconds apart within a
   task and an hour apart between tasks (as its history), so that anomalies stay rare. A second pair of
   rows measures a flood (one agent's same call as fast as possible, with receipt times: every entry a
   burst, each flagged, reported and published).
2. `POST /policies/check` throughput and latency while trainings run back to back (each fit in a worker
   process) against the same checks with no training, in interleaved rounds: the event loop stays responsive.
3. The event loop's lag while trainings run back to back: one client asks `GET /api/v1/health` every 20 ms
   on one connection (nothing else loads the service), idle and during fits; the answer's latency is the
   time the loop took to get to it.
4. Time from an entry being accepted to its verdict being readable (`GET /audit/{id}`), over 50 entries.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import statistics
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from harness import ADMIN_KEY, Result, agentgov_server, wrk

TASKS = [["search_files", "read_file", "summarise"], ["list_invoices", "read_invoice", "send_email"]]
#: Every entry carries an input naming a document and an output of about 400 characters naming the next one (as
#: a tool's result that the next call passes on), so that tracing argument values costs what it would.
FILLER = "lorem ipsum dolor sit amet " * 14


def payload(step: int) -> dict[str, Any]:
    return {"input": {"ref": f"doc-{step}"}, "output": {"result": f"{FILLER}doc-{step + 1}"}}


def history(agent_id: str, days: int = 14) -> list[dict[str, Any]]:
    rng = random.Random(1)
    out, start = [], datetime(2026, 5, 4, tzinfo=UTC)
    for day in range(days):
        for session in range(6):
            at = start + timedelta(days=day, hours=8 + session, minutes=rng.randint(0, 40))
            for step, tool in enumerate(rng.choice(TASKS), start=1):
                at += timedelta(seconds=rng.uniform(3, 15))
                entry = {"agent_id": agent_id, "action": tool, "resource": f"res:{tool}", "timestamp": at.isoformat()}
                out.append({**entry, **payload(step)})
    return out


def tenant_with_agents(http: httpx.Client, name: str, count: int) -> tuple[dict[str, str], list[str]]:
    tenant = http.post("/api/v1/tenants", json={"name": name}, headers={"X-Admin-Key": ADMIN_KEY}).json()
    headers = {"X-API-Key": tenant["api_key"]}
    agents = [
        http.post("/api/v1/agents/register", json={"name": f"bot-{i}", "type": "tool"}, headers=headers).json()["id"]
        for i in range(count)
    ]
    return headers, agents


def train(http: httpx.Client, headers: dict[str, str]) -> dict[str, Any]:
    accepted = http.post("/api/v1/anomalies/detector/train", json={}, headers=headers).json()
    while (task := http.get(accepted["status_url"], headers=headers).json())["status"] in ("queued", "running"):
        time.sleep(0.02)
    return task


AGENTS = 16
SIM_START = 1779696000  # 2026-05-25T08:00:00Z, a Monday after the history


def traffic_script(agent_ids: list[str], round_index: int) -> str:
    """wrk Lua: rotate over the agents; each runs its usual tasks on its own simulated clock (event times
    in order per agent, every day 08:00-14:00 UTC like its history); each round starts 20 days later (a
    round of 5 s covers about two weeks: event times stay in the past)."""
    names = ",".join(f'"{a}"' for a in agent_ids)
    tasks = ",".join("{" + ",".join(f'"{t}"' for t in task) + "}" for task in TASKS)
    start = SIM_START + round_index * 20 * 86400
    return f"""
wrk.method = "POST"
local agents = {{{names}}}
local tasks = {{{tasks}}}
local state = {{}}
local n = 0
math.randomseed(7)
for i, a in ipairs(agents) do state[i] = {{agent = a, t = {start} + i * 97, step = 0}} end
request = function()
  n = n % #agents + 1
  local s = state[n]
  if s.task == nil or s.step >= #s.task then
    s.task = tasks[math.random(#tasks)]
    s.step = 0
    s.t = s.t + math.random(2400, 3600)
    local of_day = s.t % 86400
    if of_day > 14 * 3600 then s.t = s.t - of_day + 86400 + 8 * 3600 + math.random(0, 2400) end
  else
    s.t = s.t + math.random(3, 15)
  end
  s.step = s.step + 1
  local tool = s.task[s.step]
  local body = string.format(
    '{{"agent_id":"%s","action":"%s","resource":"res:%s","timestamp":"%s",'
    .. '"input":{{"ref":"doc-%d"}},"output":{{"result":"{FILLER}doc-%d"}}}}',
    s.agent, tool, tool, os.date("!%Y-%m-%dT%H:%M:%SZ", s.t), s.step, s.step + 1)
  return wrk.format(nil, nil, nil, body)
end
"""


def log_script(agent_id: str) -> str:
    body = '{"agent_id":"%s","action":"read_file","resource":"res:read_file"}' % agent_id  # noqa: UP031
    return f"wrk.method = \"POST\"\nwrk.body = '{body}'\n"


def check_script(agent_id: str) -> str:
    body = '{"agent_id":"%s","action":"read_file","resource":"res:read_file"}' % agent_id  # noqa: UP031
    return f"wrk.method = \"POST\"\nwrk.body = '{body}'\n"


@contextlib.contextmanager
def trainings_back_to_back(base: str, headers: dict[str, str]) -> Iterator[list[int]]:
    """Train the tenant again and again in a thread while the block runs; yields [trainings completed]
    (final once the block has exited and the last training finished)."""
    done = [0]
    stop = threading.Event()

    def keep_training() -> None:
        with httpx.Client(base_url=base, timeout=60) as own:
            while not stop.is_set():
                train(own, headers)
                done[0] += 1

    worker = threading.Thread(target=keep_training)
    worker.start()
    try:
        yield done
    finally:
        stop.set()
        worker.join()


def health_latencies(base: str, seconds: float) -> list[float]:
    """Milliseconds of sequential `GET /health` on one keep-alive connection, one every 20 ms."""
    out: list[float] = []
    with httpx.Client(base_url=base, timeout=10) as probe:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            started = time.perf_counter()
            probe.get("/api/v1/health").raise_for_status()
            out.append((time.perf_counter() - started) * 1000)
            time.sleep(0.02)
    return sorted(out)


def lag_row(name: str, values: list[float]) -> str:
    return (
        f"{name:48s} p50 {values[len(values) // 2]:6.2f} ms  p99 {values[int(len(values) * 0.99)]:6.2f} ms  "
        f"max {values[-1]:6.2f} ms  ({len(values)} probes)"
    )


def median(results: list[Result]) -> Result:
    ordered = sorted(results, key=lambda r: r.requests_per_s)
    return ordered[len(ordered) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    env = {"DATABASE_URL": args.database_url} if args.database_url else {}
    with agentgov_server(ANOMALY_AUTO_TRAIN="off", **env) as base, httpx.Client(base_url=base, timeout=60) as http:
        plain_headers, plain_agents = tenant_with_agents(http, "without-model", AGENTS)
        model_headers, model_agents = tenant_with_agents(http, "with-model", AGENTS)
        model_agent = model_agents[0]
        for agent_id in model_agents:
            for entry in history(agent_id):
                http.post("/api/v1/audit/log", json=entry, headers=model_headers).raise_for_status()
        task = train(http, model_headers)
        assert task["status"] == "succeeded", task

        json_headers = {"Content-Type": "application/json"}
        for label, script_of in (
            ("normal traffic", lambda agents, index: traffic_script(agents, index)),
            ("a flood of one agent's call", lambda agents, index: log_script(agents[0])),
        ):
            without: list[Result] = []
            with_model: list[Result] = []
            for index in range(args.rounds):
                pair = [
                    ("POST /audit/log, no model", plain_agents, plain_headers, without),
                    ("POST /audit/log, model active", model_agents, model_headers, with_model),
                ]
                for name, agents, headers, results in pair if index % 2 == 0 else pair[::-1]:  # ABBA: drift cancels
                    results.append(
                        wrk(
                            name,
                            base + "/api/v1/audit/log",
                            connections=8,
                            seconds=args.seconds,
                            script=script_of(agents, index),
                            headers={**headers, **json_headers},
                        )
                    )
            if any(r.errors for r in without + with_model):
                raise SystemExit(f"requests failed during {label}: {[r.errors for r in without + with_model]}")
            a, b = median(without), median(with_model)
            print(f"audit log ingest, {label}: {args.rounds} interleaved rounds of {args.seconds}s, 8 connections;")
            print(a.row())
            print(b.row(a))
        flagged = http.get("/api/v1/anomalies/stats", headers=model_headers).json()
        print(f"  anomaly reports stored for the tenant with a model: {flagged.get('total')}")

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
            with trainings_back_to_back(base, model_headers) as done:
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
            trainings += done[0]
        a, b = median(idle), median(training)
        print(f"policy checks while trainings run back to back ({trainings} trainings completed meanwhile):")
        print(a.row())
        print(b.row(a))

        quiet = health_latencies(base, args.seconds)
        with trainings_back_to_back(base, model_headers) as fits:
            busy = health_latencies(base, args.seconds)
        print(f"event loop lag (GET /health every 20 ms, {fits[0]} trainings meanwhile):")
        print(lag_row("  idle", quiet))
        print(lag_row("  trainings back to back", busy))

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
