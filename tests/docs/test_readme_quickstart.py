"""The README's quickstart, pasted as one block into bash, runs the core flow end to end against a real
service process: it waits for /health, creates a tenant, registers an agent, writes a policy, checks two
actions and reads their audit entries and the chain's verification."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
INSTALL_LINE = "python3 -m venv .venv && . .venv/bin/activate && pip install -q -e .\n"


def quickstart_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Quickstart") :]
    section = section[: section.index("\n## ", 1)]
    match = re.search(r"```sh\n(.*?)```", section, re.S)
    assert match, "the quickstart has a sh block"
    return match.group(1)


@pytest.mark.skipif(shutil.which("curl") is None, reason="the quickstart uses curl, which is not installed")
def test_the_quickstart_runs_the_core_flow(tmp_path: Path) -> None:
    block = quickstart_block()
    assert block.startswith(INSTALL_LINE)  # installed already here: the rest runs in this environment
    port = free_port()
    script = block.removeprefix(INSTALL_LINE).replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    script = script.replace("> agentgov.log", f"> {tmp_path / 'agentgov.log'}")
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PORT": str(port),
        "DATA_DIR": str(tmp_path),
    }
    process = subprocess.Popen(
        ["bash", "-c", "set -o pipefail\n" + script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=180)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    log = (tmp_path / "agentgov.log").read_text(encoding="utf-8", errors="replace")
    assert process.returncode == 0, output + log
    assert '{"status":"ok"}' in output, output + log
    assert "created policy starter version 1" in output
    assert "read allowed: True" in output and "Allowed by permit policy 'allow-active'" in output
    assert "delete allowed: False | high | Denied by forbid policy 'no-deletes'" in output
    assert "audit entries: 2 [('delete', 'policy_check'), ('read', 'policy_check')]" in output
    assert "chain intact: True" in output
