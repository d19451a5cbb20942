"""Shared benchmark plumbing: start servers as subprocesses, drive them with Debian's `wrk`, parse figures.

Benchmarks are run by hand and print figures; they compare against the bare Quart-Trio hello-world run in
the same session (the machine is shared and noisy, so ratios mean more than absolute numbers).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADMIN_KEY = "bench-admin-key-0123456789abcdef"
WEBHOOK_SECRET = "bench-webhook-secret-0123456789"


@dataclasses.dataclass(frozen=True)
class Result:
    name: str
    requests_per_s: float
    p50_ms: float
    p99_ms: float
    errors: int

    def row(self, baseline: Result | None = None) -> str:
        ratio = f"{self.requests_per_s / baseline.requests_per_s:6.1%}" if baseline else "   -  "
        return (
            f"{self.name:<44} {self.requests_per_s:9.0f} req/s  p50 {self.p50_ms:7.2f} ms  "
            f"p99 {self.p99_ms:7.2f} ms  errors {self.errors:<5} ratio {ratio}"
        )


def free_port() -> int:
    """A free loopback port: the first free one of BENCH_PORTS ("18100-18199") if set, else any."""
    low, _, high = os.environ.get("BENCH_PORTS", "").partition("-")
    candidates = range(int(low), int(high or low) + 1) if low else [0]
    for port in candidates:
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            chosen = int(sock.getsockname()[1])
            if chosen not in _HANDED_OUT:
                _HANDED_OUT.add(chosen)
                return chosen
    raise RuntimeError(f"no free port in BENCH_PORTS={os.environ['BENCH_PORTS']}")


_HANDED_OUT: set[int] = set()


def wait_http(url: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{url} did not answer within {timeout}s") from None
            time.sleep(0.1)


@contextlib.contextmanager
def hello_server() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "bench" / "hello_app.py"), "--port", str(port)])
    try:
        wait_http(f"http://127.0.0.1:{port}/")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.contextmanager
def agentgov_server(**env: str) -> Iterator[str]:
    """`python run.py` on a free port with a throwaway SQLite database (override with DATABASE_URL)."""
    port = free_port()
    data_dir = tempfile.mkdtemp(prefix="agentgov-bench-")
    environ = {
        **os.environ,
        "DATA_DIR": data_dir,
        "ADMIN_KEY": ADMIN_KEY,
        "WEBHOOK_SECRET": WEBHOOK_SECRET,
        "LOG_LEVEL": "WARNING",
        **env,
    }
    proc = subprocess.Popen([sys.executable, str(ROOT / "run.py"), "--port", str(port)], env=environ, cwd=ROOT)
    try:
        wait_http(f"http://127.0.0.1:{port}/api/v1/health")
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(15)
        shutil.rmtree(data_dir, ignore_errors=True)


_UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def _ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text.strip()).groups()  # type: ignore[union-attr]
    return float(number) * _UNITS[unit]


def wrk(
    name: str,
    url: str,
    *,
    connections: int = 16,
    seconds: int = 8,
    script: str | None = None,
    headers: dict[str, str] | None = None,
) -> Result:
    """Run wrk (one thread) against `url`; `script` is Lua source for POST bodies and per-request headers."""
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is not installed: apt-get install -y wrk")
    args = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", url]
    for key, value in (headers or {}).items():
        args += ["-H", f"{key}: {value}"]
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(script or "")
    if script:
        args += ["-s", lua.name]
    try:
        out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(lua.name)
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M)[1])  # type: ignore[index]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M)[1])  # type: ignore[index]
    errors_match = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = int(errors_match[1]) if errors_match else 0
    if socket_errors:
        errors += sum(int(g) for g in socket_errors.groups())
    return Result(name, rps, p50, p99, errors)


def median_result(results: list[Result]) -> Result:
    """The per-field median of repeated runs of one target."""
    import statistics

    return Result(
        results[0].name,
        statistics.median(r.requests_per_s for r in results),
        statistics.median(r.p50_ms for r in results),
        statistics.median(r.p99_ms for r in results),
        sum(r.errors for r in results),
    )


def interleaved_runs(targets: dict[str, dict[str, object]], rounds: int, **opts: object) -> dict[str, list[Result]]:
    """Run every target once per round, alternating, and return each target's runs in round order.

    Alternating keeps a change in background load from landing on one target only.
    `targets` maps a name to `wrk` keyword arguments (at least `url`).
    """
    runs: dict[str, list[Result]] = {name: [] for name in targets}
    for _ in range(rounds):
        for name, kwargs in targets.items():
            runs[name].append(wrk(name, **{**opts, **kwargs}))  # type: ignore[arg-type]
    return runs


def interleaved(targets: dict[str, dict[str, object]], rounds: int, **opts: object) -> dict[str, Result]:
    """`interleaved_runs`, each target's median."""
    return {name: median_result(results) for name, results in interleaved_runs(targets, rounds, **opts).items()}


def paired_ratios(runs: list[Result], baseline: list[Result]) -> str:
    """Each round's requests per second against the baseline's in the same round: "median (low-high)". On a shared
    machine the load drifts between rounds; a ratio of two runs seconds apart drifts less than one of two medians."""
    import statistics

    ratios = sorted(run.requests_per_s / base.requests_per_s for run, base in zip(runs, baseline, strict=True))
    return f"{statistics.median(ratios):.1%} ({ratios[0]:.1%}-{ratios[-1]:.1%}, {len(ratios)} rounds)"


def create_tenant(base_url: str, name: str = "bench") -> dict[str, str]:
    import json

    request = urllib.request.Request(
        f"{base_url}/api/v1/tenants",
        data=json.dumps({"name": name}).encode(),
        headers={"X-Admin-Key": ADMIN_KEY, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]
