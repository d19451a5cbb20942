"""Spine throughput: GET /api/v1/health and an authenticated GET /api/v1/status against a bare
Quart-Trio hello-world, in one run, alternating rounds (medians reported).

`python bench/http_bench.py [--seconds 5] [--connections 16] [--rounds 3]`
"""

from __future__ import annotations

import argparse

from harness import agentgov_server, create_tenant, hello_server, interleaved


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with hello_server() as hello, agentgov_server() as base:
        key = create_tenant(base)["api_key"]
        results = interleaved(
            {
                "bare Quart-Trio hello-world": {"url": hello + "/"},
                "GET /api/v1/health": {"url": base + "/api/v1/health"},
                "GET /api/v1/status (X-API-Key)": {"url": base + "/api/v1/status", "headers": {"X-API-Key": key}},
            },
            args.rounds,
            seconds=args.seconds,
            connections=args.connections,
        )
    baseline = results.pop("bare Quart-Trio hello-world")
    print(baseline.row())
    for result in results.values():
        print(result.row(baseline))


if __name__ == "__main__":
    main()
