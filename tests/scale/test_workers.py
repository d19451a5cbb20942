"""`python run.py --workers N` with real processes: refused on SQLite and without Redis; on PostgreSQL and
Redis two workers serve one port, a worker killed with SIGKILL is restarted while the other keeps serving,
and SIGTERM stops them all gracefully (exit 0, no process left)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.support.backends import postgres_database, redis_prefix
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
ADMIN_KEY = "workers-admin-key-0123456789"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATA_DIR": str(tmp_path),
        "ADMIN_KEY": ADMIN_KEY,
        "LOG_LEVEL": "INFO",
        "ANOMALY_AUTO_TRAIN": "off",
        **extra,
    }


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "run.py"), *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_sqlite_refuses_more_than_one_worker(tmp_path: Path) -> None:
    result = _run(["--workers", "2", "--port", "0"], _env(tmp_path))
    assert result.returncode == 2
    assert "DATABASE_URL=postgresql://" in result.stderr and "single writer" in result.stderr


def test_postgres_without_redis_is_refused(tmp_path: Path) -> None:
    env = _env(tmp_path, DATABASE_URL="postgresql://postgres@127.0.0.1:1/none", REDIS_URL="")
    result = _run(["--workers", "2"], env)
    assert result.returncode == 2 and "REDIS_URL" in result.stderr


def test_zero_workers_is_refused(tmp_path: Path) -> None:
    result = _run(["--workers", "0"], _env(tmp_path))
    assert result.returncode == 2 and "at least 1" in result.stderr


def _health(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/api/v1/health", timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def _wait(predicate, within: float, what: str) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within}s waiting for {what}")
        time.sleep(0.05)


def _workers(log: Path) -> dict[int, int]:
    """worker index -> pid of its latest start, from the supervisor's log."""
    started: dict[int, int] = {}
    for match in re.finditer(r"worker (\d+) started \(pid (\d+)\)", log.read_text(errors="replace")):
        started[int(match[1])] = int(match[2])
    return started


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.postgres
def test_two_workers_restart_and_stop(tmp_path: Path) -> None:
    with postgres_database() as database_url, redis_prefix() as prefix:
        from tests.support.backends import REDIS_URL

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        log = tmp_path / "supervisor.log"
        env = _env(tmp_path, DATABASE_URL=database_url, REDIS_URL=REDIS_URL, REDIS_PREFIX=prefix)
        with log.open("w") as out:
            parent = subprocess.Popen(
                [sys.executable, str(ROOT / "run.py"), "--workers", "2", "--port", str(port)],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait(lambda: _health(url) and len(_workers(log)) == 2, 60, "two workers serving")
            first = _workers(log)
            assert parent.poll() is None and all(_alive(pid) for pid in first.values())

            os.kill(first[1], signal.SIGKILL)
            _wait(lambda: _workers(log).get(1) not in (None, first[1]), 30, "worker 1 restarted")
            assert f"worker 1 (pid {first[1]}) exited with -9" in log.read_text()
            assert _alive(first[2]) and _health(url)  # the other worker kept serving
            restarted = _workers(log)[1]
            _wait(lambda: _health(url), 30, "service healthy after the restart")

            parent.send_signal(signal.SIGTERM)
            assert parent.wait(timeout=60) == 0
            assert not any(_alive(pid) for pid in (restarted, first[2]))
            text = log.read_text()
            assert "stopping 2 workers gracefully" in text and "all workers stopped" in text
            assert not _health(url)
        finally:
            if parent.poll() is None:
                parent.kill()
                parent.wait()
