"""Agent search latency over 10,000 agents: model load, embedding throughput, query latency (embed the
query + rank) and the rank-only part, as p50/p99. Run by hand; prints figures, asserts nothing.

    python bench/search_latency.py                  # embeds 10,000 synthetic agents (~1.5 min on 2 cores)
    python bench/search_latency.py --random         # random unit vectors instead (same ranking cost)
    python bench/search_latency.py --threads 1      # onnxruntime on one thread per call
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from collections.abc import Callable

import numpy as np

from agentgov.ml.embedding import (
    MiniLMEmbedder,
    agent_text,
    matrix_from_bytes,
    normalize_rows,
    to_bytes,
    top_k,
)

_VERBS = [
    "drafts",
    "reviews",
    "routes",
    "summarises",
    "classifies",
    "monitors",
    "schedules",
    "reconciles",
    "translates",
    "extracts",
    "audits",
    "forecasts",
    "answers",
    "escalates",
    "publishes",
    "cleans",
]
_OBJECTS = [
    "support tickets",
    "supplier invoices",
    "pull requests",
    "sales leads",
    "expense claims",
    "meeting notes",
    "production alerts",
    "contracts",
    "survey answers",
    "shipping updates",
    "job applications",
    "marketing emails",
    "warehouse stock levels",
    "access requests",
    "tax returns",
    "chat conversations",
    "release notes",
    "web pages",
    "database backups",
    "payment transactions",
]
_CONTEXTS = [
    "for the finance team",
    "for customer success",
    "across all regions",
    "every night",
    "in real time",
    "before month-end close",
    "using the knowledge base",
    "from the data warehouse",
    "with human approval for risky cases",
    "in English, French and German",
]
_TYPES = ["assistant", "worker", "workflow"]
_OWNERS = ["finance-ops", "platform", "security", "marketing", "sales", "people-ops", "data-platform", "it"]
_QUERIES = [
    "agent that sends emails",
    "who can crunch numbers from our database",
    "find a time when everyone can meet",
    "stop stolen cards at checkout",
    "summarise yesterday's call",
    "where is my parcel",
    "check this agreement for risky terms",
    "help new employees get started",
    "our cloud bill is too high",
    "catch duplicate expense receipts",
]


def synthetic_agents(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        verb, obj, ctx = rng.choice(_VERBS), rng.choice(_OBJECTS), rng.choice(_CONTEXTS)
        texts.append(
            agent_text(
                name=f"{obj.title()} bot {i}",
                agent_type=rng.choice(_TYPES),
                description=f"{verb.capitalize()} {obj} {ctx}.",
                capabilities=[f"{obj.split()[-1]}.read", f"{obj.split()[-1]}.{verb}"],
                owner=rng.choice(_OWNERS),
            )
        )
    return texts


def percentiles_ms(samples: list[float]) -> str:
    arr = np.asarray(samples) * 1000.0
    p50, p99 = np.percentile(arr, [50, 99])
    return f"p50 {p50:7.3f} ms   p99 {p99:7.3f} ms   mean {arr.mean():7.3f} ms   (n={len(arr)})"


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300, help="timed queries (embed + rank)")
    parser.add_argument("--rank-repeat", type=int, default=2000, help="timed rank-only calls")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--threads", type=int, default=None, help="onnxruntime intra-op threads")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--random", action="store_true", help="random unit vectors, not embedded agents")
    args = parser.parse_args(argv)

    print(
        f"cores {os.cpu_count()}, numpy {np.__version__}, agents {args.agents}, k {args.k}, "
        f"threads {args.threads or 'default'}, batch {args.batch_size}"
    )
    rss0 = rss_mb()
    emb = MiniLMEmbedder(intra_op_threads=args.threads, batch_size=args.batch_size)
    start = time.perf_counter()
    emb.load()
    print(
        f"load (read + sha256 + session)      {time.perf_counter() - start:7.3f} s   "
        f"max RSS {rss0:.0f} -> {rss_mb():.0f} MB"
    )
    emb.embed(["warm up"])

    texts = synthetic_agents(args.agents)
    if args.random:
        rng = np.random.default_rng(0)
        matrix = normalize_rows(rng.standard_normal((args.agents, emb.dimension)))
        sample = texts[:512]
        start = time.perf_counter()
        emb.embed(sample)
        seconds = time.perf_counter() - start
        print(f"embed agents (batched, {len(sample)} texts)   {len(sample) / seconds:7.1f} texts/s")
    else:
        start = time.perf_counter()
        matrix = emb.embed(texts)
        seconds = time.perf_counter() - start
        print(f"embed agents (batched, {len(texts)} texts) {len(texts) / seconds:7.1f} texts/s ({seconds:.1f} s)")
    print(f"max RSS after embedding             {rss_mb():.0f} MB")

    ids = [f"agent-{i}" for i in range(args.agents)]
    blobs = [to_bytes(v) for v in matrix]
    load_times = timed(lambda: matrix_from_bytes(blobs, emb.dimension), 20)
    print(f"matrix_from_bytes ({args.agents} blobs)   {percentiles_ms(load_times)}")

    queries = [_QUERIES[i % len(_QUERIES)] + ("" if i < len(_QUERIES) else f" {i}") for i in range(args.queries)]
    embed_only: list[float] = []
    total: list[float] = []
    for q in queries:
        start = time.perf_counter()
        qvec = emb.embed([q])[0]
        mid = time.perf_counter()
        top_k(qvec, matrix, ids, args.k)
        end = time.perf_counter()
        embed_only.append(mid - start)
        total.append(end - start)
    print(f"query texts/s (one per call)        {len(queries) / sum(embed_only):7.1f}")
    print(f"query: embed only                   {percentiles_ms(embed_only)}")
    print(f"query: embed + rank                 {percentiles_ms(total)}")

    qvec = emb.embed([_QUERIES[0]])[0]
    rank = timed(lambda: top_k(qvec, matrix, ids, args.k), args.rank_repeat)
    print(f"rank only (matmul + argpartition)   {percentiles_ms(rank)}")
    if not args.random:  # a sanity look at what the ranking returns
        hits = top_k(qvec, matrix, ids, 3)
        print(
            f"top 3 for {_QUERIES[0]!r}: " + ", ".join(f"{texts[int(i.split('-')[1])][:40]!r} {s:.3f}" for i, s in hits)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
