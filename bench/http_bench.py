"""Spine throughput: GET /api/v1/health and an authenticated GET /api/v1/status against a bare
Quart-Trio hello-world, in one run. `python bench/http_bench.py [--seconds 8] [--connections 16]`."""

from __future__ import annotations

import argparse

from harness import agentgov_server, create_tenant, hello_server, wrk


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--connections", type=int, default=16)
    args = parser.parse_args()
    opts = {"seconds": args.seconds, "connections": args.connections}
    with hello_server() as hello:
        baseline = wrk("bare Quart-Trio hello-world", hello + "/", **opts)
    with agentgov_server() as base:
        key = create_tenant(base)["api_key"]
        health = wrk("GET /api/v1/health", base + "/api/v1/health", **opts)
        status = wrk("GET /api/v1/status (X-API-Key)", base + "/api/v1/status", headers={"X-API-Key": key}, **opts)
    print(baseline.row())
    for result in (health, status):
        print(result.row(baseline))


if __name__ == "__main__":
    main()
