"""Real `python run.py` processes sharing PostgreSQL and Redis, for the scale-out tests."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import httpx

from tests.support.backends import REDIS_URL, postgres_database, redis_prefix
from tests.support.polling import wait_until
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
ADMIN = {"X-Admin-Key": "scale-admin-key-0123456789"}
PASSWORD = "A-long-enough-passphrase-42"


@contextmanager
def service_process(
    tmp_path: Path, name: str, env: dict[str, str], *args: str
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`python run.py [args]` on a free port with `env` added, its log in `tmp_path/<name>.log`; yields (base
    URL, process), and stops it (SIGTERM, then SIGKILL after 30 s) on exit."""
    port = free_port()
    log = (tmp_path / f"{name}.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "run.py"), "--port", str(port), *args],
        env={**os.environ, **env, "DATA_DIR": str(tmp_path / name)},
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@contextmanager
def shared_backends(**extra: str) -> Iterator[dict[str, str]]:
    """The settings of processes that share a fresh PostgreSQL database and Redis prefix (dropped after),
    with `extra` added."""
    with postgres_database() as database_url, redis_prefix() as prefix:
        yield {
            "DATABASE_URL": database_url,
            "REDIS_URL": REDIS_URL,
            "REDIS_PREFIX": prefix,
            "ADMIN_KEY": ADMIN["X-Admin-Key"],
            "ANOMALY_AUTO_TRAIN": "off",
            **extra,
        }


@asynccontextmanager
async def two_processes(tmp_path: Path) -> AsyncIterator[tuple[httpx.AsyncClient, httpx.AsyncClient]]:
    with (
        shared_backends() as env,
        service_process(tmp_path, "a", env) as (url_a, _),
        service_process(tmp_path, "b", env) as (url_b, _),
    ):
        async with (
            httpx.AsyncClient(base_url=url_a, timeout=30) as a,
            httpx.AsyncClient(base_url=url_b, timeout=30) as b,
        ):

            async def up(client: httpx.AsyncClient) -> bool:
                try:
                    return (await client.get("/api/v1/health/ready")).status_code == 200
                except httpx.TransportError:
                    return False

            await wait_until(lambda: up(a), within=60, every=0.1)
            await wait_until(lambda: up(b), within=60, every=0.1)
            yield a, b
