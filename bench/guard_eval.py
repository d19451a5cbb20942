"""Quality and speed of the prompt guard, in-process and through HTTP.

`python bench/guard_eval.py [--data ../shared/data/guard/dev.jsonl] [--fit-on FILE] [--http] [--seconds 5]
[--rounds 3]`

First the shipped model's own held-out figures: every base text scored by a model fitted without its source
family, pooled and per family (the estimate for text from sources it has never seen). The shipped base data
includes `dev.jsonl`, so figures on that file are in-sample and the bench says so; `--fit-on
../shared/data/guard/train.jsonl` fits a model on that file alone, the same way (about a minute), and judges
the data set with it instead: the check on sources that model has never seen.

In-process: the model judges every row of the data set; prints ROC-AUC, precision, recall, F1 and false-positive
rate at the shipped threshold, recall at a 2 % false-positive rate, per-category recall, per-source false-positive
rates and, per attack source, its ROC-AUC against all benign rows and its recall (any `{"text", "label", "source"}`
file can be judged with `--data`; `label` is `benign` or a category, or 0 / 1); then validate latency (p50/p99)
for prompts of 200, 2,000 and 20,000 characters, plain and in a jailbreak frame (a frame lets a harmful request
block); these reuse one sentence's words, so they are cheaper than real prose: `bench/guard_languages.py` judges
real prose in nine languages. `--http`: validations per second through `POST /api/v1/guard/validate` against a
bare Quart-Trio hello-world in the same run (wrk, alternating rounds), and the same quality figures through HTTP.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from agentgov.ml.guard.base import base_examples, default_document, default_model, parse_rows
from agentgov.ml.guard.fit import GuardParams, fit
from agentgov.ml.guard.model import GuardModel

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "guard" / "dev.jsonl"


#: Labels that mark a benign row: the base data's "benign", or 0 / false in a file labelled 0/1.
BENIGN_LABELS = ("benign", 0, "0", False)


def is_attack(label: object) -> bool:
    """Whether a row's `label` marks an attack: anything but a `BENIGN_LABELS` value (a category name, 1)."""
    return not any(label == benign and type(label) is type(benign) for benign in BENIGN_LABELS)


def quality(rows: list[dict], scores: list[float], blocked: list[bool], title: str) -> None:
    labels = np.array([is_attack(r["label"]) for r in rows])
    score = np.array(scores)
    flag = np.array(blocked)
    tp = int((flag & labels).sum())
    precision = tp / max(1, int(flag.sum()))
    recall = tp / max(1, int(labels.sum()))
    f1 = 0.0 if not tp else 2 * precision * recall / (precision + recall)
    at2 = float((score[labels] > np.quantile(score[~labels], 0.98)).mean())
    print(f"{title}: rows {len(rows)} (attacks {int(labels.sum())})")
    print(
        f"  ROC-AUC {roc_auc_score(labels, score):.3f} | at the shipped threshold: precision {precision:.3f} "
        f"recall {recall:.3f} F1 {f1:.3f} FPR {float(flag[~labels].mean()):.4f} | recall at 2% FPR {at2:.3f}"
    )
    by_label: dict[str, list[bool]] = defaultdict(list)
    by_source: dict[str, list[bool]] = defaultdict(list)
    attack_sources: dict[str, list[int]] = defaultdict(list)
    for k, (row, hit) in enumerate(zip(rows, blocked, strict=True)):
        if not is_attack(row["label"]):
            by_source[source_key(row["source"])].append(hit)
        else:
            by_label[str(row["label"])].append(hit)
            attack_sources[source_key(row["source"])].append(k)
    print("  recall by category: " + ", ".join(f"{k} {statistics.mean(v):.3f}" for k, v in by_label.items()))
    print(
        "  benign FPR by source: "
        + "; ".join(f"{k} {statistics.mean(v):.3f} (n={len(v)})" for k, v in by_source.items())
    )
    if (~labels).any():  # each attack source's attacks ranked against every benign text
        benign = score[~labels]
        parts = []
        for key, members in attack_sources.items():
            own = score[members]
            auc = roc_auc_score(np.r_[np.ones(len(own)), np.zeros(len(benign))], np.r_[own, benign])
            parts.append(f"{key} {auc:.3f} / {float(flag[members].mean()):.3f} (n={len(members)})")
        print("  attacks by source (ROC-AUC against all benign / recall): " + "; ".join(parts))


def source_key(source: str) -> str:
    """A row's source as grouped in the figures: without a trailing parenthesised detail, the part after its
    last ':' (the file or generator), at most 60 characters."""
    return re.sub(r"\s\([^()]*\)\s*$", "", source).split(":")[-1].strip()[:60]


#: Texts for the latency figures: an ordinary report, and the same kind of text in a jailbreak frame (role-play
#: words), in which the harm reading may block.
LATENCY_WORDS = {
    "plain": "the report lists quarterly figures for each region and the team will review them next week",
    "framed": "imagine you are a consultant in a movie where the character explains how the team reviews a plan.",
}


def latency() -> None:
    model = default_model()
    rng = random.Random(7)
    for kind, sentence in LATENCY_WORDS.items():
        words = sentence.split(" ")
        for size in (200, 2000, 20000):
            text = ""
            while len(text) < size:
                text += rng.choice(words) + " "
            times = []
            for _ in range(300 if size <= 2000 else 30):
                started = time.perf_counter()
                model.assess(text[:size])
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            p99 = times[int(len(times) * 0.99) - 1]
            print(f"  assess {kind:>6} {size:>6} chars: p50 {statistics.median(times):.2f} ms  p99 {p99:.2f} ms")


def fitted_on(path: Path) -> GuardModel:
    """A model fitted on `path` with the default parameters, as `python -m agentgov.ml.guard.train` would."""
    started = time.perf_counter()
    model, metrics = fit(parse_rows(path.read_text().split("\n")), GuardParams())
    print(f"fitted on {path.name} in {time.perf_counter() - started:.0f} s, threshold {model.threshold:.3f}")
    print(f"  its leave-one-source-out figures: {json.dumps(metrics['held_out'])}")
    return model


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--fit-on", type=Path, help="judge with a model fitted on this file instead of the shipped one")
    parser.add_argument("--http", action="store_true")
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.data.read_text().split("\n") if line.strip()]
    document = default_document()
    model = default_model()
    print(f"default model {document['version']}, threshold {model.threshold:.3f}")
    print(f"  its leave-one-source-out figures on the base data: {json.dumps(document['metrics']['held_out'])}")
    for family, figures in document["metrics"].get("held_out_by_family", {}).items():
        print(f"    {family}: {json.dumps(figures)}")
    if args.fit_on is not None:
        model = fitted_on(args.fit_on)
    else:
        known = {example.text for example in base_examples()}
        inside = sum(r["text"] in known for r in rows)
        if inside:
            print(
                f"  NOTE: {inside} of {len(rows)} rows are in the shipped base data: the figures below are "
                "in-sample (use --fit-on to judge with a model that has not seen them)"
            )
    started = time.perf_counter()
    judged = [model.assess(r["text"]) for r in rows]
    took = time.perf_counter() - started
    quality(rows, [a.score for a in judged], [a.block for a in judged], f"in-process on {args.data.name}")
    print(f"  {took / len(rows) * 1000:.2f} ms per row on average")
    latency()
    if args.http:
        from guard_http import http_figures

        if args.fit_on is not None:
            print("through HTTP the service judges with the shipped model, not the one fitted on --fit-on")
        http_figures(rows, args.seconds, args.rounds, quality)


if __name__ == "__main__":
    main()
