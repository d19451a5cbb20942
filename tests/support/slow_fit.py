"""A training fit that takes as long as a test needs: it records its process id, then waits until released
(and then fits for real) or killed. Runs in the training worker process, so it is a top-level function and
its arguments are picklable (use `functools.partial`)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from agentgov.detection.anomaly import fit_anomaly
from agentgov.detection.lifecycle import FitResult


def slow_fit(pid_file: str, release_file: str, payload: Any, params: dict[str, Any]) -> FitResult:
    Path(pid_file).write_text(str(os.getpid()))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if Path(release_file).exists():
            return fit_anomaly(payload, params)
        time.sleep(0.01)
    raise ValueError("the slow fit was never released")


def process_gone(pid: int) -> bool:
    """True once `pid` no longer runs (absent, or a zombie waiting to be reaped)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return True
    return "\nState:\tZ" in status or "\nState:\tX" in status
