"""`GET /api/v1/stats` on a large tenant: latency against `GET /api/v1/health` in the same run.

`python bench/stats_bench.py [--entries 1000000] [--data-dir DIR] [--seconds 5] [--rounds 3]`

Builds (or reuses) the one-tenant SQLite database of `bench/export_bench.py` (`--entries` chained audit
entries), starts `python run.py` on it, and runs wrk (4 connections) against `/stats` and `/health`,
alternating rounds; prints requests per second and p50/p99 latency of each, and their ratio.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile

from export_bench import call, ensure_trail, start_server
from harness import interleaved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--data-dir", default="")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="agentgov-stats-bench-")
    try:
        ids = ensure_trail(data_dir, args.entries)
        proc, url = start_server(data_dir)
        try:
            headers = {"X-API-Key": ids["tenant"]["api_key"]}
            figures = call(f"{url}/api/v1/stats", headers=headers)
            print(f"/stats says: audit {figures['audit']}, agents {figures['agents']['total']}")
            results = interleaved(
                {
                    "GET /api/v1/health": {"url": f"{url}/api/v1/health"},
                    "GET /api/v1/stats": {"url": f"{url}/api/v1/stats", "headers": headers},
                },
                args.rounds,
                seconds=args.seconds,
                connections=4,
            )
        finally:
            proc.terminate()
            proc.wait(15)
        baseline = results.pop("GET /api/v1/health")
        print(baseline.row())
        for result in results.values():
            print(result.row(baseline))
    finally:
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
