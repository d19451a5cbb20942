"""Policy check throughput: `POST /api/v1/policies/check` with 1, 10 and 100 active policies, beside a bare
Quart-Trio hello-world served the same way, in one run. Load comes from Debian's `wrk` in another process.

`python bench/policy_bench.py [--seconds 5] [--connections 16] [--rounds 3] [--counts 1,10,100]
[--modes sync,async]`

Each decision-log mode (`DECISION_LOG=sync`, the default: a check answers once its audit entry is committed;
`async`: once it is queued) gets its own server, started side by side and measured in the same interleaved
rounds; `async@0.005` is the earlier behaviour (fire-and-forget, Python's default GIL switch interval).
Set BENCH_PORTS (e.g. 18100-18199) to keep the servers in a port range.

Each policy count gets a fresh tenant: one permit for active agents plus forbid guards (each a separate
document with its own @id) that do not match the checked action, so every check evaluates the whole set and
is allowed. Each count runs twice: "repeated" sends the same check every time (after the first, answered from
the policy set's decision memo), "distinct" names a new resource in every request (each evaluated by Cedar).
Set DATABASE_URL to bench against PostgreSQL instead of the throwaway SQLite database.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import urllib.request

from harness import Result, agentgov_server, create_tenant, hello_server, wrk

PERMIT = '@id("allow-active") @reason("Active agents may act") permit (principal, action, resource) when { principal.status == "active" };'  # noqa: E501
GUARD = (
    '@id("guard-{n}") @reason("guard {n}") @severity("high")\n'
    'forbid (principal, action, resource) when {{ context.action like "blocked{n}.*" && '
    'context has environment && context.environment == "production" }};'
)


def _post(base: str, path: str, body: dict, api_key: str) -> dict:
    request = urllib.request.Request(
        base + path,
        data=json.dumps(body).encode(),
        headers={"X-API-Key": api_key, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def prepare(base: str, count: int) -> tuple[str, str]:
    """A tenant with `count` active policy documents and one agent; returns (api_key, agent_id)."""
    api_key = create_tenant(base, f"bench-{count}")["api_key"]
    _post(base, "/api/v1/policies", {"name": "baseline", "cedar": PERMIT}, api_key)
    for n in range(1, count):
        _post(base, "/api/v1/policies", {"name": f"guard {n}", "cedar": GUARD.format(n=n)}, api_key)
    agent = _post(
        base, "/api/v1/agents/register", {"name": "bench-bot", "type": "llm", "capabilities": ["sql"]}, api_key
    )
    return api_key, agent["id"]


def check_script(agent_id: str) -> str:
    body = json.dumps(
        {
            "agent_id": agent_id,
            "action": "sql.select",
            "resource": "postgres:crm",
            "context": {"environment": "production", "record_count": 20},
        }
    )
    return f'wrk.method = "POST"\nwrk.body = {json.dumps(body)}\nwrk.headers["Content-Type"] = "application/json"\n'


def distinct_script(agent_id: str, api_key: str) -> str:
    """Like `check_script`, but every request names another resource, so no check repeats an earlier one
    (each is evaluated by Cedar instead of answered from the policy set's decision memo)."""
    body = json.dumps(
        {
            "agent_id": agent_id,
            "action": "sql.select",
            "resource": "postgres:crm/%d",
            "context": {"environment": "production", "record_count": 20},
        }
    )
    return (
        "local n = 0\n"
        "request = function()\n"
        "  n = n + 1\n"
        f'  local headers = {{["Content-Type"] = "application/json", ["X-API-Key"] = "{api_key}"}}\n'
        f'  return wrk.format("POST", nil, headers, string.format({json.dumps(body)}, n))\n'
        "end\n"
    )


def median(results: list[Result]) -> Result:
    """The run with the median throughput (its latencies come with it)."""
    ordered = sorted(results, key=lambda r: r.requests_per_s)
    return ordered[len(ordered) // 2]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds; the median is reported")
    parser.add_argument("--counts", default="1,10,100")
    parser.add_argument(
        "--modes",
        default="sync,async,async@0.005",
        help="servers: DECISION_LOG mode, optionally @GIL_SWITCH_INTERVAL (async@0.005 is the behaviour before "
        "the synchronous decision log: fire-and-forget with Python's default switch interval)",
    )
    args = parser.parse_args()
    opts = {"seconds": args.seconds, "connections": args.connections}
    counts = [int(c) for c in args.counts.split(",")]
    modes = [m.strip() for m in args.modes.split(",")]

    runs: dict[str, list[Result]] = {}
    with contextlib.ExitStack() as stack:
        hello = stack.enter_context(hello_server())
        bases = {}
        for mode in modes:
            decision_log, _, interval = mode.partition("@")
            env = {"DECISION_LOG": decision_log, **({"GIL_SWITCH_INTERVAL": interval} if interval else {})}
            bases[mode] = stack.enter_context(agentgov_server(**env))
        targets = [("bare Quart-Trio hello-world", hello + "/", None, None)]
        for count in counts:
            for mode, base in bases.items():
                api_key, agent_id = prepare(base, count)
                scripts = {"repeated": check_script(agent_id), "distinct": distinct_script(agent_id, api_key)}
                for label, script in scripts.items():
                    targets.append(
                        (
                            f"check {mode:<11} {count:>3} policies, {label}",
                            base + "/api/v1/policies/check",
                            script,
                            {"X-API-Key": api_key},
                        )
                    )
        for _, url, script, headers in targets:  # warm-up (model loading, caches, actors)
            wrk("warm-up", url, seconds=2, connections=args.connections, script=script, headers=headers)
        # the machine may be shared: interleave the targets so drifting load hits them alike
        for _ in range(args.rounds):
            for name, url, script, headers in targets:
                runs.setdefault(name, []).append(wrk(name, url, script=script, headers=headers, **opts))
    baseline = median(runs[targets[0][0]])
    print(f"{args.rounds} interleaved rounds of {args.seconds}s, {args.connections} connections; medians:")
    print(baseline.row())
    for name, _, _, _ in targets[1:]:
        print(median(runs[name]).row(baseline))


if __name__ == "__main__":
    main()
