"""Several worker processes on one port: policy-check and audit-write throughput of `python run.py
--workers 1` against `--workers 2`, both on PostgreSQL and Redis, measured in the same run (alternating
rounds; medians), with the ratio. Run by hand; prints figures.

    python bench/scale_bench.py [--seconds 5] [--rounds 3] [--connections 32]
        [--database-url postgresql://postgres@127.0.0.1:5432/test] [--redis-url redis://127.0.0.1:6379/0]

Each server gets its own fresh database (created from --database-url's server, dropped afterwards) and Redis
prefix. Checks name a new resource each time (every one evaluated by Cedar, none answered from the decision
memo) against a tenant with 10 policies; audit writes are `POST /audit/log`. Needs Debian's `wrk`.
"""

from __future__ import annotations

import argparse
import contextlib
import uuid
from collections.abc import Iterator

from audit_bench import audit_log_script
from harness import Result, agentgov_server, median_result, wrk
from policy_bench import distinct_script, prepare


@contextlib.contextmanager
def fresh_database(admin_url: str) -> Iterator[str]:
    import psycopg

    name = f"scale_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield admin_url.rsplit("/", 1)[0] + f"/{name}"
    finally:
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    workers = (1, 2)
    runs: dict[str, list[Result]] = {}
    with contextlib.ExitStack() as stack:
        targets = {}
        for n in workers:
            database_url = stack.enter_context(fresh_database(args.database_url))
            base = stack.enter_context(
                agentgov_server(
                    DATABASE_URL=database_url,
                    REDIS_URL=args.redis_url,
                    REDIS_PREFIX=f"scale-bench-{uuid.uuid4().hex[:8]}:",
                    WORKERS=str(n),
                    ANOMALY_AUTO_TRAIN="off",
                )
            )
            api_key, agent_id = prepare(base, 10)
            targets[n] = (base, api_key, agent_id)
        for _ in range(args.rounds):
            for n, (base, api_key, agent_id) in targets.items():
                name = f"POST /policies/check, {n} worker{'s' if n > 1 else ''}"
                runs.setdefault(name, []).append(
                    wrk(
                        name,
                        base + "/api/v1/policies/check",
                        connections=args.connections,
                        seconds=args.seconds,
                        script=distinct_script(agent_id, api_key),
                    )
                )
                name = f"POST /audit/log, {n} worker{'s' if n > 1 else ''}"
                runs.setdefault(name, []).append(
                    wrk(
                        name,
                        base + "/api/v1/audit/log",
                        connections=args.connections,
                        seconds=args.seconds,
                        script=audit_log_script(agent_id),
                        headers={"X-API-Key": api_key, "Content-Type": "application/json"},
                    )
                )
    results = {name: median_result(r) for name, r in runs.items()}
    print(f"PostgreSQL + Redis, {args.connections} connections, {args.seconds}s runs, {args.rounds} alternating rounds")
    for kind in ("POST /policies/check", "POST /audit/log"):
        one, two = results[f"{kind}, 1 worker"], results[f"{kind}, 2 workers"]
        print(one.row())
        print(two.row(one))
        print(f"{kind}: 2 workers / 1 worker = {two.requests_per_s / one.requests_per_s:.2f}x")


if __name__ == "__main__":
    main()
