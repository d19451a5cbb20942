"""The guard against a plain baseline, both held out by source family the same way.

    python bench/guard_baseline.py                                     # the shipped base data (both files)
    python bench/guard_baseline.py --data ../shared/data/guard/train.jsonl

The baseline is a TF-IDF model of word 1-2-grams (sublinear tf) read by a logistic regression, as a first
attempt at a prompt-injection classifier usually is. Each source family is held out in turn: every text is scored
by a model fitted without its family, for the baseline and (by `fit`, which does exactly this for its metrics)
for the guard. Printed: ROC-AUC of all held-out scores pooled, recall at a 1 % and a 2 % false-positive rate of
the pooled benign scores, and each family's attacks ranked against all benign texts. A ratio that holds when
the data changes: how much of the baseline's distance to a perfect ranking the guard closes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from agentgov.ml.guard.base import base_examples, parse_rows
from agentgov.ml.guard.fit import Example, GuardParams, fit


def baseline_scores(examples: list[Example]) -> np.ndarray:
    texts = [e.text for e in examples]
    attack = np.array([e.label != "benign" for e in examples])
    groups = np.array([e.group for e in examples])
    scores = np.zeros(len(examples))
    for family in sorted(set(groups)):
        held = groups == family
        vectoriser = TfidfVectorizer(sublinear_tf=True, ngram_range=(1, 2))
        train = vectoriser.fit_transform([t for t, h in zip(texts, held, strict=True) if not h])
        model = LogisticRegression(max_iter=2000).fit(train, attack[~held])
        scores[held] = model.predict_proba(vectoriser.transform([t for t, h in zip(texts, held, strict=True) if h]))[
            :, 1
        ]
    return scores


def report(name: str, scores: np.ndarray, attack: np.ndarray, groups: np.ndarray) -> None:
    benign = scores[~attack]
    recall = {rate: float((scores[attack] >= np.quantile(benign, 1 - rate)).mean()) for rate in (0.01, 0.02)}
    print(
        f"{name:<10} ROC-AUC {roc_auc_score(attack, scores):.3f} | recall at 1 % FPR {recall[0.01]:.3f}, "
        f"at 2 % FPR {recall[0.02]:.3f}"
    )
    for family in sorted(set(groups[attack])):
        ranked = (attack & (groups == family)) | ~attack
        print(f"  {family:<28} {roc_auc_score(attack[ranked], scores[ranked]):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", action="append", type=Path, help="labelled JSON lines (default: the base data)")
    args = parser.parse_args()
    examples = (
        [row for path in args.data for row in parse_rows(path.read_text("utf-8").split("\n"))]
        if args.data
        else base_examples()
    )
    attack = np.array([e.label != "benign" for e in examples])
    groups = np.array([e.group for e in examples])
    print(f"{len(examples)} texts, {int(attack.sum())} attacks, {len(set(groups))} source families")
    started = time.perf_counter()
    baseline = baseline_scores(examples)
    print(f"baseline fitted {len(set(groups))} times in {time.perf_counter() - started:.0f} s")
    report("baseline", baseline, attack, groups)
    started = time.perf_counter()
    _, metrics = fit(examples, GuardParams())
    held = metrics["held_out"]
    print(
        f"guard fitted in {time.perf_counter() - started:.0f} s (at its threshold {held['threshold']}: recall "
        f"{held['recall']}, false-positive rate {held['false_positive_rate']})"
    )
    print(f"guard      ROC-AUC {held['roc_auc']:.3f}")
    for family, figures in sorted(metrics["held_out_by_family"].items()):
        if "roc_auc" in figures:
            print(f"  {family:<28} {figures['roc_auc']:.3f}")
    closed = (held["roc_auc"] - roc_auc_score(attack, baseline)) / (1 - roc_auc_score(attack, baseline))
    print(f"the guard closes {closed:.0%} of the baseline's distance to a perfect ranking")


if __name__ == "__main__":
    main()
