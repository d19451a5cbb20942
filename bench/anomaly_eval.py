"""Anomaly-detector quality end to end, through the service's HTTP API.

`python bench/anomaly_eval.py [--data ../shared/data/anomaly/dev.jsonl] [--database-url URL]`

Starts `python run.py`, and for each tenant of the data set (twice: with and without `reasoning`) creates a
tenant, registers its agents, replays the `train` split over HTTP with its event times (`timestamp`), trains
through `POST /anomalies/detector/train`, replays the `test` split in time order, reads every entry's
`anomaly` back (`GET /audit/{id}`), and prints ROC-AUC pooled, per tenant and per anomaly type, and the
false-positive rate, recall and precision at the threshold calibrated on the history alone. The evaluation
fields of the data (label, type, split, scenario, session) never reach the service.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from harness import ADMIN_KEY, agentgov_server
from sklearn.metrics import roc_auc_score

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "anomaly" / "dev.jsonl"
SENT = ("action", "resource", "input", "output", "risk_score", "is_approved", "timestamp")


def entry_body(row: dict[str, Any], agent_id: str, reasoning: bool) -> dict[str, Any]:
    body = {k: row[k] for k in SENT if row.get(k) is not None}
    body["agent_id"] = agent_id
    if reasoning and row.get("reasoning"):
        body["reasoning"] = [str(step)[:4000] for step in row["reasoning"]][:200]
    return body


def replay_tenant(base: str, name: str, rows: list[dict[str, Any]], reasoning: bool) -> list[tuple[dict, dict]]:
    """Returns (row, anomaly verdict) for each test row."""
    with httpx.Client(base_url=base, timeout=60) as http:
        tenant = http.post("/api/v1/tenants", json={"name": name}, headers={"X-Admin-Key": ADMIN_KEY}).json()
        headers = {"X-API-Key": tenant["api_key"]}
        agents: dict[str, str] = {}
        for source_id in sorted({r["agent_id"] for r in rows}):
            created = http.post(
                "/api/v1/agents/register", json={"name": f"agent {source_id[:8]}", "type": "tool"}, headers=headers
            )
            agents[source_id] = created.json()["id"]
        train = [r for r in rows if r["split"] == "train"]
        test = sorted((r for r in rows if r["split"] == "test"), key=lambda r: r["timestamp"])

        def post(row: dict[str, Any]) -> dict[str, Any]:
            response = http.post(
                "/api/v1/audit/log", json=entry_body(row, agents[row["agent_id"]], reasoning), headers=headers
            )
            response.raise_for_status()
            return response.json()

        with ThreadPoolExecutor(8) as pool:  # history order does not matter: training reads it by event time
            list(pool.map(post, train))
        accepted = http.post("/api/v1/anomalies/detector/train", json={}, headers=headers).json()
        while (task := http.get(accepted["status_url"], headers=headers).json())["status"] in ("queued", "running"):
            time.sleep(0.1)
        if task["status"] != "succeeded":
            raise SystemExit(f"training failed for {name}: {task}")
        ids = [post(row)["id"] for row in test]  # in time order: context matters
        verdicts = []
        for entry_id in ids:
            while (entry := http.get(f"/api/v1/audit/{entry_id}", headers=headers).json())["anomaly"] is None:
                time.sleep(0.05)
            verdicts.append(entry["anomaly"])
        return list(zip(test, verdicts, strict=True))


def report(results: list[tuple[dict, dict]]) -> dict[str, float]:
    labels = [int(r["label"] == "anomaly") for r, _ in results]
    scores = [v["score"] for _, v in results]
    out = {"pooled": roc_auc_score(labels, scores)}
    for tenant in sorted({r["tenant"] for r, _ in results}):
        sub = [(r, v) for r, v in results if r["tenant"] == tenant]
        out[f"tenant {tenant}"] = roc_auc_score(
            [int(r["label"] == "anomaly") for r, _ in sub], [v["score"] for _, v in sub]
        )
    for kind in sorted({r["anomaly_type"] for r, _ in results if r["anomaly_type"]}):
        sub = [(r, v) for r, v in results if r["label"] == "normal" or r["anomaly_type"] == kind]
        out[f"type {kind}"] = roc_auc_score(
            [int(r["label"] == "anomaly") for r, _ in sub], [v["score"] for _, v in sub]
        )
    normal = [v for r, v in results if r["label"] == "normal"]
    anomalous = [v for r, v in results if r["label"] == "anomaly"]
    flagged = [r for r, v in results if v["is_anomaly"]]
    out["fpr_at_threshold"] = sum(v["is_anomaly"] for v in normal) / len(normal)
    out["recall_at_threshold"] = sum(v["is_anomaly"] for v in anomalous) / len(anomalous)
    out["precision_at_threshold"] = sum(r["label"] == "anomaly" for r in flagged) / max(1, len(flagged))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    by_tenant: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_tenant[row["tenant"]].append(row)
    env = {"DATABASE_URL": args.database_url} if args.database_url else {}
    with agentgov_server(ANOMALY_AUTO_TRAIN="off", **env) as base:
        for reasoning in (False, True):
            started = time.perf_counter()
            results = []
            for tenant, items in sorted(by_tenant.items()):
                results += replay_tenant(base, f"{tenant}-{'r' if reasoning else 'n'}", items, reasoning)
            figures = report(results)
            print(f"== {'with' if reasoning else 'without'} reasoning ({time.perf_counter() - started:.0f} s)")
            for name, value in figures.items():
                print(f"  {name:32s} {value:8.3f}")


if __name__ == "__main__":
    main()
