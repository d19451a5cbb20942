"""Agent search through the registry actor with many agents: cold sync, query latency, registration latency.

Run by hand; prints figures, asserts nothing. Uses a throw-away SQLite database (or `--database-url`).

    python bench/search_bench.py                      # 10,000 agents, embedded for real on the first search
    python bench/search_bench.py --random-vectors     # store random unit vectors instead (skips ~2 min of
                                                      # embedding; same ranking and storage cost)

Figures: the first search (loads every stored vector, embedding the missing ones), then `--queries`
searches (query embedding + generation check + ranking + fetching the hits), then `--registrations`
registrations (classifier + insert) each followed by a search that must find the new agent (it is
embedded on demand), all as p50 / p99 through `ActorRef.ask`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
import trio

from agentgov.actors.registry import RegisterAgent, SearchAgents, embedding_text, registry, text_hash
from agentgov.actors.runtime import ActorSystem
from agentgov.config import Settings
from agentgov.ml.embedding import content_hash, default_embedder, normalize_rows, to_bytes
from agentgov.services import Services
from agentgov.storage import open_cache, open_database
from agentgov.storage.agents import Agent, AgentRepo, StoredEmbedding
from agentgov.timeutil import now_iso

sys.path.insert(0, str(Path(__file__).parent))
from search_latency import _CONTEXTS, _OBJECTS, _OWNERS, _VERBS

_TYPES = ("llm", "tool", "workflow", "custom")
QUERIES = [
    "agent that sends emails",
    "who reconciles supplier invoices",
    "summarise meeting notes for managers",
    "watch production alerts at night",
    "translate support tickets",
    "screen job applications",
]


def percentiles(samples: list[float]) -> str:
    arr = np.asarray(samples) * 1000.0
    p50, p99 = np.percentile(arr, [50, 99])
    return f"p50 {p50:8.2f} ms   p99 {p99:8.2f} ms   (n={len(arr)})"


def synthetic_agent(tenant_id: str, i: int, rng: random.Random) -> Agent:
    verb, obj, ctx = rng.choice(_VERBS), rng.choice(_OBJECTS), rng.choice(_CONTEXTS)
    stamp = now_iso()
    return Agent(
        id=str(uuid.uuid4()),
        tenant_id=tenant_id,
        name=f"{obj.title()} bot {i}",
        type=rng.choice(_TYPES),
        description=f"{verb.capitalize()} {obj} {ctx}.",
        capabilities=(f"{obj.split()[-1]}.read", f"{obj.split()[-1]}.{verb}"),
        owner=rng.choice(_OWNERS),
        metadata={},
        status="active",
        risk_score=None,
        predicted_type=None,
        predicted_type_confidence=None,
        last_heartbeat_at=None,
        created_at=stamp,
        updated_at=stamp,
    )


async def populate(repo: AgentRepo, tenant_id: str, n: int, random_vectors: bool) -> None:
    rng = random.Random(0)
    agents = [synthetic_agent(tenant_id, i, rng) for i in range(n)]

    def insert_all(conn) -> None:  # type: ignore[no-untyped-def]
        conn.executemany(
            """INSERT INTO agents (id, tenant_id, name, name_key, type, description, capabilities, owner,
                   metadata, status, risk_score, predicted_type, predicted_type_confidence, text_hash,
                   last_heartbeat_at, created_at, updated_at)
               VALUES (:id, :tenant_id, :name, :name_key, :type, :description, :capabilities, :owner,
                   :metadata, :status, NULL, NULL, NULL, :text_hash, NULL, :created_at, :updated_at)""",
            [
                {
                    **dataclasses.asdict(a),
                    "name_key": a.name.lower(),
                    "capabilities": json.dumps(list(a.capabilities)),
                    "metadata": "{}",
                    "text_hash": text_hash(a),
                }
                for a in agents
            ],
        )

    await repo.db.write(insert_all)
    if random_vectors:
        emb = default_embedder()
        vectors = normalize_rows(np.random.default_rng(0).standard_normal((n, emb.dimension)))
        stored = [
            StoredEmbedding(
                a.id,
                emb.model_name,
                emb.dimension,
                content_hash(embedding_text(a), model_name=emb.model_name),
                to_bytes(v),
                now_iso(),
            )
            for a, v in zip(agents, vectors, strict=True)
        ]
        for start in range(0, n, 1000):
            await repo.save_embeddings(
                tenant_id, stored[start : start + 1000], [text_hash(a) for a in agents[start : start + 1000]]
            )


async def run(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        url = args.database_url or f"sqlite:///{Path(tmp) / 'bench.db'}"
        settings = Settings.from_env({"DATABASE_URL": url, "ADMIN_KEY": "bench-admin-key-0123456789"})
        db = await open_database(settings.effective_database_url)
        cache = open_cache("")
        try:
            async with ActorSystem.open() as actors:
                services = Services(settings=settings, db=db, cache=cache, actors=actors)
                tenant_id = str(uuid.uuid4())
                repo = AgentRepo(db)
                start = time.perf_counter()
                await populate(repo, tenant_id, args.agents, args.random_vectors)
                print(f"stored {args.agents} agents in {time.perf_counter() - start:.1f} s")
                await trio.to_thread.run_sync(default_embedder().load)
                ref = registry(services, tenant_id)

                start = time.perf_counter()
                hits = await ref.ask(SearchAgents(QUERIES[0], 10))
                print(f"first search (cold: load vectors, embed missing): {time.perf_counter() - start:.2f} s")
                print(f"  top hit: {hits[0].agent.name!r} score {hits[0].score:.3f}")

                samples = []
                for i in range(args.queries):
                    start = time.perf_counter()
                    await ref.ask(SearchAgents(QUERIES[i % len(QUERIES)], 10))
                    samples.append(time.perf_counter() - start)
                print(f"search, {args.agents} agents:            {percentiles(samples)}")

                registrations, found_after = [], []
                for i in range(args.registrations):
                    start = time.perf_counter()
                    agent = await ref.ask(
                        RegisterAgent(
                            name=f"Parcel Tracker {i}",
                            type="tool",
                            description="Tracks parcels with the courier and tells customers where they are.",
                        )
                    )
                    registrations.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    hits = await ref.ask(SearchAgents("where is my parcel", 50))
                    found_after.append(time.perf_counter() - start)
                    if agent.id not in {h.agent.id for h in hits}:
                        print(f"  new agent {agent.id} not in the top 50 right after registration")
                print(f"register:                       {percentiles(registrations)}")
                print(f"search right after a register:  {percentiles(found_after)}")
        finally:
            await db.close()
            await cache.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agents", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--registrations", type=int, default=50)
    parser.add_argument("--random-vectors", action="store_true")
    parser.add_argument("--database-url", default="")
    args = parser.parse_args(argv)
    trio.run(run, args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
