"""The guard through HTTP, for `bench/guard_eval.py --http`: quality of `POST /api/v1/guard/validate` on a data
set, and validations per second against a bare Quart-Trio hello-world in the same run (wrk, alternating)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable

from harness import agentgov_server, create_tenant, hello_server, interleaved_runs, median_result, paired_ratios

SHORT = "Please summarise the attached quarterly report for the board in three short bullet points, thanks."
LONG = (SHORT + " ") * 20  # about 2,000 characters
HELLO = "bare Quart-Trio hello-world"


def _post(base: str, key: str, prompt: str) -> dict:
    request = urllib.request.Request(
        f"{base}/api/v1/guard/validate",
        data=json.dumps({"prompt": prompt}).encode(),
        headers={"X-API-Key": key, "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


def _script(prompt: str) -> str:
    body = json.dumps(json.dumps({"prompt": prompt}))
    return f'wrk.method = "POST"\nwrk.body = {body}\nwrk.headers["Content-Type"] = "application/json"\n'


def http_figures(rows: list[dict], seconds: int, rounds: int, quality: Callable[..., None]) -> None:
    with hello_server() as hello, agentgov_server() as base:
        key = create_tenant(base)["api_key"]
        answers = [_post(base, key, row["text"]) for row in rows]
        quality(rows, [a["score"] for a in answers], [a["verdict"] == "block" for a in answers], "through HTTP")
        server_ms = sorted(a["latency_ms"] for a in answers)
        print(f"  server-side latency_ms over the data set: p50 {server_ms[len(server_ms) // 2]:.2f}")
        headers = {"X-API-Key": key}
        runs = interleaved_runs(
            {
                HELLO: {"url": hello + "/"},
                f"POST /guard/validate ({len(SHORT)} chars)": {
                    "url": base + "/api/v1/guard/validate",
                    "script": _script(SHORT),
                    "headers": headers,
                },
                f"POST /guard/validate ({len(LONG)} chars)": {
                    "url": base + "/api/v1/guard/validate",
                    "script": _script(LONG),
                    "headers": headers,
                },
            },
            rounds,
            seconds=seconds,
            connections=16,
        )
    baseline_runs = runs.pop(HELLO)
    baseline = median_result(baseline_runs)
    print(baseline.row())
    for target_runs in runs.values():
        print(median_result(target_runs).row(baseline))
        print(f"    per round, against the hello-world of the same round: {paired_ratios(target_runs, baseline_runs)}")
