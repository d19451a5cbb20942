"""A bounded schemathesis run against the real server: no 5xx, no hang, every answer as documented.

The run covers every operation in /openapi.json (examples, coverage and fuzzing phases, a few examples
each, a fixed seed) with a tenant Admin's API key, the operator's admin key and an Admin user's JWT, so
both the authorised paths and the error answers are exercised. It fails on any server error, any network
error (a request that does not complete within the timeout), and any status code, content type, header
or body that /openapi.json does not describe. On failure the message carries schemathesis's report,
with a curl line reproducing each failure.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import trio

from tests.support.app import ADMIN_KEY, live_server, settings_for

pytest.importorskip("schemathesis", reason="schemathesis is not installed")

pytestmark = [pytest.mark.slow, pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)]

MAX_EXAMPLES = 5  # per operation and phase
MAX_TIME = 150  # seconds for the whole run
REQUEST_TIMEOUT = 20  # seconds for one request
CHECKS = ",".join(
    (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    )
)
ADMIN_EMAIL = "admin@acme.test"
ADMIN_PASSWORD = "Correct-horse-battery-9"


async def test_schemathesis_finds_no_server_error_and_no_undocumented_answer(database_url) -> None:
    async with live_server(settings_for(database_url)) as (client, running):
        created = await client.post(
            "/api/v1/tenants",
            json={"name": "Acme", "admin_email": ADMIN_EMAIL, "admin_password": ADMIN_PASSWORD},
            headers={"X-Admin-Key": ADMIN_KEY},
        )
        assert created.status_code == 201, created.text
        login = await client.post("/api/v1/auth/login", json={"email": ADMIN_EMAIL, "password": ADMIN_PASSWORD})
        assert login.status_code == 200, login.text
        base = running.urls[0].rstrip("/")
        command = [
            sys.executable,
            "-m",
            "schemathesis.cli",
            "run",
            f"{base}/openapi.json",
            "--header",
            f"X-API-Key: {created.json()['api_key']}",
            "--header",
            f"X-Admin-Key: {ADMIN_KEY}",
            "--header",
            f"Authorization: Bearer {login.json()['access_token']}",
            # Logging out would end the JWT the rest of the run authenticates with.
            "--exclude-path",
            "/api/v1/auth/logout",
            "--phases",
            "examples,coverage,fuzzing",
            "--checks",
            CHECKS,
            "--max-examples",
            str(MAX_EXAMPLES),
            "--max-time",
            str(MAX_TIME),
            "--request-timeout",
            str(REQUEST_TIMEOUT),
            "--workers",
            "1",
            "--seed",
            "1",
            "--no-color",
            "--warnings",
            "off",
        ]
        with trio.fail_after(MAX_TIME + 2 * REQUEST_TIMEOUT + 60):
            result = await trio.run_process(command, capture_stdout=True, stderr=subprocess.STDOUT, check=False)
    report = result.stdout.decode(errors="replace")
    sections = [report.find(marker) for marker in ("=== ERRORS", "=== FAILURES") if marker in report]
    details = report[min(sections) :] if sections else report[-6000:]
    assert result.returncode == 0, details[:30000]
