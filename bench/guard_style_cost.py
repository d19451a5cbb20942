"""What the guard's style reading costs: the shipped model judged with and without it, in one run.

    python bench/guard_style_cost.py [--rounds 3]

Texts of 200, 2,000 and 20,000 characters are cut from the shipped base data (so most of their words are new
to the process, unlike `guard_eval.py`'s texts), and each model judges every text in turn, round after round,
so the two share the machine's noise. Printed: p50 and p99 per length for each, and their ratio.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import time

import numpy as np

from agentgov.ml.guard.base import base_examples, default_model


def texts_of(length: int, count: int, pool: list[str], rng: random.Random) -> list[str]:
    texts = []
    for _ in range(count):
        text = ""
        while len(text) < length:
            text += rng.choice(pool) + " "
        texts.append(text[:length])
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with_style = default_model()
    if with_style.style is None:
        raise SystemExit("the shipped model has no style reading")
    without = dataclasses.replace(with_style, style=None)
    pool = [example.text for example in base_examples()]
    rng = random.Random(1)
    for length, count in ((200, 200), (2000, 200), (20000, 40)):
        texts = texts_of(length, count, pool, rng)
        for text in texts[:5]:  # warm both
            with_style.assess(text)
            without.assess(text)
        times: dict[str, list[float]] = {"with": [], "without": []}
        for _ in range(args.rounds):
            for name, model in (("with", with_style), ("without", without)):
                for text in texts:
                    started = time.perf_counter()
                    model.assess(text)
                    times[name].append((time.perf_counter() - started) * 1000)
        a, b = np.array(times["with"]), np.array(times["without"])
        print(
            f"{length:>6} chars: with the style reading p50 {np.median(a):.3f} p99 {np.quantile(a, 0.99):.3f} ms | "
            f"without p50 {np.median(b):.3f} p99 {np.quantile(b, 0.99):.3f} ms | "
            f"p50 ratio {np.median(a) / np.median(b):.2f}"
        )


if __name__ == "__main__":
    main()
