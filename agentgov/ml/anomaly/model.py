"""Fitting, storing and scoring the anomaly model.

Method. Each agent is modelled on its own history (`profile.AgentProfile`). Every component's surprise is
turned into a p-value against that agent's own distribution of the component on normal traffic: the history
is replayed in time order, and each action after a warm-up share is judged against what came before it (as a
live action is), which gives the null distribution without labels. The p-values present for an action are
combined (`combine`: Tippett's minimum or the truncated product of the small ones) and mapped to a 0..1 score
(`score = s / (s + 3)` with `s = -log10(p)`: 0.5 is p = 0.001). The threshold is the score that the target
share of the replayed normal actions of the history's second half reaches, so the alert rate on normal
traffic is calibrated from the history alone.

`fit` is a plain function of plain data, deterministic, and runs in a worker process; the model is a JSON
document (`to_document` / `from_document`), never a pickle. `Scorer` keeps each agent's recent context and is
not thread-safe; scoring an action costs tens of microseconds.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from agentgov.ml.anomaly.errors import ModelFormatError, NotEnoughHistory
from agentgov.ml.anomaly.params import AnomalyParams
from agentgov.ml.anomaly.profile import COMPONENTS, AgentProfile, Context
from agentgov.ml.anomaly.records import ActionEvent

FORMAT = "agentgov.anomaly/1"
KINDS = {
    "tool": "new_tool",
    "sequence": "sequence",
    "context": "sequence",
    "session": "sequence",
    "burst": "burst",
    "timing": "off_hours",
    "arguments": "arguments",
    "provenance": "arguments",
    "reasoning": "reasoning",
}
_PRIORITY = ("tool", "burst", "timing", "arguments", "provenance", "reasoning", "context", "sequence", "session")
_TIE_P = 1e-4  # p-values this small are all "far out" when choosing the type
_MAX_NULL = 400  # quantiles kept per component and agent
_MIN_NULL = 10  # a component with fewer replayed values is left out of the agent's score
_REASON_P = 0.02  # components below this p-value are named in the reasons
_P_FLOOR = 1e-12
_MIN_SESSION_GAP = 30.0  # seconds
_CALIBRATION_FROM = 0.5  # the threshold is calibrated on the history's second half (judged against most of it)
NO_HISTORY = "agent has no history in the model"

Progress = Callable[[float, str], None]


def tippett(pvalues: Sequence[float]) -> float:
    """Tippett's combined p-value: the chance that the smallest of k independent p-values is this small."""
    if not pvalues:
        return 1.0
    smallest = min(pvalues)
    return -math.expm1(len(pvalues) * math.log1p(-min(smallest, 1 - 1e-12)))


def truncated_product(pvalues: Sequence[float], tau: float = 0.1) -> float:
    """Zaykin's truncated product method (2002): the chance, under independent uniform p-values, that the
    product of those at most `tau` is this small (1.0 when none is). Unlike Fisher's product it is not
    diluted by the many components that are unremarkable for an action."""
    small = [max(p, _P_FLOOR) for p in pvalues if p <= tau]
    if not small:
        return 1.0
    n = len(pvalues)
    w = math.prod(small)
    total = 0.0
    for k in range(1, n + 1):
        weight = math.comb(n, k) * (1 - tau) ** (n - k)
        if w <= tau**k:
            x = k * math.log(tau) - math.log(w)
            term, inner = 1.0, 1.0
            for s_ in range(1, k):
                term *= x / s_
                inner += term
            total += weight * w * inner
        else:
            total += weight * tau**k
    return min(1.0, total)


def combine(pvalues: Sequence[float]) -> float:
    """The smaller of Tippett's (one component far out) and the truncated product's (several somewhat out,
    the rest ignored) combination, doubled for having looked at both."""
    return min(1.0, 2 * min(tippett(pvalues), truncated_product(pvalues)))


def to_score(pvalue: float) -> float:
    strength = max(0.0, -math.log10(max(pvalue, 1e-300)))
    return strength / (strength + 3.0)


def _quantiles(values: list[float], limit: int) -> list[float]:
    ordered = sorted(values)
    if len(ordered) <= limit:
        return [round(v, 6) for v in ordered]
    step = (len(ordered) - 1) / (limit - 1)
    return [round(ordered[round(i * step)], 6) for i in range(limit)]


def pvalue(null: list[float], x: float) -> float:
    """P(surprise >= x) on normal traffic, from the sorted null sample; beyond its maximum an exponential
    tail (scaled by the spread of its top decile) keeps larger surprises ordered."""
    n = len(null)
    x = round(x, 6)  # as the null sample is stored
    above = n - bisect.bisect_left(null, x - 1e-9)
    p = (1 + above) / (n + 1)
    if above == 0:
        top = null[-1]
        scale = max(0.25, top - null[int(0.9 * (n - 1))])
        p *= math.exp(-(x - top) / scale)
    return max(p, _P_FLOOR)


@dataclasses.dataclass(frozen=True)
class AnomalyScore:
    """The verdict on one action. `kind` names the most unusual component (None when nothing stood out)."""

    score: float
    is_anomaly: bool
    reasons: list[str]
    kind: str | None
    components: dict[str, float]  # p-value of each component present

    def to_json(self) -> dict[str, Any]:
        return {
            "score": round(self.score, 4),
            "is_anomaly": self.is_anomaly,
            "reasons": self.reasons,
            "type": self.kind,
        }


@dataclasses.dataclass
class _Agent:
    profile: AgentProfile
    nulls: dict[str, list[float]]


class AnomalyModel:
    """A fitted model: per-agent profiles and null distributions, the threshold, parameters and metrics."""

    def __init__(
        self, agents: dict[str, _Agent], threshold: float, params: AnomalyParams, metrics: dict[str, Any]
    ) -> None:
        self._agents = agents
        self.threshold = threshold
        self.params = params
        self.metrics = metrics

    @property
    def agents(self) -> list[str]:
        return sorted(self._agents)

    def with_threshold(self, threshold: float) -> AnomalyModel:
        """The same model with another threshold. Raises `ValueError` outside 0..1."""
        if not 0.0 <= threshold <= 1.0:
            raise ValueError("threshold must be between 0.0 and 1.0")
        return AnomalyModel(self._agents, threshold, self.params, self.metrics)

    def scorer(self) -> Scorer:
        return Scorer(self)

    def to_document(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "threshold": self.threshold,
            "params": self.params.to_dict(),
            "metrics": self.metrics,
            "agents": {
                agent_id: {"profile": a.profile.to_dict(), "nulls": a.nulls} for agent_id, a in self._agents.items()
            },
        }

    @classmethod
    def from_document(cls, doc: Mapping[str, Any]) -> AnomalyModel:
        """Raises `ModelFormatError` for anything but a document written by `to_document`."""
        if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
            raise ModelFormatError(f"not an anomaly model document of format {FORMAT}")
        try:
            agents = {
                str(agent_id): _Agent(
                    profile=AgentProfile.from_dict(data["profile"]),
                    nulls={str(c): sorted(float(v) for v in values) for c, values in data["nulls"].items()},
                )
                for agent_id, data in doc["agents"].items()
            }
            threshold = float(doc["threshold"])
            params = AnomalyParams.from_dict(doc["params"])
            metrics = dict(doc["metrics"])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ModelFormatError(f"malformed anomaly model document: {exc!r}") from None
        if not 0.0 <= threshold <= 1.0 or any(c not in COMPONENTS for a in agents.values() for c in a.nulls):
            raise ModelFormatError("malformed anomaly model document: values out of range")
        return cls(agents, threshold, params, metrics)

    # ---- used by Scorer

    def _judge(self, agent: _Agent, event: ActionEvent, context: Context) -> AnomalyScore:
        surprises = agent.profile.surprises(event, context)
        context.peak = max(context.peak, surprises["sequence"])
        pvalues = {
            name: pvalue(agent.nulls[name], x)
            for name, x in surprises.items()
            if len(agent.nulls.get(name, ())) >= _MIN_NULL
        }
        score = to_score(combine(list(pvalues.values())))
        # Ties (p-values at the floor) go to the more specific component: a new tool or a burst also makes
        # an unusual sequence.
        unusual = sorted((max(p, _TIE_P), _PRIORITY.index(name), name) for name, p in pvalues.items() if p < _REASON_P)
        reasons = [agent.profile.explain(name, event, context) for _, _, name in unusual[:3]]
        kind = KINDS[unusual[0][2]] if unusual else None
        return AnomalyScore(
            score=score, is_anomaly=score >= self.threshold, reasons=reasons, kind=kind, components=pvalues
        )


class Scorer:
    """Scores actions against a model, keeping each agent's recent context (bounded: a few numbers per agent)."""

    def __init__(self, model: AnomalyModel) -> None:
        self.model = model
        self._contexts: dict[str, Context] = {}
        self._parent: Scorer | None = None

    def fork(self) -> Scorer:
        """A scorer of the same model whose agents' contexts start as copies of this one's (copied on first
        use): score a batch on it, then `adopt` it once the batch is known to be kept, or drop it."""
        child = Scorer(self.model)
        child._parent = self
        return child

    def adopt(self, fork: Scorer) -> None:
        """Take the contexts `fork` moved on as this scorer's own."""
        self._contexts.update(fork._contexts)

    def _context(self, agent_id: str) -> Context:
        context = self._contexts.get(agent_id)
        if context is None:
            inherited = None if self._parent is None else self._parent._contexts.get(agent_id)
            context = Context() if inherited is None else dataclasses.replace(inherited)
            self._contexts[agent_id] = context
        return context

    def score(self, event: ActionEvent, *, remember: bool = True) -> AnomalyScore:
        """The verdict on `event` in its agent's recent context; with `remember` (default) the event then
        becomes part of that context. An agent the model does not know scores 0 (`reasons` says so)."""
        agent = self.model._agents.get(event.agent_id)
        if agent is None:
            return AnomalyScore(0.0, False, [NO_HISTORY], None, {})
        context = self._context(event.agent_id)
        if not remember:
            context = dataclasses.replace(context)
        context.begin(event.timestamp.timestamp(), _gap(agent.profile, self.model.params))
        verdict = self.model._judge(agent, event, context)
        context.advance(event)
        return verdict

    def observe(self, event: ActionEvent) -> None:
        """Make `event` part of its agent's recent context without scoring it."""
        agent = self.model._agents.get(event.agent_id)
        if agent is None:
            return
        context = self._context(event.agent_id)
        context.begin(event.timestamp.timestamp(), _gap(agent.profile, self.model.params))
        context.advance(event)


def _gap(profile: AgentProfile, params: AnomalyParams) -> float:
    return profile.session_gap or params.session_gap_seconds


def learn_session_gap(ordered: Sequence[ActionEvent], maximum: float) -> float:
    """The silence that separates this agent's sessions: Otsu's split of its log gaps (calls within a task
    come seconds apart, tasks minutes apart; longer gaps count as `maximum`), kept between `_MIN_SESSION_GAP`
    and `maximum` seconds. Fewer than ten gaps: `maximum`."""
    gaps = sorted(
        min(g, maximum)
        for a, b in itertools.pairwise(ordered)
        if (g := (b.timestamp - a.timestamp).total_seconds()) > 0
    )
    if len(gaps) < 10:
        return maximum
    logs = [math.log(g) for g in gaps]
    total, count = sum(logs), len(logs)
    best, split, head = -1.0, logs[-1], 0.0
    for i in range(1, count):
        head += logs[i - 1]
        if logs[i] == logs[i - 1]:
            continue
        mean_a, mean_b = head / i, (total - head) / (count - i)
        between = i * (count - i) * (mean_a - mean_b) ** 2
        if between > best:
            best, split = between, (logs[i - 1] + logs[i]) / 2
    return round(min(maximum, max(_MIN_SESSION_GAP, math.exp(split))), 3)


def fit(
    events: Sequence[ActionEvent], params: AnomalyParams | None = None, progress: Progress | None = None
) -> AnomalyModel:
    """Learn every agent with at least `params.min_events_per_agent` events; calibrate the threshold.

    Raises `NotEnoughHistory` when no agent has that many. Deterministic: the same events (in any order)
    give the same document.
    """
    params = params or AnomalyParams()
    report = progress or (lambda fraction, phase: None)
    by_agent: dict[str, list[ActionEvent]] = {}
    for event in events:
        by_agent.setdefault(event.agent_id, []).append(event)
    eligible = {a: evs for a, evs in by_agent.items() if len(evs) >= params.min_events_per_agent}
    if not eligible:
        most = max((len(v) for v in by_agent.values()), default=0)
        raise NotEnoughHistory(f"no agent has {params.min_events_per_agent} events to learn from (the most is {most})")
    agents: dict[str, _Agent] = {}
    replayed: dict[str, list[tuple[ActionEvent, Context]]] = {}
    for done, agent_id in enumerate(sorted(eligible)):
        report(0.8 * done / len(eligible), "profiling")
        ordered = sorted(eligible[agent_id], key=lambda e: (e.timestamp, e.action, str(e.resource)))
        profile = AgentProfile(session_gap=learn_session_gap(ordered, params.session_gap_seconds))
        context = Context()
        warmup = int(len(ordered) * params.warmup_fraction)
        nulls: dict[str, list[float]] = {name: [] for name in COMPONENTS}
        judged: list[tuple[ActionEvent, Context]] = []
        for index, event in enumerate(ordered):
            seconds = event.timestamp.timestamp()
            context.begin(seconds, profile.session_gap)
            if index >= warmup:
                surprises = profile.surprises(event, context)
                for name, x in surprises.items():
                    nulls[name].append(x)
                context.peak = max(context.peak, surprises["sequence"])
                judged.append((event, dataclasses.replace(context)))
            profile.learn(event, context, max_values=params.max_values_per_key)
            context.advance(event)
        profile.finish()
        agents[agent_id] = _Agent(profile, {k: _quantiles(v, _MAX_NULL) for k, v in nulls.items() if v})
        replayed[agent_id] = judged
    report(0.8, "calibrating")
    model = AnomalyModel(agents, 1.0, params, {})
    # Calibration: each replayed action against the profile as it was then (its prefix), p-values from the
    # agent's full null sample; the profile is rebuilt in the same order so the replay matches the nulls.
    scores: list[float] = []
    for agent_id in sorted(replayed):
        nulls = agents[agent_id].nulls
        ordered = sorted(eligible[agent_id], key=lambda e: (e.timestamp, e.action, str(e.resource)))
        profile, context = AgentProfile(session_gap=agents[agent_id].profile.session_gap), Context()
        warmup = int(len(ordered) * params.warmup_fraction)
        shadow = _Agent(profile, nulls)
        calibrate_from = max(warmup, int(len(ordered) * _CALIBRATION_FROM))
        for index, event in enumerate(ordered):
            seconds = event.timestamp.timestamp()
            context.begin(seconds, profile.session_gap)
            if index >= calibrate_from:
                scores.append(model._judge(shadow, event, context).score)
            profile.learn(event, context, max_values=params.max_values_per_key)
            context.advance(event)
    scores.sort()
    cut = min(len(scores) - 1, max(0, math.ceil(len(scores) * (1 - params.target_alert_rate))))
    threshold = round(min(0.999, max(0.05, scores[cut] + 1e-6)), 6)
    alert_rate = sum(1 for s in scores if s >= threshold) / len(scores)
    times = [e.timestamp for e in events]
    metrics = {
        "events": len(events),
        "agents": len(by_agent),
        "modelled_agents": len(agents),
        "calibration_events": len(scores),
        "calibration_alert_rate": round(alert_rate, 5),
        "target_alert_rate": params.target_alert_rate,
        "score_quantiles": {
            q: round(scores[min(len(scores) - 1, int(len(scores) * float(q)))], 4) for q in ("0.5", "0.9", "0.99")
        },
        "window_start": min(times).isoformat(),
        "window_end": max(times).isoformat(),
    }
    report(1.0, "done")
    return AnomalyModel(agents, threshold, params, metrics)
