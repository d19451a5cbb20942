"""Offline evaluation of agent search: recall@k of an embedder on a labelled set of agents and queries.

The set is a JSON file (see ``tests/ml/data/agents_eval.json``)::

    {"agents": [{"id", "name", "type", "description", "capabilities": [...], "owner"}, ...],
     "queries": [{"q": "query text", "agent": "<id of the one right agent>"}, ...]}

Run by hand to compare the semantic model with the lexical baseline::

    python -m agentgov.ml.search_eval tests/ml/data/agents_eval.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from agentgov.ml.embedding import Embedder, MiniLMEmbedder, TfidfEmbedder, agent_text

__all__ = ["EvalAgent", "EvalQuery", "EvalResult", "EvalSet", "evaluate", "main"]


@dataclasses.dataclass(frozen=True)
class EvalAgent:
    id: str
    name: str
    agent_type: str
    description: str
    capabilities: tuple[str, ...]
    owner: str

    def text(self) -> str:
        """The agent's embedding text, as the search endpoint builds it (:func:`agent_text`)."""
        return agent_text(
            name=self.name,
            agent_type=self.agent_type,
            description=self.description,
            capabilities=self.capabilities,
            owner=self.owner,
        )


@dataclasses.dataclass(frozen=True)
class EvalQuery:
    text: str
    agent_id: str


@dataclasses.dataclass(frozen=True)
class EvalSet:
    agents: tuple[EvalAgent, ...]
    queries: tuple[EvalQuery, ...]

    @classmethod
    def load(cls, path: str | Path) -> EvalSet:
        """Read and validate a set. Raises ``OSError`` if unreadable, ``ValueError`` (including
        ``json.JSONDecodeError``) if malformed, an agent id repeats, or a query names an unknown agent."""
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        try:
            agents = tuple(
                EvalAgent(
                    id=str(a["id"]),
                    name=str(a["name"]),
                    agent_type=str(a.get("type", "")),
                    description=str(a.get("description", "")),
                    capabilities=tuple(str(c) for c in a.get("capabilities", ())),
                    owner=str(a.get("owner", "")),
                )
                for a in raw["agents"]
            )
            queries = tuple(EvalQuery(text=str(q["q"]), agent_id=str(q["agent"])) for q in raw["queries"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed evaluation set {path}: {exc!r}") from exc
        ids = [a.id for a in agents]
        if len(set(ids)) != len(ids):
            raise ValueError(f"duplicate agent ids in {path}")
        unknown = {q.agent_id for q in queries} - set(ids)
        if unknown:
            raise ValueError(f"queries name unknown agents in {path}: {sorted(unknown)}")
        return cls(agents=agents, queries=queries)


@dataclasses.dataclass(frozen=True)
class EvalResult:
    model_name: str
    recall: dict[int, float]
    """k -> share of queries whose right agent is among the top k."""
    mrr: float
    """Mean reciprocal rank of the right agent."""
    misses: tuple[tuple[str, str, str], ...]
    """(query, expected agent id, agent id ranked first) for every query not right at rank 1."""
    seconds: float
    """Wall time of the embedding calls."""


def evaluate(embedder: Embedder, eval_set: EvalSet, ks: Sequence[int] = (1, 3, 5)) -> EvalResult:
    """Embed the set's agents and queries with ``embedder`` and score the ranking by cosine similarity.

    Raises whatever ``embedder.embed`` raises, and ``ValueError`` if the set has no agent or no query or a
    k is < 1."""
    if not eval_set.agents or not eval_set.queries:
        raise ValueError("the evaluation set needs agents and queries")
    if any(k < 1 for k in ks):
        raise ValueError("every k must be >= 1")
    ids = [a.id for a in eval_set.agents]
    start = time.perf_counter()
    agent_vecs = embedder.embed([a.text() for a in eval_set.agents])
    query_vecs = embedder.embed([q.text for q in eval_set.queries])
    seconds = time.perf_counter() - start
    scores = query_vecs @ agent_vecs.T
    labels = np.array([ids.index(q.agent_id) for q in eval_set.queries])
    # Rank of the right agent, ties counted against it: the number of agents scoring at least as high
    # (itself included). A query sharing no term with any agent (all scores 0) thus ranks it last.
    right = scores[np.arange(len(labels)), labels]
    ranks = (scores >= right[:, None]).sum(axis=1)
    best = scores.argmax(axis=1)
    misses = tuple(
        (q.text, q.agent_id, ids[int(b)])
        for q, r, b in zip(eval_set.queries, ranks.tolist(), best.tolist(), strict=True)
        if r > 1
    )
    return EvalResult(
        model_name=embedder.model_name,
        recall={k: float((ranks <= k).mean()) for k in ks},
        mrr=float((1.0 / ranks).mean()),
        misses=misses,
        seconds=seconds,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print recall@k for the MiniLM model and the TF-IDF baseline on an evaluation set."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("path", type=Path, help="evaluation set (JSON)")
    parser.add_argument("--misses", action="store_true", help="list the queries not right at rank 1")
    args = parser.parse_args(argv)
    eval_set = EvalSet.load(args.path)
    print(f"{len(eval_set.agents)} agents, {len(eval_set.queries)} queries")
    embedders: list[Embedder] = [
        MiniLMEmbedder(),
        TfidfEmbedder([a.text() for a in eval_set.agents]),
    ]
    for embedder in embedders:
        result = evaluate(embedder, eval_set)
        recall = "  ".join(f"recall@{k} {v:.3f}" for k, v in result.recall.items())
        print(f"{result.model_name:48} {recall}  MRR {result.mrr:.3f}  ({result.seconds:.2f} s)")
        if args.misses:
            for query, expected, got in result.misses:
                print(f"    {query!r}: want {expected}, top {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
