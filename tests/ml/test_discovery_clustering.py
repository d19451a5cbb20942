"""Shadow-agent discovery (agentgov.ml.discovery): fingerprints, features, clustering, candidate merging."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import replace

import numpy as np
import pytest
from sklearn.metrics import adjusted_rand_score

from agentgov.ml import discovery as d
from agentgov.ml.discovery import (
    Candidate,
    UnknownAgentEvent,
    cluster_events,
    clustering,
    event_feature_text,
    event_features,
    event_tokens,
    fingerprint,
    merge_candidates,
    pairwise_distances,
)
from tests.support.discovery_stream import synthetic_event_stream

BASE = UnknownAgentEvent(
    source="proxy",
    host="build-07.corp.example.com",
    process="/usr/bin/python3.11 /opt/bots/summarizer.py --once [4411]",
    user_agent="OpenAI/Python 1.30.1",
    endpoint="https://api.openai.com/v1/chat/completions",
    model="gpt-4o",
    client_address="10.0.3.17:51234",
    observed_at="2024-06-01T12:00:00+00:00",
    metadata={"user": "svc-bots"},
)


def _ari(noise: float, seed: int) -> float:
    stream = synthetic_event_stream(seed=seed, noise=noise)
    return float(adjusted_rand_score(stream.labels, cluster_events(stream.events)))


# ---------------------------------------------------------------------------------------- fingerprint


def test_fingerprint_is_a_stable_golden_value() -> None:
    # A change here invalidates every stored dismissal: bump FINGERPRINT_VERSION instead.
    assert fingerprint(BASE) == "fp1:4c9e047b1226733a690e80e1138077e9"
    assert re.fullmatch(r"fp1:[0-9a-f]{32}", fingerprint(BASE))
    as_mapping = {
        "source": BASE.source,
        "host": BASE.host,
        "process": BASE.process,
        "user_agent": BASE.user_agent,
        "endpoint": BASE.endpoint,
        "model": BASE.model,
        "client_address": BASE.client_address,
        "observed_at": BASE.observed_at,
        "metadata": dict(BASE.metadata),
        "ignored": "extra keys are ignored",
    }
    assert fingerprint(as_mapping) == fingerprint(BASE)


@pytest.mark.parametrize(
    "change",
    [
        {"process": "/usr/bin/python3.11 /opt/bots/summarizer.py --once (pid 977)"},
        {"process": "pid=31 python3.12 /srv/other/path/summarizer.py"},
        {"client_address": "10.0.3.17:60001"},
        {"client_address": "10.0.3.99"},  # host known: the address is not part of the identity
        {"user_agent": "OpenAI/Python 1.35.0"},
        {"endpoint": "https://api.openai.com/v1/embeddings"},
        {"endpoint": "api.openai.com:443/v1/files/file-abc123def456"},
        {"host": "BUILD-07"},
        {"model": "gpt-4o-mini"},
        {"observed_at": "2025-01-01T00:00:00Z"},
        {"source": "gateway"},
        {"metadata": {"user": "svc-bots", "bytes": 123}},
    ],
)
def test_fingerprint_ignores_noise(change: dict[str, object]) -> None:
    assert fingerprint(replace(BASE, **change)) == fingerprint(BASE)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"host": "build-08.corp.example.com"},
        {"process": "/usr/bin/python3.11 /opt/bots/translator.py"},
        {"process": "node dist/summarizer.js"},
        {"user_agent": "OpenAI/Python 2.0.0"},
        {"user_agent": "python-requests/2.31.0"},
        {"endpoint": "https://api.anthropic.com/v1/messages"},
        {"metadata": {"user": "jdoe"}},
        {"host": None},  # falls back to the client IP: a different identity
    ],
)
def test_fingerprint_separates_different_agents(change: dict[str, object]) -> None:
    assert fingerprint(replace(BASE, **change)) != fingerprint(BASE)  # type: ignore[arg-type]


def test_dismissed_fingerprints_stay_dismissed_without_hiding_other_agents() -> None:
    stream = synthetic_event_stream(seed=3, noise=0.0)
    half = len(stream.events) // 2
    owners: defaultdict[str, set[int]] = defaultdict(set)
    for event, label in zip(stream.events, stream.labels, strict=True):
        owners[fingerprint(event)].add(label)
    assert all(len(o) == 1 for o in owners.values())  # no fingerprint is shared by two agents
    per_agent = Counter(next(iter(o)) for o in owners.values())
    assert max(per_agent.values()) <= 4  # one per sensor view, not one per event
    for agent in range(20):
        dismissed = {
            fingerprint(e) for e, t in zip(stream.events[:half], stream.labels[:half], strict=True) if t == agent
        }
        for event, label in zip(stream.events[half:], stream.labels[half:], strict=True):
            if label != agent:
                assert fingerprint(event) not in dismissed
    # with noise, most later events of a dismissed agent are still recognised
    noisy = synthetic_event_stream(seed=3, noise=0.3)
    half = len(noisy.events) // 2
    hits = total = 0
    for agent in range(20):
        dismissed = {
            fingerprint(e) for e, t in zip(noisy.events[:half], noisy.labels[:half], strict=True) if t == agent
        }
        later = [
            fingerprint(e) in dismissed
            for e, t in zip(noisy.events[half:], noisy.labels[half:], strict=True)
            if t == agent
        ]
        hits += sum(later)
        total += len(later)
    assert hits / total >= 0.6


# ------------------------------------------------------------------------------------------- features


def test_event_tokens_normalise_fields() -> None:
    tokens = event_tokens(BASE)
    assert tokens == [
        "host:build-07.corp.example.com",
        "hostname:build-07",
        "exe:python",
        "script:summarizer.py",
        "ua:openai/python",
        "uav:openai/python/1",
        "ephost:api.openai.com",
        "epsite:openai.com",
        "path:api.openai.com/v1/chat/completions",
        "model:gpt-4o",
        "modelfam:gpt",
        "ip:10.0.3.17",
        "net:10.0.3.0/24",
        "meta:user=svc-bots",
    ]
    assert event_feature_text(BASE).split() == tokens
    assert event_tokens(UnknownAgentEvent(source="edr")) == []
    ids = event_tokens({"endpoint": "https://api.openai.com/v1/threads/thread_abc123xyz/messages?x=1"})
    assert "path:api.openai.com/v1/threads/{id}/messages" in ids
    v6 = event_tokens({"client_address": "[2001:db8::1]:443", "endpoint": "http://10.20.0.15:11434/api/chat"})
    assert "ip:2001:db8::1" in v6 and "net:2001:db8::/64" in v6
    assert "ephost:10.20.0.15:11434" in v6 and not any(t.startswith("epsite:") for t in v6)


def test_event_features_shape_and_norms() -> None:
    events = [BASE, replace(BASE, host="other-host"), UnknownAgentEvent(source="edr")]
    x = event_features(events)
    assert x.shape[0] == 3
    norms = np.sqrt(np.asarray(x.multiply(x).sum(axis=1))).ravel()
    assert norms == pytest.approx([1.0, 1.0, 0.0])
    dist = pairwise_distances(events)
    assert dist.shape == (3, 3)
    assert np.allclose(dist, dist.T) and np.allclose(np.diag(dist), 0.0)
    assert dist[0, 1] == d.CONFLICT_DISTANCE  # two different host names: cannot-link
    assert dist[0, 2] == 1.0  # nothing in common


def test_partial_views_of_one_agent_stay_close() -> None:
    edr = UnknownAgentEvent(
        source="edr",
        host="build-07",
        process="python3 /opt/bots/summarizer.py",
        endpoint="api.openai.com:443",
        client_address="10.0.3.17",
    )
    proxy = UnknownAgentEvent(
        source="proxy",
        user_agent="OpenAI/Python 1.30.1",
        endpoint="https://api.openai.com/v1/embeddings",
        client_address="10.0.3.17:40000",
    )
    other = UnknownAgentEvent(
        source="proxy",
        user_agent="OpenAI/Python 1.30.1",
        endpoint="https://api.openai.com/v1/embeddings",
        client_address="10.0.4.80:40000",
    )
    dist = pairwise_distances([edr, proxy, other, BASE])
    assert dist[0, 1] < d.DEFAULT_DISTANCE_THRESHOLD < dist[0, 2]


# ----------------------------------------------------------------------------------------- clustering


def test_cluster_ari_on_synthetic_stream_at_default_noise() -> None:
    aris = [_ari(0.3, seed) for seed in range(5)]
    assert min(aris) >= 0.85, aris
    assert sum(aris) / len(aris) >= 0.9, aris


@pytest.mark.parametrize(("noise", "mean_at_least"), [(0.0, 0.95), (0.5, 0.88), (1.0, 0.75)])
def test_cluster_ari_across_noise_levels(noise: float, mean_at_least: float) -> None:
    aris = [_ari(noise, seed) for seed in range(100, 105)]
    assert sum(aris) / len(aris) >= mean_at_least, aris


def test_different_agents_do_not_collapse() -> None:
    """An agent "collapses" when its majority cluster is also another agent's majority cluster."""
    collapsed = 0
    for seed in range(5):
        stream = synthetic_event_stream(seed=seed, noise=0.3)
        labels = cluster_events(stream.events)
        majority = {
            agent: Counter(p for p, t in zip(labels, stream.labels, strict=True) if t == agent).most_common(1)[0][0]
            for agent in range(20)
        }
        collapsed += 20 - len(set(majority.values()))
        assert len(set(labels)) >= 18, seed
    # 100 agents, some sharing user agent, API and subnet; the one collapse at the time of writing is
    # two gateway-only agents that differ only in their exact IP and model
    assert collapsed <= 2


def test_agents_on_one_machine_and_same_client_stay_apart() -> None:
    events: list[UnknownAgentEvent] = []
    truth: list[int] = []
    specs = [
        (
            "dev-laptop-1",
            "python3 /home/a/agent_a.py",
            "python-requests/2.31.0",
            "https://api.openai.com/v1/chat/completions",
        ),
        ("dev-laptop-1", "node server.js", "axios/1.6.8", "https://api.anthropic.com/v1/messages"),
        (
            "dev-laptop-2",
            "python3 /home/b/agent_a.py",
            "python-requests/2.31.0",
            "https://api.openai.com/v1/chat/completions",
        ),
    ]
    for agent, (host, proc, ua, url) in enumerate(specs):
        ip = "10.0.0.5" if host == "dev-laptop-1" else "10.0.0.9"
        for i in range(6):
            events.append(
                UnknownAgentEvent(
                    source="edr", host=host, process=f"{proc} [{100 + i}]", endpoint=url, client_address=ip
                )
            )
            events.append(
                UnknownAgentEvent(
                    source="proxy", host=host, user_agent=ua, endpoint=url, client_address=f"{ip}:{4000 + i}"
                )
            )
            truth += [agent, agent]
    labels = cluster_events(events)
    assert adjusted_rand_score(truth, labels) == pytest.approx(1.0)


def test_cluster_events_contract() -> None:
    assert cluster_events([]) == []
    assert cluster_events([BASE]) == [0]
    stream = synthetic_event_stream(seed=1, noise=0.3)
    labels = cluster_events(stream.events)
    assert labels[0] == 0
    assert sorted(set(labels)) == list(range(max(labels) + 1))
    first_seen = list(dict.fromkeys(labels))
    assert first_seen == sorted(first_seen)
    assert cluster_events(stream.events) == labels  # deterministic
    # identical token bags share a label even at threshold 0; empty events group together
    empty = UnknownAgentEvent(source="edr")
    same = [BASE, replace(BASE, process="python3 /opt/bots/summarizer.py [9]"), empty, empty]
    assert cluster_events(same, distance_threshold=0.0) == [0, 0, 1, 1]
    # mappings are accepted
    assert cluster_events([{"host": "a", "process": "x"}, {"host": "a", "process": "x [3]"}]) == [0, 0]


def test_threshold_controls_granularity() -> None:
    stream = synthetic_event_stream(seed=2, noise=0.3)
    counts = [len(set(cluster_events(stream.events, distance_threshold=t))) for t in (0.0, 0.5, 0.8, 1.0)]
    assert counts == sorted(counts, reverse=True)
    assert counts[0] > counts[2] >= 15
    with pytest.raises(ValueError, match="distance_threshold"):
        cluster_events(stream.events, distance_threshold=-0.1)


def test_too_many_distinct_events_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(clustering, "MAX_DISTINCT_EVENTS", 10)  # where it is read
    stream = synthetic_event_stream(seed=0, noise=0.3)
    with pytest.raises(ValueError, match="distinct events"):
        cluster_events(stream.events)


def test_synthetic_stream_is_deterministic_and_shaped_as_documented() -> None:
    a = synthetic_event_stream(seed=7, noise=0.3)
    b = synthetic_event_stream(seed=7, noise=0.3)
    assert a == b
    assert a != synthetic_event_stream(seed=8, noise=0.3)
    sizes = Counter(a.labels)
    assert len(sizes) == 20 and min(sizes.values()) >= 5 and max(sizes.values()) <= 50
    for event in a.events:
        assert event.source in {"proxy", "gateway", "edr"}
        assert (
            sum(
                v is not None
                for v in (
                    event.host,
                    event.process,
                    event.user_agent,
                    event.endpoint,
                    event.model,
                    event.client_address,
                )
            )
            >= 2
        )
        if event.source == "edr":
            assert event.user_agent is None and event.model is None
        if event.source == "gateway":
            assert event.host is None and event.process is None
    with pytest.raises(ValueError):
        synthetic_event_stream(noise=1.5)


# ----------------------------------------------------------------------------------- merge_candidates


def _split_candidates(noise: float, seed: int) -> list[Candidate]:
    stream = synthetic_event_stream(seed=seed, noise=noise)
    candidates: list[Candidate] = []
    for agent in range(20):
        events = [e for e, t in zip(stream.events, stream.labels, strict=True) if t == agent]
        third = len(events) // 3
        candidates.append(Candidate(id=f"{agent}-a", events=events[:third]))
        candidates.append(Candidate(id=f"{agent}-b", feature_texts=[event_feature_text(e) for e in events[third:]]))
    return candidates


def test_merge_candidates_reunites_split_agents() -> None:
    wrong = 0
    for seed in range(3):
        groups = merge_candidates(_split_candidates(0.3, seed))
        group_of = {cid: i for i, group in enumerate(groups) for cid in group}
        reunited = sum(1 for a in range(20) if f"{a}-a" in group_of and group_of[f"{a}-a"] == group_of.get(f"{a}-b"))
        assert reunited >= 19, (seed, groups)
        wrong += sum(1 for g in groups if len({cid.split("-")[0] for cid in g}) > 1)
    assert wrong <= 2


def test_merge_candidates_contract() -> None:
    edr = UnknownAgentEvent(
        source="edr",
        host="h1",
        process="python a.py",
        endpoint="api.openai.com:443",
        client_address="10.1.1.1",
    )
    other = UnknownAgentEvent(
        source="edr",
        host="h2",
        process="node b.js",
        endpoint="api.anthropic.com:443",
        client_address="10.2.2.2",
    )
    candidates: list[Candidate | dict[str, str]] = [
        Candidate(id="c1", events=[edr]),
        {"id": "c2", "feature_text": event_feature_text(replace(edr, process="python a.py [77]"))},
        Candidate(id="c3", events=[other]),
        Candidate(id="empty"),
        Candidate(id="c4", feature_texts=[event_feature_text(replace(other, client_address="10.2.2.2:5000"))]),
    ]
    assert merge_candidates(candidates) == [["c1", "c2"], ["c3", "c4"]]
    assert merge_candidates(candidates[:1]) == []
    assert merge_candidates([]) == []
    with pytest.raises(ValueError, match="unique"):
        merge_candidates([Candidate(id="x", events=[edr]), Candidate(id="x", events=[other])])
