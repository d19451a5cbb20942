"""What the guard's in-process validation costs by language, against English in the same run.

    python bench/guard_languages.py [--rounds 5] [--lengths 500,2000]

`bench/data/guard_languages.json` holds one ordinary text per language, the same notice about business trips written
in English, Russian, Spanish, German, French, Chinese, Japanese, Korean, Arabic and Hindi in Latin letters (about
1,800-2,000 characters each; the Chinese, Japanese and Korean ones are shorter in characters). Each is cut to each
length (a shorter one is followed by itself again, so every language is measured at the same length in characters),
and the shipped model judges every text in turn, round after round, so that all languages share the machine's noise.
Printed per language and length: p50 and p99 in milliseconds and the p50 as a multiple of English's.
A text in another language costs more than an English one: a language the guard glosses is read twice (as written
and word by word in English), and the rules written for other languages run on it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from agentgov.ml.guard.base import default_model

TEXTS = Path(__file__).resolve().parent / "data" / "guard_languages.json"


def cut(text: str, length: int) -> str:
    """`text` cut to `length` characters, followed by itself as often as needed to reach it."""
    repeated = text
    while len(repeated) < length:
        repeated += " " + text
    return repeated[:length]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lengths", default="500,2000")
    args = parser.parse_args()
    model = default_model()
    languages: dict[str, str] = json.loads(TEXTS.read_text(encoding="utf-8"))
    lengths = [int(value) for value in args.lengths.split(",")]
    cases = [(language, length, cut(text, length)) for length in lengths for language, text in languages.items()]
    for _, _, text in cases:  # warm: the first call of a text fills per-word caches
        model.assess(text)
    times: dict[tuple[str, int], list[float]] = {(language, length): [] for language, length, _ in cases}
    for _ in range(args.rounds):
        for _ in range(20):
            for language, length, text in cases:
                started = time.perf_counter()
                model.assess(text)
                times[(language, length)].append((time.perf_counter() - started) * 1000)
    for length in lengths:
        english = float(np.median(times[("en", length)]))
        print(f"{length} characters ({args.rounds * 20} validations each):")
        for language in languages:
            values = np.array(times[(language, length)])
            p50, p99 = float(np.median(values)), float(np.quantile(values, 0.99))
            print(f"  {language}: p50 {p50:6.2f} ms  p99 {p99:6.2f} ms  p50 / English {p50 / english:5.2f}")


if __name__ == "__main__":
    main()
