"""Audit trail throughput: POST /api/v1/audit/log and signed webhook agent.action deliveries per second,
with 1 and 50 concurrent clients, each as a ratio to a bare Quart-Trio hello-world at the same
concurrency, measured in the same run. Every counted request is a durably stored, chained entry: each
webhook delivery carries its own X-Webhook-Id (so none is a duplicate), and after the load the bench
counts the stored entries and verifies the whole chain (timing that too). Run by hand; prints figures.

    python bench/audit_bench.py [--seconds 8] [--database-url postgresql://postgres@127.0.0.1:5432/bench]

Needs Debian's `wrk` (apt-get install -y wrk). The server is `python run.py` (SQLite in a temporary
directory unless --database-url is given); load comes from wrk in a separate process.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import time
import urllib.request
from typing import Any

from harness import WEBHOOK_SECRET, Result, agentgov_server, create_tenant, hello_server, wrk

CLIENTS = (1, 50)


def _call(base: str, method: str, path: str, key: str, body: Any = None) -> Any:
    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"X-API-Key": key, "Content-Type": "application/json"},
        method=method,
    )
    with urllib.request.urlopen(request, timeout=600) as response:
        return json.loads(response.read())


def _lua_string(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid Lua string literal for ASCII text


def audit_log_script(agent_id: str) -> str:
    body = json.dumps(
        {
            "agent_id": agent_id,
            "action": "read",
            "resource": "db://orders/42",
            "input": {"query": "select 1"},
            "reasoning": ["asked by user"],
            "risk_score": 0.2,
            "is_approved": True,
        }
    )
    return f'wrk.method = "POST"\nwrk.body = {_lua_string(body)}\n'


def webhook_script(agent_id: str, api_key: str, run: str) -> str:
    body = json.dumps({"event": "agent.action", "payload": {"agent_id": agent_id, "action": "tool_call"}})
    signature = hmac.new(WEBHOOK_SECRET.encode(), body.encode(), hashlib.sha256).hexdigest()
    return f"""
local body = {_lua_string(body)}
local n = 0
request = function()
  n = n + 1
  return wrk.format("POST", nil, {{
    ["Content-Type"] = "application/json",
    ["X-API-Key"] = "{api_key}",
    ["X-Webhook-Signature"] = "{signature}",
    ["X-Webhook-Id"] = "{run}-" .. n,
  }}, body)
end
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--database-url", default="", help="default: SQLite in a temporary directory")
    args = parser.parse_args()

    baselines: dict[int, Result] = {}
    with hello_server() as hello:
        for clients in CLIENTS:
            baselines[clients] = wrk(
                f"hello-world GET / ({clients} client{'s' if clients > 1 else ''})",
                hello + "/",
                connections=clients,
                seconds=args.seconds,
            )

    env = {"DATABASE_URL": args.database_url} if args.database_url else {}
    results: list[tuple[Result, Result]] = []
    with agentgov_server(**env) as base:
        key = create_tenant(base, f"bench-{int(time.time())}")["api_key"]
        agent = _call(base, "POST", "/api/v1/agents/register", key, {"name": "bench-agent", "type": "tool"})
        headers = {"X-API-Key": key, "Content-Type": "application/json"}
        for clients in CLIENTS:
            plural = "s" if clients > 1 else ""
            log = wrk(
                f"POST /audit/log ({clients} client{plural})",
                base + "/api/v1/audit/log",
                connections=clients,
                seconds=args.seconds,
                script=audit_log_script(agent["id"]),
                headers=headers,
            )
            results.append((log, baselines[clients]))
            hook = wrk(
                f"webhook agent.action, signed ({clients} client{plural})",
                base + "/webhooks/agent",
                connections=clients,
                seconds=args.seconds,
                script=webhook_script(agent["id"], key, f"c{clients}"),
            )
            results.append((hook, baselines[clients]))
        stored = _call(base, "GET", "/api/v1/audit?limit=1", key)["total"]
        started = time.perf_counter()
        report = _call(base, "GET", "/api/v1/audit/verify", key)
        verify_s = time.perf_counter() - started

    print(f"database: {args.database_url or 'SQLite (temporary file)'}; {args.seconds}s per run; wrk, 1 thread")
    for baseline in baselines.values():
        print(baseline.row())
    for result, baseline in results:
        print(result.row(baseline))
    print(
        f"entries stored: {stored}; chain verified: intact={report['intact']}, {report['checked']} entries "
        f"in {verify_s:.2f}s ({report['checked'] / verify_s:,.0f} entries/s)"
    )


if __name__ == "__main__":
    main()
