#!/usr/bin/env python3
"""Notification latency at N connected WebSocket subscribers (run by hand; prints figures).

    python bench/notify_bench.py [--clients 1000] [--rounds 30] [--client raw|trio-websocket]
                                 [--database-url sqlite:///...]

What it does:

1. Starts the service (`run.py`) in its own process on a free port, with a fresh SQLite database in a
   temporary directory (or `--database-url`).
2. Creates a tenant with an Admin user, logs in (JWT for the WebSocket), registers an agent.
3. Starts ONE client process that opens `--clients` WebSocket connections to `/api/v1/ws?token=...`. The
   default `raw` client reads every socket in one epoll loop and parses frames by hand, taking the receipt
   time before parsing, so it adds a few microseconds per delivery; `--client trio-websocket` uses a
   trio-websocket connection per subscriber (its own per-message parsing then dominates the figures).
4. Each round, the client process records `t0`, sends a `POST /api/v1/policies/check` that the tenant's
   policies deny (a tenant without policies denies by default), and records when each subscriber receives the
   resulting `policy.violated` event. If the policy check endpoint is not available it falls back to
   `POST /api/v1/hitl/request` and its `hitl.requested` event (and says so).

Latency = receipt time in a subscriber - `t0` (one clock: both are taken in the client process), so it covers
the HTTP request, the policy decision, the fan-out in the notifier, the WebSocket writes and the client's own
reading (1,000 clients share one Python process, which adds to the tail). Figures: per delivery (all
subscribers x rounds) and per round (until the last subscriber has it).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parent.parent
CONNECT_BATCH = 50


# ---------------------------------------------------------------------------------------------- server side


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(port: int, database_url: str, data_dir: str, admin_key: str) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "ADMIN_KEY": admin_key,
        "JWT_SECRET": secrets.token_urlsafe(32),
        "WEBHOOK_SECRET": secrets.token_urlsafe(32),
        "DATABASE_URL": database_url,
        "DATA_DIR": data_dir,
        "LOG_LEVEL": "WARNING",
    }
    profile = os.environ.get("NOTIFY_BENCH_PROFILE")  # a file: run the server under cProfile
    command = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else []), str(ROOT / "run.py")]
    return subprocess.Popen([*command, "--host", "127.0.0.1", "--port", str(port)], cwd=ROOT, env=env)


def wait_ready(base: str, server: subprocess.Popen[bytes]) -> None:
    import httpx

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"the server exited with {server.returncode}")
        try:
            if httpx.get(f"{base}/api/v1/health", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not start within 60 s")


def set_up(base: str, admin_key: str) -> dict[str, Any]:
    """Tenant, Admin user (JWT), agent; and which trigger is available."""
    import httpx

    with httpx.Client(base_url=base, timeout=30) as http:
        password = "bench " + secrets.token_urlsafe(16)
        tenant = http.post(
            "/api/v1/tenants",
            json={"name": "bench", "admin_email": "bench@example.com", "admin_password": password},
            headers={"X-Admin-Key": admin_key},
        )
        tenant.raise_for_status()
        api_key = tenant.json()["api_key"]
        login = http.post("/api/v1/auth/login", json={"email": "bench@example.com", "password": password})
        login.raise_for_status()
        agent = http.post(
            "/api/v1/agents/register",
            json={"name": "bench agent", "type": "llm"},
            headers={"X-API-Key": api_key},
        )
        agent.raise_for_status()
        agent_id = agent.json()["id"]
        probe = http.post(
            "/api/v1/policies/check",
            json={"agent_id": agent_id, "action": "probe", "resource": "bench-probe", "context": {}},
            headers={"X-API-Key": api_key},
        )
        if probe.status_code == 200 and probe.json().get("allowed") is False:
            trigger = "policy"
        else:
            print(f"(POST /policies/check answered {probe.status_code}; measuring from POST /hitl/request)")
            trigger = "hitl"
    return {"api_key": api_key, "token": login.json()["access_token"], "agent_id": agent_id, "trigger": trigger}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--database-url", default="")
    parser.add_argument(
        "--client",
        choices=("raw", "trio-websocket"),
        default="raw",
        help="raw (default): one epoll loop reads every socket and parses frames by hand, so the client adds "
        "little; trio-websocket: a trio-websocket connection per subscriber (the client's own per-message "
        "cost then adds to the figures)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # JSON: run as the client process
    args = parser.parse_args()
    if args.worker:
        spec = json.loads(args.worker)
        if spec["client"] == "raw":
            run_raw_clients(spec)
        else:
            import trio

            trio.run(run_clients, spec)
        return

    data_dir = tempfile.mkdtemp(prefix="agentgov-bench-")
    port, admin_key = free_port(), secrets.token_urlsafe(24)
    database_url = args.database_url or f"sqlite:///{data_dir}/bench.db"
    base = f"http://127.0.0.1:{port}"
    server = start_server(port, database_url, data_dir, admin_key)
    try:
        wait_ready(base, server)
        setup = set_up(base, admin_key)
        spec = {**setup, "base": base, "clients": args.clients, "rounds": args.rounds, "client": args.client}
        print(
            f"server pid {server.pid} on {base} ({database_url.split(':')[0]}); {args.clients} subscribers in a "
            f"separate client process ({args.client} client); trigger: "
            + (
                "POST /policies/check (denied) -> policy.violated"
                if setup["trigger"] == "policy"
                else "POST /hitl/request -> hitl.requested"
            ),
            flush=True,
        )
        subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], check=True, cwd=ROOT)
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        shutil.rmtree(data_dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------- client side


async def run_clients(spec: dict[str, Any]) -> None:
    import httpx
    import trio
    from trio_websocket import wrap_client_stream

    clients, rounds, trigger = spec["clients"], spec["rounds"], spec["trigger"]
    event_name = "policy.violated" if trigger == "policy" else "hitl.requested"
    parts = urlsplit(spec["base"])
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    resource = f"/api/v1/ws?token={spec['token']}"
    received: list[list[float]] = [[] for _ in range(rounds)]
    done = [trio.Event() for _ in range(rounds)]
    connected = 0
    all_connected = trio.Event()

    async def subscriber(task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
        nonlocal connected
        stream = await trio.open_tcp_stream(host, port)
        async with stream, trio.open_nursery() as nursery:
            ws = await wrap_client_stream(nursery, stream, host, resource, message_queue_size=64)
            first = json.loads(await ws.get_message())
            assert first["event"] == "system.status", first
            connected += 1
            if connected == clients:
                all_connected.set()
            task_status.started()
            while True:
                message = await ws.get_message()
                now = time.monotonic()
                envelope = json.loads(message)
                if envelope["event"] != event_name:
                    continue
                n = int(envelope["data"]["resource"].rsplit("-", 1)[1])
                received[n].append(now)
                if len(received[n]) == clients:
                    done[n].set()

    started = time.monotonic()
    results: list[dict[str, float]] = []
    async with trio.open_nursery() as nursery:
        for batch in range(0, clients, CONNECT_BATCH):
            async with trio.open_nursery() as connecting:
                for _ in range(min(CONNECT_BATCH, clients - batch)):
                    connecting.start_soon(nursery.start, subscriber)
        with trio.fail_after(120):
            await all_connected.wait()
        print(f"{clients} subscribers connected in {time.monotonic() - started:.1f} s", flush=True)

        async with httpx.AsyncClient(base_url=spec["base"], timeout=30) as http:
            headers = {"X-API-Key": spec["api_key"]}
            for n in range(rounds):
                url, body = trigger_request(spec, n)
                t0 = time.monotonic()
                response = await http.post(url, json=body, headers=headers)
                t_http = time.monotonic()
                response.raise_for_status()
                with trio.fail_after(60):
                    await done[n].wait()
                latencies = sorted(t - t0 for t in received[n])
                results.append({"http": t_http - t0, "first": latencies[0], "last": latencies[-1], "all": latencies})  # type: ignore[dict-item]
                await trio.sleep(0.2)  # let the clients settle between rounds
        nursery.cancel_scope.cancel()
    report(results, clients)


def _ws_handshakes(host: str, port: int, resource: str, count: int) -> list[socket.socket]:
    """`count` upgraded WebSockets (non-blocking sockets): every upgrade request is sent before any answer
    is read, so the server handles them concurrently. Raises `RuntimeError` if an upgrade is refused."""
    sockets = []
    for _ in range(count):
        sock = socket.create_connection((host, port))
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                f"GET {resource} HTTP/1.1\r\nHost: {host}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        sockets.append(sock)
    for sock in sockets:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                raise RuntimeError("connection closed during the WebSocket upgrade")
            head += chunk
        status_line = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status_line:
            raise RuntimeError(f"upgrade refused: {status_line!r}")
        sock.setblocking(False)
        _RAW_BUFFERS[sock.fileno()] = bytearray(head.split(b"\r\n\r\n", 1)[1])
    return sockets


_RAW_BUFFERS: dict[int, bytearray] = {}


def _frames(buffer: bytearray) -> list[bytes]:
    """Complete unmasked server frames' payloads taken off the front of `buffer` (text, binary, control)."""
    payloads = []
    while len(buffer) >= 2:
        length, offset = buffer[1] & 0x7F, 2
        if length == 126:
            if len(buffer) < 4:
                break
            length, offset = int.from_bytes(buffer[2:4], "big"), 4
        elif length == 127:
            if len(buffer) < 10:
                break
            length, offset = int.from_bytes(buffer[2:10], "big"), 10
        if len(buffer) < offset + length:
            break
        payloads.append(bytes(buffer[offset : offset + length]))
        del buffer[: offset + length]
    return payloads


def run_raw_clients(spec: dict[str, Any]) -> None:
    """Every subscriber on one epoll loop in this thread; the trigger requests from another thread.

    Receipt time is taken when a socket's bytes are read, before any parsing, so the figures are the
    server's delivery latency plus a few microseconds of client work per subscriber.
    """
    import http.client
    import re
    import selectors
    import threading

    clients, rounds, trigger = spec["clients"], spec["rounds"], spec["trigger"]
    marker = b'"policy.violated"' if trigger == "policy" else b'"hitl.requested"'
    round_of = re.compile(rb"bench-(\d+)")
    parts = urlsplit(spec["base"])
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    resource = f"/api/v1/ws?token={spec['token']}"
    started = time.monotonic()
    selector = selectors.DefaultSelector()
    sockets = []
    for batch in range(0, clients, 100):
        sockets += _ws_handshakes(host, port, resource, min(100, clients - batch))
    for sock in sockets:
        selector.register(sock, selectors.EVENT_READ)
    received: list[list[float]] = [[] for _ in range(rounds)]
    greeted = 0
    while greeted < clients:  # every subscriber's first message is system.status
        for key, _ in selector.select(timeout=60):
            sock = key.fileobj
            buffer = _RAW_BUFFERS[sock.fileno()]  # type: ignore[union-attr]
            buffer.extend(sock.recv(65536))  # type: ignore[union-attr]
            greeted += sum(1 for payload in _frames(buffer) if b'"system.status"' in payload)
    print(f"{clients} subscribers connected in {time.monotonic() - started:.1f} s", flush=True)

    t0s: list[float] = [0.0] * rounds
    https: list[float] = [0.0] * rounds
    go = [threading.Event() for _ in range(rounds)]
    errors: list[BaseException] = []

    def trigger_rounds() -> None:
        try:
            connection = http.client.HTTPConnection(host, port, timeout=30)
            headers = {"X-API-Key": spec["api_key"], "Content-Type": "application/json"}
            for n in range(rounds):
                go[n].wait()
                url, body = trigger_request(spec, n)
                payload = json.dumps(body).encode()
                t0s[n] = time.monotonic()
                connection.request("POST", url, body=payload, headers=headers)
                response = connection.getresponse()
                response.read()
                https[n] = time.monotonic() - t0s[n]
                if response.status >= 300:
                    raise RuntimeError(f"trigger answered {response.status}")
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)

    thread = threading.Thread(target=trigger_rounds, daemon=True)
    thread.start()
    results: list[dict[str, Any]] = []
    for n in range(rounds):
        time.sleep(0.2)  # let the previous round settle
        go[n].set()
        deadline = time.monotonic() + 60
        while len(received[n]) < clients:
            if errors:
                raise errors[0]
            if time.monotonic() > deadline:
                raise RuntimeError(f"round {n}: {len(received[n])} of {clients} deliveries in 60 s")
            for key, _ in selector.select(timeout=1):
                now = time.monotonic()
                sock = key.fileobj
                buffer = _RAW_BUFFERS[sock.fileno()]  # type: ignore[union-attr]
                data = sock.recv(65536)  # type: ignore[union-attr]
                if not data:
                    raise RuntimeError("a subscriber was disconnected")
                buffer.extend(data)
                for payload in _frames(buffer):
                    if marker in payload and (match := round_of.search(payload)):
                        received[int(match.group(1))].append(now)
        while https[n] == 0.0 and not errors:
            time.sleep(0.001)
        latencies = sorted(t - t0s[n] for t in received[n])
        results.append({"http": https[n], "first": latencies[0], "last": latencies[-1], "all": latencies})
    for sock in sockets:
        sock.close()
    report(results, clients)


def trigger_request(spec: dict[str, Any], n: int) -> tuple[str, dict[str, Any]]:
    """(path, JSON body) of round `n`'s trigger: a denied check, or an approval request."""
    if spec["trigger"] == "policy":
        body = {"agent_id": spec["agent_id"], "action": "transfer_funds", "resource": f"bench-{n}", "context": {}}
        return "/api/v1/policies/check", body
    return "/api/v1/hitl/request", {"agent_id": spec["agent_id"], "action": "transfer_funds", "resource": f"bench-{n}"}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def report(results: list[dict[str, Any]], clients: int) -> None:
    every = [x for r in results for x in r["all"]]
    ms = 1000.0

    def line(name: str, values: list[float]) -> str:
        return (
            f"{name:<38} p50 {pct(values, 50) * ms:7.1f}  p95 {pct(values, 95) * ms:7.1f}  "
            f"p99 {pct(values, 99) * ms:7.1f}  max {max(values) * ms:7.1f} ms"
        )

    print(f"{len(results)} rounds x {clients} subscribers = {len(every)} deliveries")
    print(line("HTTP trigger round trip", [r["http"] for r in results]))
    print(line("delivery latency (every subscriber)", every))
    print(line("first subscriber of a round", [r["first"] for r in results]))
    print(line("last subscriber of a round", [r["last"] for r in results]))
    print(f"mean delivery latency {statistics.fmean(every) * ms:.1f} ms")
    if os.environ.get("NOTIFY_BENCH_ROUNDS"):  # print every round too
        for n, r in enumerate(results):
            times = f"http {r['http'] * ms:7.1f}  first {r['first'] * ms:7.1f}  last {r['last'] * ms:7.1f}"
            print(f"  round {n:3d}: {times}")


if __name__ == "__main__":
    main()
