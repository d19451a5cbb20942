"""The guard's shipped material: the base data set and the default model fitted on it.

Both live in `agentgov/ml/guard/data/`: `base.jsonl.gz` (the labelled texts of `../shared/data/guard/train.jsonl`
and `dev.jsonl`, each with the upstream source it came from; provenance and licences in `SOURCES.md` beside it)
and `default_model.json` (the model every tenant
uses until it trains its own, with its parameters and metrics). A tenant's training reads the same base data
plus its feedback. Rebuild both, bit for bit, with `python -m agentgov.ml.guard.train` (see there).
"""

from __future__ import annotations

import functools
import gzip
import json
from importlib import resources
from typing import Any

from agentgov.ml.guard.fit import Example
from agentgov.ml.guard.gloss import glossaries
from agentgov.ml.guard.model import GuardModel

DATA_PACKAGE = "agentgov.ml.guard.data"
BASE_DATA = "base.jsonl.gz"
DEFAULT_MODEL = "default_model.json"


def source_family(source: str) -> str:
    """The upstream project a row's `source` names (`garak-0.17.1 wheel:probes...` -> `garak-0.17.1`)."""
    return source.split(":", 1)[0].split("@", 1)[0].split(" wheel", 1)[0].strip() or "unknown"


def parse_rows(lines: list[str]) -> list[Example]:
    """Examples of JSON lines `{"text", "label", "source"}`. Raises `ValueError` on a malformed line."""
    examples = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            examples.append(Example(text=str(row["text"]), label=str(row["label"]), group=source_family(row["source"])))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"line {number}: {exc}") from None
    return examples


def base_examples() -> list[Example]:
    """The shipped base data set."""
    raw = resources.files(DATA_PACKAGE).joinpath(BASE_DATA).read_bytes()
    return parse_rows(gzip.decompress(raw).decode("utf-8").split("\n"))


@functools.cache
def default_document() -> dict[str, Any]:
    """The shipped default model's document (model, `params`, `metrics`, `version`)."""
    document: dict[str, Any] = json.loads(resources.files(DATA_PACKAGE).joinpath(DEFAULT_MODEL).read_text("utf-8"))
    return document


_default: GuardModel | None = None


def default_model() -> GuardModel:
    """The shipped default model, read once per process (about 150 ms of JSON the first time: call it from a
    worker thread when that matters, `default_model_if_loaded` tells)."""
    global _default
    if _default is None:
        glossaries()  # read with the model, off the event loop: every model's judgement glosses
        _default = GuardModel.from_document(default_document()["model"])
    return _default


def default_model_if_loaded() -> GuardModel | None:
    return _default
