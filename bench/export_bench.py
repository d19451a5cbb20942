"""Streamed audit exports of a large trail: time, throughput, and the server process's peak memory growth.

`python bench/export_bench.py [--entries 1000000] [--formats csv,jsonl] [--data-dir DIR]`

Builds (or reuses, with `--data-dir`) an SQLite database holding one tenant with `--entries` chained audit
entries (written in batches through the same chaining code the audit actor uses), starts `python run.py` on it,
and streams `GET /api/v1/audit/export?format=...` through HTTP, counting bytes. Peak memory: the server's
resident set before the export, and its high-water mark during it (`/proc/<pid>/status` VmRSS and VmHWM, the
mark reset through `/proc/<pid>/clear_refs` just before). Baseline in the same run: reading the same entries
page by page straight from the database in this process (no encoding, no HTTP); the export's time is also
given as a ratio of it. Finally the export's manifest is fetched and the file checked with `verify-export`.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

import trio
from harness import ADMIN_KEY, ROOT, WEBHOOK_SECRET, free_port, wait_http

from agentgov.config import Settings
from agentgov.storage import open_database
from agentgov.storage.audit import AuditRepo, ExportFilter, PendingEntry, append_batch, open_chain

BATCH = 10_000


def server_env(data_dir: str) -> dict[str, str]:
    return {
        **os.environ,
        "DATA_DIR": data_dir,
        "ADMIN_KEY": ADMIN_KEY,
        "WEBHOOK_SECRET": WEBHOOK_SECRET,
        "LOG_LEVEL": "WARNING",
    }


def start_server(data_dir: str) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "run.py"), "--port", str(port)], env=server_env(data_dir), cwd=ROOT
    )
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/api/v1/health")
    return proc, url


def call(url: str, method: str = "GET", body: dict | None = None, headers: dict | None = None) -> dict:
    request = urllib.request.Request(
        url,
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **(headers or {})},
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/{pid}/status")


async def fill_trail(data_dir: str, tenant_id: str, agent_id: str, entries: int) -> None:
    settings = Settings.from_env(server_env(data_dir))
    db = await open_database(settings.effective_database_url)
    try:
        state = await db.write(lambda c: open_chain(c, tenant_id, settings.effective_audit_secret))
        key, head = state.key, state.head
        written = 0
        while written < entries:
            size = min(BATCH, entries - written)
            pending = [
                PendingEntry(
                    id=str(uuid.uuid4()),
                    kind="action",
                    agent_id=agent_id,
                    actor="bench",
                    action="read_file",
                    resource=f"repo/file-{written + n}.py",
                    input=json.dumps({"path": f"src/{n}.py", "lines": n}),
                    output=None,
                    reasoning=None,
                    risk_score=0.1,
                    is_approved=None,
                    decision=None,
                    dedup_key=None,
                    occurred_at=None,
                )
                for n in range(size)
            ]
            result = await db.write(lambda c, p=pending, h=head: append_batch(c, tenant_id, key, h, p))
            head = result.head
            written += size
    finally:
        await db.close()


async def _read_baseline(data_dir: str, tenant_id: str) -> tuple[int, float]:
    settings = Settings.from_env(server_env(data_dir))
    db = await open_database(settings.effective_database_url)
    try:
        repo, after, rows, started = AuditRepo(db), 0, 0, time.perf_counter()
        while True:
            page = await repo.export_page(tenant_id, ExportFilter(), after_sequence=after, limit=1000)
            if not page:
                break
            rows += len(page)
            after = page[-1].sequence
        return rows, time.perf_counter() - started
    finally:
        await db.close()


def ensure_trail(data_dir: str, entries: int) -> dict:
    """The bench tenant of `data_dir` ({"tenant", "agent"}), created with `entries` entries on first use."""
    ids_file = Path(data_dir) / "bench-ids.json"
    if not ids_file.exists():
        proc, url = start_server(data_dir)
        try:
            tenant = call(f"{url}/api/v1/tenants", "POST", {"name": "export-bench"}, {"X-Admin-Key": ADMIN_KEY})
            agent = call(
                f"{url}/api/v1/agents/register",
                "POST",
                {"name": "bot", "type": "tool"},
                {"X-API-Key": tenant["api_key"]},
            )
        finally:
            proc.terminate()
            proc.wait(15)
        started = time.perf_counter()
        trio.run(fill_trail, data_dir, tenant["id"], agent["id"], entries)
        print(f"filled {entries:,} entries in {time.perf_counter() - started:.1f} s")
        ids_file.write_text(json.dumps({"tenant": tenant, "agent": agent}))
    return json.loads(ids_file.read_text())  # type: ignore[no-any-return]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--formats", default="csv,jsonl")
    parser.add_argument("--data-dir", default="")
    args = parser.parse_args()
    data_dir = args.data_dir or tempfile.mkdtemp(prefix="agentgov-export-bench-")
    try:
        ids = ensure_trail(data_dir, args.entries)
        rows, baseline = trio.run(_read_baseline, data_dir, ids["tenant"]["id"])
        print(
            f"baseline: {rows:,} entries read page by page from the database in {baseline:.1f} s "
            f"({rows / baseline:,.0f}/s)"
        )
        proc, url = start_server(data_dir)
        try:
            key = ids["tenant"]["api_key"]
            for fmt in args.formats.split(","):
                rss = _kib(proc.pid, "VmRSS")
                Path(f"/proc/{proc.pid}/clear_refs").write_text("5")  # reset the high-water mark
                target = Path(data_dir) / f"export.{fmt}"
                request = urllib.request.Request(f"{url}/api/v1/audit/export?format={fmt}", headers={"X-API-Key": key})
                started = time.perf_counter()
                with urllib.request.urlopen(request) as response, target.open("wb") as out:
                    export_id = response.headers["X-Export-Id"]
                    while chunk := response.read(1 << 20):
                        out.write(chunk)
                took = time.perf_counter() - started
                peak = _kib(proc.pid, "VmHWM")
                size = target.stat().st_size
                print(
                    f"export {fmt}: {rows:,} entries, {size / 1e6:,.0f} MB in {took:.1f} s "
                    f"({rows / took:,.0f} entries/s, {size / 1e6 / took:.0f} MB/s; {took / baseline:.1f}x the "
                    f"database read) | server RSS before {rss / 1024:.0f} MB, peak during "
                    f"{peak / 1024:.0f} MB: growth {(peak - rss) / 1024:.1f} MB"
                )
                manifest = call(f"{url}/api/v1/audit/export/manifest/{export_id}", headers={"X-API-Key": key})
                public = call(f"{url}/api/v1/audit/export/public-key")
                (Path(data_dir) / "manifest.json").write_text(json.dumps(manifest))
                (Path(data_dir) / "key.pem").write_text(public["public_key_pem"])
                started = time.perf_counter()
                check = subprocess.run(
                    [
                        sys.executable,
                        str(ROOT / "run.py"),
                        "verify-export",
                        str(target),
                        "--manifest",
                        str(Path(data_dir) / "manifest.json"),
                        "--public-key",
                        str(Path(data_dir) / "key.pem"),
                    ],
                    capture_output=True,
                    text=True,
                    check=False,
                )
                print(
                    f"  verify-export: exit {check.returncode} in {time.perf_counter() - started:.1f} s: "
                    f"{check.stdout.strip()[:100]}"
                )
                target.unlink()
        finally:
            proc.terminate()
            proc.wait(15)
    finally:
        if not args.data_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
