"""`python run.py --workers N`: N worker processes serving one port, supervised by this (parent) process.

The parent binds the listening socket once and hands it to every worker (each a full trio service, started as
`run.py serve --listen-fd FD`); the kernel spreads new connections over the workers accepting on it. The
parent does no request work. It restarts a worker that exits while the service runs (after 1 s, doubling up
to 30 s while workers keep dying within 10 s of their start), and on SIGTERM or SIGINT it forwards SIGTERM to
every worker, waits for them to finish their in-flight requests (`GRACEFUL_TIMEOUT` plus the actors' drain),
kills what is left after that, and exits 0.

Several workers need shared state: PostgreSQL (`DATABASE_URL`; SQLite has one writer) and Redis
(`REDIS_URL`: token revocations, throttling, caches). `check_settings` refuses N > 1 without them, naming the
setting. Processes on other machines are the same command with the same settings behind a load balancer.
"""

from __future__ import annotations

import logging
import os
import signal
import socket
import subprocess
import sys
import time
from types import FrameType

from agentgov.config import Settings

log = logging.getLogger("agentgov.supervisor")

RESTART_FIRST = 1.0
RESTART_MAX = 30.0
STABLE_AFTER = 10.0  # a worker that lived this long resets the restart delay
POLL_SECONDS = 0.2


def check_settings(settings: Settings, workers: int) -> str | None:
    """Why `workers` processes cannot share `settings`, or None when they can."""
    if workers < 1:
        return "--workers must be at least 1"
    if workers == 1:
        return None
    if not settings.database_url.startswith(("postgresql://", "postgres://")):
        return (
            f"--workers {workers} needs DATABASE_URL=postgresql://... : SQLite has a single writer, so only one "
            "process may use it (run without --workers, or move to PostgreSQL)"
        )
    if not settings.redis_url:
        return (
            f"--workers {workers} needs REDIS_URL: token revocations, login throttling and caches must be shared "
            "by every process"
        )
    return None


def listening_socket(host: str, port: int) -> socket.socket:
    """The socket every worker accepts on (inheritable). Raises `OSError` if the address cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.create_server((host, port), family=family, backlog=1024)
    sock.set_inheritable(True)
    return sock


class Supervisor:
    def __init__(self, settings: Settings, workers: int, sock: socket.socket) -> None:
        self.settings = settings
        self.count = workers
        self.sock = sock
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.started: dict[int, float] = {}
        self.delay: dict[int, float] = {}
        self.due: dict[int, float] = {}
        self.stopping = False

    def _spawn(self, index: int) -> None:
        fd = self.sock.fileno()
        command = [sys.executable, "-c", "from agentgov.cli import main; raise SystemExit(main())"]
        command += ["serve", "--listen-fd", str(fd)]
        env = {**os.environ, "AGENTGOV_WORKER": str(index)}
        proc = subprocess.Popen(command, pass_fds=(fd,), env=env)
        self.procs[index] = proc
        self.started[index] = time.monotonic()
        log.info(f"worker {index} started (pid {proc.pid})")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if not self.stopping:
            log.info(f"received {signal.Signals(signum).name}; stopping {len(self.procs)} workers gracefully")
        self.stopping = True

    def run(self) -> int:
        """Supervise until SIGTERM/SIGINT; return the exit code (0 after a graceful stop)."""
        signal.signal(signal.SIGTERM, self._on_signal)
        signal.signal(signal.SIGINT, self._on_signal)
        for index in range(1, self.count + 1):
            self._spawn(index)
        host, port = self.sock.getsockname()[:2]
        log.info(f"serving http://{host}:{port} with {self.count} workers", extra={"fields": {"pid": os.getpid()}})
        while not self.stopping:
            self._reap_and_restart()
            time.sleep(POLL_SECONDS)
        return self._stop_all()

    def _reap_and_restart(self) -> None:
        now = time.monotonic()
        for index, proc in list(self.procs.items()):
            code = proc.poll()
            if code is None:
                continue
            lived = now - self.started[index]
            previous = self.delay.get(index, 0.0)
            delay = RESTART_FIRST if lived >= STABLE_AFTER or not previous else min(RESTART_MAX, previous * 2)
            self.delay[index] = delay
            self.due[index] = now + delay
            del self.procs[index]
            log.warning(f"worker {index} (pid {proc.pid}) exited with {code} after {lived:.1f}s; restart in {delay:g}s")
        for index, due in list(self.due.items()):
            if now >= due:
                del self.due[index]
                self._spawn(index)

    def _stop_all(self) -> int:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + self.settings.graceful_timeout + 15
        for index, proc in self.procs.items():
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                log.error(f"worker {index} (pid {proc.pid}) did not stop in time; killing it")
                proc.kill()
                proc.wait()
        self.sock.close()
        log.info("all workers stopped")
        return 0


def run_workers(settings: Settings, workers: int) -> int:
    """Exit code: 2 when the settings cannot be shared (or the address not bound), else as `Supervisor.run`."""
    problem = check_settings(settings, workers)
    if problem is not None:
        print(f"configuration error: {problem}", file=sys.stderr)
        return 2
    try:
        sock = listening_socket(settings.host, settings.port)
    except OSError as exc:
        print(f"cannot listen on {settings.host}:{settings.port}: {exc}", file=sys.stderr)
        return 2
    return Supervisor(settings, workers, sock).run()
