"""A duty's lease is taken over when its owner dies: two real processes sharing PostgreSQL and Redis with
`LEASE_SECONDS=3`; the process holding `approval-expiry` is killed with SIGKILL and the other takes the duty
over within the lease time plus a tick, with a new fencing token."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import psycopg
import pytest

from tests.scale.processes import service_process
from tests.support.backends import REDIS_URL, postgres_database, redis_prefix

ROOT = Path(__file__).resolve().parents[2]
LEASE_SECONDS = 3.0


def _holder(database_url: str) -> tuple[int, int, str] | None:
    """(pid, token, expires_at) of the approval-expiry lease."""
    with psycopg.connect(database_url) as conn:
        row = conn.execute("SELECT owner, token, expires_at FROM leases WHERE name = 'approval-expiry'").fetchone()
    if row is None:
        return None
    return int(row[0].split(":")[1]), int(row[1]), row[2]


def _ready(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _wait(predicate, within: float):
    deadline = time.monotonic() + within
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {within}s")
        time.sleep(0.05)


@pytest.mark.postgres
def test_the_other_process_takes_the_duty_over(tmp_path: Path) -> None:
    with postgres_database() as database_url, redis_prefix() as prefix:
        env = {
            "DATABASE_URL": database_url,
            "REDIS_URL": REDIS_URL,
            "REDIS_PREFIX": prefix,
            "ADMIN_KEY": "lease-admin-key-0123456789",
            "ANOMALY_AUTO_TRAIN": "off",
            "LEASE_SECONDS": str(LEASE_SECONDS),
        }
        with service_process(tmp_path, "a", env) as (url_a, a), service_process(tmp_path, "b", env) as (url_b, b):
            pids = {a.pid, b.pid}
            _wait(lambda: all(_ready(f"{url}/api/v1/health/ready") for url in (url_a, url_b)), 60)
            first = _wait(lambda: (h := _holder(database_url)) and h[0] in pids and h, 30)
            victim = first[0]
            os.kill(victim, signal.SIGKILL)
            killed_at = time.monotonic()
            taken = _wait(lambda: (h := _holder(database_url)) and h[0] != victim and h, LEASE_SECONDS * 3)
            elapsed = time.monotonic() - killed_at
            assert taken[0] in pids - {victim} and taken[1] == first[1] + 1
            assert elapsed <= LEASE_SECONDS + LEASE_SECONDS / 3 + 1.5, elapsed
