"""What the detector knows of one agent, and how surprising one action is against it.

An `AgentProfile` holds counts learnt from the agent's own history: tools, transitions between tools within a
session (first and second order), hours and day types, argument values per tool and argument, resources, and the
words of its reasoning. `surprises(event, context)` measures an action in six components, each a number where
higher means more unusual for this agent:

* `tool`: how rare the tool is for the agent (never used: highest);
* `sequence`: how unlikely the tool is after the tools before it in the same session (up to six);
* `context`: how rarely the past sessions most like the current one (same tools and argument values so far:
  the same task) ever called the tool (`sessions.SessionIndex`);
* `burst`: how many calls the last ten seconds hold, plus the rate of the last two gaps;
* `timing`: how rarely the agent works at this hour and on this kind of day;
* `arguments`: how many argument values (and the resource) were never seen for this tool;
* `provenance` (not on a session's first call): how many argument values appear nowhere in the session's
  earlier inputs and outputs, each weighted by how rarely that argument of that tool came from nowhere in the
  agent's history (an injected instruction brings values of its own; an agent mostly passes on what it read);
* `reasoning` (only when the action carries reasoning): how many of its words the agent never used, and
  whether this tool ever followed the same opening step (the goal it was given).

`Context` is the agent's recent past that an action is judged in (previous tools and tokens of the session,
time of the last call, last gap); `advance` moves it on. Sessions are split at silences longer than the
agent's own learnt gap (`learn_session_gap`). Both are plain data, so a profile serialises to JSON.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import math
import re
from collections.abc import Iterator, Mapping
from typing import Any

from agentgov.ml.anomaly.records import ActionEvent
from agentgov.ml.anomaly.sessions import MAX_SESSIONS, MAX_TOKENS, SessionIndex, action_tokens, from_lists

START = "^"
COMPONENTS = ("tool", "sequence", "context", "session", "burst", "timing", "arguments", "provenance", "reasoning")
_WORD = re.compile(r"[a-z][a-z0-9_]{2,}")
_MAX_LEAVES = 32
_MAX_VALUE = 120
_MAX_WORDS = 6000
_MAX_RESOURCES = 4000
_MAX_OPENINGS = 2000
OPENING_STEPS = 2  # the session's first steps (its task) that find the similar past sessions
MAX_ORDER = 6  # longest run of preceding tools (within the session) a tool is predicted from
_CONCENTRATION = 0.5  # weight of the shorter context's prediction in each longer one
_UNMATCHED_WEIGHT = 1.0  # surprise per preceding tool outside every known path
BURST_WINDOW = 10.0  # seconds
_RECENT = 16
_HOUR_KERNEL = ((-1, 0.25), (0, 0.5), (1, 0.25))
_MAX_SESSION_TEXT = 8000  # characters of the session's inputs and outputs kept to trace argument values to
_MAX_EVENT_TEXT = 6000  # characters of one action's input and output added to it
OUTPUT_TEXT_LIMIT = _MAX_EVENT_TEXT // 2  # characters of an action's output the detector looks at
_MIN_TRACED = 3  # shorter argument values (flags, small numbers) are not traced


@dataclasses.dataclass(slots=True)
class Context:
    """The agent's recent past: the session's last two tools, when it last acted, the last gap (seconds)."""

    history: tuple[str, ...] = (START,)  # the session's tools so far (the last `MAX_ORDER`), after START
    last_time: float | None = None
    last_gap: float | None = None
    gap: float | None = None  # the gap of the action being judged (set by `begin`)
    recent: tuple[float, ...] = ()  # times of the session's last calls (at most `_RECENT`)
    window: int = 0  # calls of the session within `BURST_WINDOW` seconds up to the judged one (set by `begin`)
    tokens: frozenset[str] = frozenset()  # the session's tools and argument values so far (`MAX_TOKENS`)
    peak: float = 0.0  # the largest sequence surprise of the session's earlier steps
    text: str = ""  # the session's earlier inputs and outputs, lower-cased (the last `_MAX_SESSION_TEXT` chars)

    @property
    def prev(self) -> str:
        return self.history[-1]

    def begin(self, timestamp: float, session_gap: float) -> None:
        """Position the context for an action at `timestamp`: a long silence starts a new session."""
        if self.last_time is None or timestamp - self.last_time > session_gap:
            self.history = (START,)
            self.last_gap = None
            self.gap = None
            self.recent = ()
            self.tokens = frozenset()
            self.peak = 0.0
            self.text = ""
        else:
            gap = timestamp - self.last_time
            self.gap = gap if gap >= 0 else None
        self.window = 1 + sum(1 for t in self.recent if 0 <= timestamp - t <= BURST_WINDOW)

    @property
    def starts_session(self) -> bool:
        return len(self.history) == 1

    def advance(self, event: ActionEvent) -> None:
        """Remember the action judged last (call after `begin`)."""
        action, timestamp = event.action, event.timestamp.timestamp()
        if len(self.history) <= OPENING_STEPS and len(self.tokens) < MAX_TOKENS:
            self.tokens = self.tokens.union(action_tokens(action, leaves(event.input or {})))
        self.history = (*self.history, action)[-(MAX_ORDER + 1) :]
        added = flat_text(event.input, _MAX_EVENT_TEXT // 2) + "\n" + flat_text(event.output, OUTPUT_TEXT_LIMIT)
        self.text = (self.text + "\n" + added.lower())[-_MAX_SESSION_TEXT:]
        self.last_gap = self.gap
        self.recent = (*self.recent, timestamp)[-_RECENT:]
        if self.last_time is None or timestamp >= self.last_time:
            self.last_time = timestamp


def leaves(value: Any, prefix: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) of the scalar values inside an argument object, at most `_MAX_LEAVES`."""
    count = 0
    stack: list[tuple[str, Any]] = [(prefix, value)]
    while stack and count < _MAX_LEAVES:
        path, item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in item.items())
        elif isinstance(item, list | tuple):
            stack.extend((f"{path}[]", v) for v in item[:_MAX_LEAVES])
        elif item is not None:
            count += 1
            yield path, str(item)[:_MAX_VALUE]


def flat_text(value: Any, limit: int) -> str:
    """The scalar values inside `value` (strings as they are, so a JSON document held in a string keeps its
    values verbatim), joined by newlines, at most `limit` characters."""
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    while stack and size < limit:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item[:_MAX_LEAVES]))
        elif item is not None:
            text = str(item)[: limit - size]
            parts.append(text)
            size += len(text) + 1
    return "\n".join(parts)


def traced(event: ActionEvent, context: Context) -> Iterator[tuple[str, bool]]:
    """(argument path, found earlier in the session) for each argument value long enough to trace."""
    for path, text in leaves(event.input or {}):
        if len(text) >= _MIN_TRACED:
            yield path, text.lower() in context.text


def words(text: str | None) -> set[str]:
    return set(_WORD.findall(text.lower())) if text else set()


def opening(text: str | None) -> str | None:
    """A digest of the reasoning's first step (the goal the agent was given), or None."""
    if not text:
        return None
    first = text.strip().split("\n", 1)[0].strip().lower()
    return hashlib.sha256(first.encode()).hexdigest()[:16] if first else None


@functools.lru_cache(maxsize=8192)
def _context_keys(history: tuple[str, ...]) -> tuple[str, ...]:
    """The keys of the contexts ending at the latest tool, longest first (at most `MAX_ORDER` tools)."""
    return tuple("|".join(history[-k:]) for k in range(min(len(history), MAX_ORDER), 0, -1))


def _hour_and_day(timestamp: float) -> tuple[int, int]:
    """Hour of day (UTC) and day type (0 weekday, 1 weekend) of a POSIX time."""
    days, seconds = divmod(int(timestamp), 86400)
    weekday = (days + 3) % 7  # 1970-01-01 was a Thursday (Monday = 0)
    return seconds // 3600, 1 if weekday >= 5 else 0


@dataclasses.dataclass
class AgentProfile:
    """Counts of one agent's history (see the module docstring). Mutated only by `learn`."""

    events: int = 0
    tools: dict[str, int] = dataclasses.field(default_factory=dict)
    contexts: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)  # "a|b" -> next tool counts
    hours: list[int] = dataclasses.field(default_factory=lambda: [0] * 24)
    days: list[int] = dataclasses.field(default_factory=lambda: [0, 0])
    values: dict[str, dict[str, list[str]]] = dataclasses.field(default_factory=dict)
    resources: list[str] = dataclasses.field(default_factory=list)
    vocabulary: list[str] = dataclasses.field(default_factory=list)
    openings: dict[str, list[str]] = dataclasses.field(default_factory=dict)
    gaps: list[float] = dataclasses.field(default_factory=list)  # a sample of in-session gaps (seconds)
    resource_events: int = 0  # actions that named a resource
    observed: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)  # values seen per tool, path
    sessions: list[list[str]] = dataclasses.field(default_factory=list)  # past sessions' tokens, oldest first
    session_gap: float = 0.0  # a longer silence starts a new session (0: the parameter's maximum)
    untraced: dict[str, dict[str, list[int]]] = dataclasses.field(default_factory=dict)  # tool, path -> [new, all]
    _sets: dict[tuple[str, ...], Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------------------------------ learning

    def learn(self, event: ActionEvent, context: Context, *, max_values: int) -> None:
        """Add `event` (judged in `context`, before `context.advance`)."""
        sets = self._lookup_sets()
        self.events += 1
        action = event.action
        current = sets.get(("s",))
        if current is None or context.starts_session:
            self.finish()
            current = sets[("s",)] = set()
        if len(current) < MAX_TOKENS:
            current.update(action_tokens(action, leaves(event.input or {})))
        self.tools[action] = self.tools.get(action, 0) + 1
        for key in _context_keys(context.history):
            row = self.contexts.setdefault(key, {})
            row[action] = row.get(action, 0) + 1
        hour, day = _hour_and_day(event.timestamp.timestamp())
        self.hours[hour] += 1
        self.days[day] += 1
        if not context.starts_session:
            per_path = self.untraced.setdefault(action, {})
            for path, found in traced(event, context):
                tally = per_path.setdefault(path, [0, 0])
                tally[0] += 0 if found else 1
                tally[1] += 1
        if context.gap is not None and len(self.gaps) < 5000:
            self.gaps.append(round(context.gap, 3))
        per_key = self.values.setdefault(action, {})
        counts = self.observed.setdefault(action, {})
        for path, text in leaves(event.input or {}):
            counts[path] = counts.get(path, 0) + 1
            seen = sets.setdefault(("v", action, path), set(per_key.get(path, ())))
            if text not in seen and len(seen) < max_values:
                seen.add(text)
                per_key.setdefault(path, []).append(text)
        resources = sets.setdefault(("r",), set(self.resources))
        if event.resource:
            self.resource_events += 1
        if event.resource and event.resource not in resources and len(resources) < _MAX_RESOURCES:
            resources.add(event.resource)
            self.resources.append(event.resource)
        vocabulary = sets.setdefault(("w",), set(self.vocabulary))
        for word in sorted(words(event.reasoning) - vocabulary):
            if len(vocabulary) >= _MAX_WORDS:
                break
            vocabulary.add(word)
            self.vocabulary.append(word)
        goal = opening(event.reasoning)
        if goal is not None and (goal in self.openings or len(self.openings) < _MAX_OPENINGS):
            followers = self.openings.setdefault(goal, [])
            if action not in followers:
                followers.append(action)

    def finish(self) -> None:
        """Close the session being learnt (call once the history has been learnt)."""
        current = self._sets.pop(("s",), None)
        if current:
            self.sessions.append(sorted(current))
            index = self._sets.get(("i",))
            if index is not None:
                index.add(current)
            if len(self.sessions) > MAX_SESSIONS:
                del self.sessions[0]
                if index is not None:
                    index.evict_oldest()

    def _lookup_sets(self) -> dict[tuple[str, ...], Any]:
        return self._sets

    def session_index(self) -> SessionIndex:
        index = self._sets.get(("i",))
        if index is None:
            index = self._sets[("i",)] = SessionIndex(self.sessions)
        return index

    # ---------------------------------------------------------------------------------------- judging

    def probability(self, action: str, context: Context) -> float:
        """P(action | the session's preceding tools): each longer context seen in the history refines the
        shorter one's prediction (interpolated smoothing, as in PPM), down to the agent's tool frequencies."""
        vocabulary = len(self.tools) + 1
        p = (self.tools.get(action, 0) + 0.1) / (self.events + 0.1 * vocabulary)
        for key in reversed(_context_keys(context.history)):  # shortest first
            row = self.contexts.get(key)
            if not row:
                break
            p = (row.get(action, 0) + _CONCENTRATION * p) / (sum(row.values()) + _CONCENTRATION)
        return p

    def unmatched(self, context: Context) -> int:
        """How many of the session's preceding tools (up to `MAX_ORDER`) lie before the longest run of them
        that the history knows: 0 while the session follows a known path, more once it leaves every one."""
        keys = _context_keys(context.history)  # longest first
        for index, key in enumerate(keys):
            if key in self.contexts:
                return index
        return len(keys)

    def surprises(self, event: ActionEvent, context: Context) -> dict[str, float]:
        """Each component's surprise for `event` in `context` (see the module docstring)."""
        sets = self._lookup_sets()
        action = event.action
        out: dict[str, float] = {}
        count = self.tools.get(action, 0)
        out["tool"] = -math.log((count + 0.1) / (self.events + 0.1 * (len(self.tools) + 1)))
        out["sequence"] = -math.log(self.probability(action, context)) + _UNMATCHED_WEIGHT * self.unmatched(context)
        if not context.starts_session:
            out["session"] = context.peak
        support = self.session_index().support(context.tokens, action)
        if support is not None:
            held, total = support
            out["context"] = -math.log((held + 0.1) / (total + 0.2))
        if context.gap is not None:
            recent = [context.gap] if context.last_gap is None else [context.gap, context.last_gap]
            out["burst"] = context.window + 1.0 / (sum(recent) / len(recent) + 0.05)
        hour, day = _hour_and_day(event.timestamp.timestamp())
        total = max(1, sum(self.hours))
        density = sum(w * self.hours[(hour + d) % 24] for d, w in _HOUR_KERNEL)
        out["timing"] = -math.log((density + 0.05) / (total + 1.2)) - math.log(
            (self.days[day] + 0.5) / (sum(self.days) + 1.0)
        )
        unseen = 0.0
        per_key = self.values.get(action, {})
        counts = self.observed.get(action, {})
        for path, text in leaves(event.input or {}):
            seen = sets.get(("v", action, path))
            if seen is None:
                seen = sets[("v", action, path)] = set(per_key.get(path, ()))
            if text not in seen:
                # A new value is as surprising as new values were rare for this argument: an account number
                # that always repeats, not a free-text subject that is new every time.
                unseen += -math.log((len(seen) + 1) / (counts.get(path, 0) + 2))
        resources = sets.get(("r",))
        if resources is None:
            resources = sets[("r",)] = set(self.resources)
        if event.resource and event.resource not in resources:
            unseen += -math.log((len(resources) + 1) / (self.resource_events + 2))
        out["arguments"] = unseen
        if not context.starts_session:
            per_path = self.untraced.get(action, {})
            untraced = 0.0
            for path, found in traced(event, context):
                if not found:
                    new, total = per_path.get(path, (0, 0))
                    untraced += -math.log((new + 0.5) / (total + 1.0))
            out["provenance"] = untraced
        if event.reasoning:
            vocabulary = sets.get(("w",))
            if vocabulary is None:
                vocabulary = sets[("w",)] = set(self.vocabulary)
            new_words = len(words(event.reasoning) - vocabulary)
            key = opening(event.reasoning)
            followers = self.openings.get(key) if key is not None else None
            off_script = 1.0 if followers is not None and action not in followers else 0.0
            out["reasoning"] = math.log1p(new_words) + 3.0 * off_script
        return out

    def explain(self, component: str, event: ActionEvent, context: Context) -> str:
        """A sentence naming what was unusual in `component` for `event`."""
        action = event.action
        if component == "tool":
            count = self.tools.get(action, 0)
            if count == 0:
                return f"tool {action} never used by this agent"
            return f"tool {action} rarely used by this agent ({count} of {self.events} calls)"
        if component == "sequence":
            before = "session start" if context.prev == START else context.prev
            row = self.contexts.get(context.prev, {})
            if row.get(action, 0) == 0:
                return f"transition {before} → {action} unseen for this agent"
            return f"transition {before} → {action} unusual for this agent ({row[action]} of {sum(row.values())})"
        if component == "session":
            return "an earlier step of this session was already out of the agent's usual paths"
        if component == "context":
            return f"tool {action} unusual in sessions like this one (same tools and arguments so far)"
        if component == "burst":
            gaps = [g for g in (context.gap, context.last_gap) if g is not None]
            usual = sorted(self.gaps)[len(self.gaps) // 2] if self.gaps else None
            apart = ", ".join(f"{g:.1f} s" for g in gaps)
            shown = f"{context.window} calls in {BURST_WINDOW:.0f} s, the last {apart} apart"
            return f"{shown}; usual gap {usual:.0f} s" if usual else shown
        if component == "timing":
            hour, day = _hour_and_day(event.timestamp.timestamp())
            active = [h for h in range(24) if self.hours[h] > 0]
            hours = f"{active[0]:02d}-{active[-1] + 1:02d} UTC" if active else "none"
            share = self.days[1] / max(1, sum(self.days))
            days = "weekends too" if share > 0.1 else "weekdays"
            when = "weekend" if day else "weekday"
            return f"active at {hour:02d}:00 UTC on a {when}; usual hours {hours}, {days}"
        if component == "arguments":
            per_key = self.values.get(action, {})
            fresh = [f"{p}={t[:40]}" for p, t in leaves(event.input or {}) if t not in set(per_key.get(p, ()))]
            if event.resource and event.resource not in set(self.resources):
                fresh.append(f"resource {event.resource[:60]}")
            return f"values never seen for {action}: " + "; ".join(fresh[:3])
        if component == "provenance":
            fresh = [f"{p}={t[:40]}" for p, t in leaves(event.input or {}) if len(t) >= _MIN_TRACED]
            fresh = [f for f, (_, found) in zip(fresh, traced(event, context), strict=False) if not found]
            return f"values of {action} found nowhere earlier in the session: " + "; ".join(fresh[:3])
        if component == "reasoning":
            new_words = sorted(words(event.reasoning) - set(self.vocabulary))
            key = opening(event.reasoning)
            followers = self.openings.get(key) if key is not None else None
            if followers is not None and action not in followers:
                return f"tool {action} never followed this goal before; reasoning has {len(new_words)} new words"
            return f"reasoning uses {len(new_words)} words this agent never used: " + ", ".join(new_words[:5])
        raise ValueError(f"unknown component {component!r}")

    # ---------------------------------------------------------------------------------------- storage

    def to_dict(self) -> dict[str, Any]:
        return copy.deepcopy({f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "_sets"})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentProfile:
        """Raises `TypeError`/`ValueError`/`KeyError` for a malformed document (the caller wraps them)."""
        profile = cls(
            events=int(data["events"]),
            tools={str(k): int(v) for k, v in data["tools"].items()},
            contexts={str(k): {str(a): int(n) for a, n in v.items()} for k, v in data["contexts"].items()},
            hours=[int(v) for v in data["hours"]],
            days=[int(v) for v in data["days"]],
            values={
                str(t): {str(p): [str(x) for x in xs] for p, xs in keys.items()} for t, keys in data["values"].items()
            },
            resources=[str(r) for r in data["resources"]],
            vocabulary=[str(w) for w in data["vocabulary"]],
            openings={str(k): [str(a) for a in v] for k, v in data["openings"].items()},
            gaps=[float(g) for g in data["gaps"]],
            resource_events=int(data.get("resource_events", 0)),
            observed={
                str(t): {str(p): int(n) for p, n in keys.items()} for t, keys in data.get("observed", {}).items()
            },
            sessions=from_lists(data.get("sessions", [])),
            session_gap=float(data.get("session_gap", 0.0)),
            untraced={
                str(t): {str(p): [int(n) for n in v][:2] for p, v in keys.items()}
                for t, keys in data.get("untraced", {}).items()
            },
        )
        if len(profile.hours) != 24 or len(profile.days) != 2 or profile.events < 0:
            raise ValueError("malformed agent profile")
        return profile
