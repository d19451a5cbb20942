"""Offline quality of the anomaly model on the development set (no service involved).

`python bench/anomaly_model_eval.py [--data ../shared/data/anomaly/dev.jsonl]`

Per tenant: fit on the `train` split, replay `test` in time order through a scorer primed with the history,
then print ROC-AUC pooled, per tenant and per anomaly type (each type against every normal test entry), and
false-positive rate / recall / precision at the threshold calibrated on the history — with and without
`reasoning`. Also fit time and scoring time per entry. `bench/anomaly_eval.py` measures the same through the
service's HTTP API.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

from sklearn.metrics import roc_auc_score

from agentgov.ml.anomaly import ActionEvent, fit

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "anomaly" / "dev.jsonl"


def evaluate(rows: list[dict], *, reasoning: bool) -> dict:
    by_tenant: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        by_tenant[row["tenant"]].append(row)
    results: list[tuple[str, str | None, int, float, bool]] = []
    fit_seconds, score_us = [], []
    for tenant, items in sorted(by_tenant.items()):

        def event(row: dict) -> ActionEvent:
            e = ActionEvent.from_mapping(row)
            return e if reasoning else e.without_reasoning()

        train = [event(r) for r in items if r["split"] == "train"]
        test = sorted((r for r in items if r["split"] == "test"), key=lambda r: r["timestamp"])
        started = time.perf_counter()
        model = fit(train)
        fit_seconds.append(time.perf_counter() - started)
        scorer = model.scorer()
        for e in sorted(train, key=lambda e: e.timestamp):
            scorer.observe(e)
        for row in test:
            e = event(row)
            started = time.perf_counter()
            verdict = scorer.score(e)
            score_us.append((time.perf_counter() - started) * 1e6)
            results.append(
                (tenant, row["anomaly_type"], int(row["label"] == "anomaly"), verdict.score, verdict.is_anomaly)
            )
    labels = [r[2] for r in results]
    scores = [r[3] for r in results]
    out = {"pooled": roc_auc_score(labels, scores)}
    for tenant in sorted(by_tenant):
        sub = [r for r in results if r[0] == tenant]
        out[f"tenant {tenant}"] = roc_auc_score([r[2] for r in sub], [r[3] for r in sub])
    for kind in sorted({r[1] for r in results if r[1]}):
        sub = [r for r in results if r[2] == 0 or r[1] == kind]
        out[f"type {kind}"] = roc_auc_score([r[2] for r in sub], [r[3] for r in sub])
    normal = [r for r in results if r[2] == 0]
    anomalous = [r for r in results if r[2] == 1]
    flagged = [r for r in results if r[4]]
    out["fpr_at_threshold"] = sum(r[4] for r in normal) / len(normal)
    out["recall_at_threshold"] = sum(r[4] for r in anomalous) / len(anomalous)
    out["precision_at_threshold"] = sum(r[2] for r in flagged) / max(1, len(flagged))
    out["fit_seconds_per_tenant"] = statistics.mean(fit_seconds)
    ordered = sorted(score_us)
    out["score_us_p50"] = ordered[len(ordered) // 2]
    out["score_us_p99"] = ordered[int(len(ordered) * 0.99)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text().splitlines() if line.strip()]
    for reasoning in (False, True):
        figures = evaluate(rows, reasoning=reasoning)
        print(f"== {'with' if reasoning else 'without'} reasoning")
        for name, value in figures.items():
            print(f"  {name:32s} {value:8.3f}")


if __name__ == "__main__":
    main()
