"""SIEM forwarding cost and delivery: `POST /api/v1/audit/log` throughput of a service forwarding every entry
to a syslog receiver over TCP, as a ratio to the same service without forwarding, measured in the same run
(alternating rounds); then how long the forwarder takes to deliver the backlog the load left, and whether
every entry arrived. Run by hand; prints figures.

    python bench/siem_bench.py [--seconds 8] [--rounds 3] [--clients 50] [--format cef]

Needs Debian's `wrk`. The receiver is a TCP sink in this process (a thread counting octet-counted frames);
each server is `python run.py` on its own SQLite database.
"""

from __future__ import annotations

import argparse
import re
import socket
import threading
import time

from audit_bench import _call, audit_log_script
from harness import ADMIN_KEY, Result, agentgov_server, create_tenant, median_result, wrk


class Sink:
    """Accepts TCP connections and counts RFC 6587 octet-counted frames (and the event ids in them)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.frames = 0
        self.event_ids: set[str] = set()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        buffer = b""
        with conn:
            while data := conn.recv(1 << 16):
                buffer += data
                while True:
                    space = buffer.find(b" ")
                    if space < 0:
                        break
                    length = int(buffer[:space])
                    if len(buffer) < space + 1 + length:
                        break
                    frame = buffer[space + 1 : space + 1 + length]
                    buffer = buffer[space + 1 + length :]
                    self.frames += 1
                    match = re.search(rb'eventId="([^"]+)"', frame)
                    if match:
                        self.event_ids.add(match[1].decode())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--format", default="cef", choices=("cef", "leef", "json"))
    args = parser.parse_args()
    sink = Sink()
    siem_env = {
        "SIEM_TRANSPORT": "syslog-tcp",
        "SIEM_HOST": "127.0.0.1",
        "SIEM_PORT": str(sink.port),
        "SIEM_FORMAT": args.format,
        "SIEM_FLUSH_INTERVAL": "0.5",
        "SIEM_BATCH_SIZE": "500",
    }
    with agentgov_server() as plain, agentgov_server(**siem_env) as forwarding:
        targets = {}
        for name, base in (("without forwarding", plain), ("forwarding to syslog-tcp", forwarding)):
            key = create_tenant(base, f"bench-{int(time.time())}")["api_key"]
            agent = _call(base, "POST", "/api/v1/agents/register", key, {"name": "bench-agent", "type": "tool"})
            targets[name] = (base, key, agent["id"])
        runs: dict[str, list[Result]] = {name: [] for name in targets}
        for _ in range(args.rounds):
            for name, (base, key, agent_id) in targets.items():
                runs[name].append(
                    wrk(
                        f"POST /audit/log, {name} ({args.clients} clients)",
                        base + "/api/v1/audit/log",
                        connections=args.clients,
                        seconds=args.seconds,
                        script=audit_log_script(agent_id),
                        headers={"X-API-Key": key, "Content-Type": "application/json"},
                    )
                )
        stopped = time.perf_counter()
        base, key, _ = targets["forwarding to syslog-tcp"]
        status: dict = {}
        while time.perf_counter() - stopped < 300:
            status = _status(base)
            if status["outbox_depth"] == 0:
                break
            time.sleep(0.1)
        drained_s = time.perf_counter() - stopped
        stored = _call(base, "GET", "/api/v1/audit?limit=1", key)["total"]

    plain_result = median_result(runs["without forwarding"])
    forwarding_result = median_result(runs["forwarding to syslog-tcp"])
    print(f"{args.seconds}s per run, {args.rounds} alternating rounds, wrk 1 thread, SQLite, format {args.format}")
    print(plain_result.row())
    print(forwarding_result.row(plain_result))
    print(
        f"backlog delivered {drained_s:.1f}s after the load stopped; entries stored {stored}, "
        f"distinct event ids received {len(sink.event_ids)}, frames {sink.frames}; "
        f"status sent={status.get('sent')} failed={status.get('failed')} dropped={status.get('dropped')}"
    )


def _status(base: str) -> dict:
    import json
    import urllib.request

    request = urllib.request.Request(f"{base}/api/v1/siem/status", headers={"X-Admin-Key": ADMIN_KEY})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


if __name__ == "__main__":
    main()
