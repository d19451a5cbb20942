"""Settings validation, and the real `python run.py` process: start, serve, graceful stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
import trio

from agentgov.config import ConfigError, Settings
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
STRONG = {
    "ADMIN_KEY": "a" * 32,
    "JWT_SECRET": "b" * 32,
    "WEBHOOK_SECRET": "c" * 32,
    "AUDIT_SECRET": "d" * 32,
    "EXPORT_SIGNING_KEY": "ZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWVlZWU=",
}


@pytest.mark.parametrize("name", ["ADMIN_KEY", "JWT_SECRET", "WEBHOOK_SECRET"])
def test_production_refuses_missing_or_default_secrets(name: str) -> None:
    env = {"ENV": "production", **STRONG}
    del env[name]
    with pytest.raises(ConfigError, match=name):
        Settings.from_env(env)
    env[name] = {"ADMIN_KEY": "change-me-admin-key", "JWT_SECRET": "change-me-jwt-secret"}.get(
        name, "change-me-webhook-secret"
    )
    with pytest.raises(ConfigError, match=f"{name} is still the default"):
        Settings.from_env(env)
    env[name] = "short"
    with pytest.raises(ConfigError, match=f"{name} is too short"):
        Settings.from_env(env)


def test_production_with_strong_secrets_starts_clean() -> None:
    settings = Settings.from_env({"ENV": "production", **STRONG})
    assert settings.is_production and settings.warnings == ()


def test_development_generates_an_admin_key_and_warns() -> None:
    first, second = Settings.from_env({}), Settings.from_env({})
    assert first.admin_key != second.admin_key and len(first.admin_key) >= 24
    assert any(first.admin_key in w for w in first.warnings)
    assert any("JWT_SECRET" in w for w in first.warnings) and any("WEBHOOK_SECRET" in w for w in first.warnings)
    assert first.effective_database_url == "sqlite:///data/agentgov.db"


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"ENV": "staging"}, "ENV"),
        ({"LOG_FORMAT": "xml"}, "LOG_FORMAT"),
        ({"DATABASE_URL": "mysql://x"}, "DATABASE_URL"),
        ({"REDIS_URL": "http://x"}, "REDIS_URL"),
        ({"GRACEFUL_TIMEOUT": "soon"}, "GRACEFUL_TIMEOUT"),
        ({"MAILBOX_CAPACITY": "-1"}, "MAILBOX_CAPACITY"),
    ],
)
def test_bad_values_name_the_setting(env: dict[str, str], needle: str) -> None:
    with pytest.raises(ConfigError, match=needle):
        Settings.from_env(env)


async def test_run_py_serves_and_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = {**os.environ, "DATA_DIR": str(tmp_path), "LOG_FORMAT": "json", **STRONG}
    proc = await trio.lowlevel.open_process(
        [sys.executable, "run.py", "--port", str(port)], cwd=ROOT, env=env, stderr=subprocess.PIPE
    )
    assert proc.stderr is not None
    seen = b""
    with trio.fail_after(60):
        while b'"msg": "serving"' not in seen:
            chunk = await proc.stderr.receive_some()
            assert chunk, seen.decode(errors="replace")
            seen += chunk
    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
        created = await client.post("/api/v1/tenants", json={"name": "p"}, headers={"X-Admin-Key": STRONG["ADMIN_KEY"]})
        assert created.status_code == 201
        response = await client.get("/api/v1/status", headers={"X-API-Key": created.json()["api_key"]})
        assert response.status_code == 200 and response.headers["X-Request-ID"]
    proc.send_signal(signal.SIGTERM)
    with trio.fail_after(30):
        while chunk := await proc.stderr.receive_some():
            seen += chunk
        assert await proc.wait() == 0
    assert b"shutting down gracefully" in seen and b'"msg": "stopped"' in seen
    assert (tmp_path / "agentgov.db").exists()


def test_run_py_refuses_production_defaults(tmp_path: Path) -> None:
    env = {**os.environ, "DATA_DIR": str(tmp_path), "ENV": "production", "JWT_SECRET": "b" * 32}
    env.pop("ADMIN_KEY", None)
    done = subprocess.run([sys.executable, "run.py"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "ADMIN_KEY is missing" in done.stderr
