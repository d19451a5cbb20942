"""An agent's past sessions, and how far the current session's next step follows the ones most like it.

An injected instruction makes an agent take steps that are ordinary on their own but foreign to the task in
hand. A session is summarised as the set of its tokens: the tools it called and the argument values it used
(`action_tokens`). For the current session so far, `SessionIndex.support` finds the past sessions sharing the
most tokens with it (the same task, replayed earlier) and answers how much of their weight ever called the
tool now being judged. The index is an inverted list (token → sessions), so a lookup costs the postings of
the current session's tokens, bounded by `MAX_SESSIONS`.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterable
from typing import Any

MAX_SESSIONS = 200  # most recent sessions kept per agent (bounds the model: about 1 KB a session)
MAX_TOKENS = 48  # tokens kept per session
NEIGHBOURS = 5  # most similar past sessions consulted
_MAX_VALUE_TOKENS = 6  # argument values per action that become tokens
_MAX_VALUE_LENGTH = 60
_SHARPNESS = 10.0
_CACHED = 4096  # token sets whose neighbours are kept


def tool_token(action: str) -> str:
    return f"t:{action}"


def action_tokens(action: str, leaves: Iterable[tuple[str, str]]) -> list[str]:
    """The tool's token followed by tokens for its first argument values (short values only)."""
    tokens = [tool_token(action)]
    for path, text in leaves:
        if len(tokens) > _MAX_VALUE_TOKENS:
            break
        if len(text) <= _MAX_VALUE_LENGTH:
            tokens.append(f"v:{action}:{path}={text}")
    return tokens


class SessionIndex:
    """Past sessions (token sets, oldest first) with an inverted index. Not thread-safe.

    Sessions are numbered in the order they were added; `_first` is the number of the oldest one kept, so
    each posting list is in increasing order and evicting the oldest session pops the front of its lists."""

    def __init__(self, sessions: Iterable[Iterable[str]] = ()) -> None:
        self._sets: deque[frozenset[str]] = deque()
        self._first = 0
        self._postings: dict[str, deque[int]] = {}
        self._nearest: dict[frozenset[str], list[tuple[frozenset[str], float]] | None] = {}
        for tokens in sessions:
            self.add(tokens)

    def add(self, tokens: Iterable[str]) -> None:
        number = self._first + len(self._sets)
        unique = frozenset(tokens)
        self._sets.append(unique)
        for token in unique:
            self._postings.setdefault(token, deque()).append(number)
        self._nearest.clear()

    def evict_oldest(self) -> None:
        """Forget the oldest session (no-op when empty)."""
        if not self._sets:
            return
        for token in self._sets.popleft():
            postings = self._postings[token]
            postings.popleft()
            if not postings:
                del self._postings[token]
        self._first += 1
        self._nearest.clear()

    def __len__(self) -> int:
        return len(self._sets)

    def support(self, current: frozenset[str], action: str) -> tuple[float, float] | None:
        """(weight of the most similar sessions that called `action`, their total weight), or None when
        no past session shares a token with `current`. The `NEIGHBOURS` sessions sharing the most tokens
        with `current` are consulted (ties: the more recent); each weighs its share of the best overlap,
        sharpened (in effect: the sessions with the best overlap). The neighbours of a token set are
        cached (a session's set stops growing after its opening steps) until the next `add`."""
        if not current:
            return None
        if current in self._nearest:
            weights = self._nearest[current]
        else:
            weights = self._neighbours(current)
            if len(self._nearest) >= _CACHED:
                self._nearest.clear()
            self._nearest[current] = weights
        if weights is None:
            return None
        token = tool_token(action)
        total = sum(w for _, w in weights)
        held = sum(w for tokens, w in weights if token in tokens)
        return held, total

    def _neighbours(self, current: frozenset[str]) -> list[tuple[frozenset[str], float]] | None:
        overlap: dict[int, int] = {}
        for token in current:
            for number in self._postings.get(token, ()):
                overlap[number] = overlap.get(number, 0) + 1
        if not overlap:
            return None
        nearest = heapq.nlargest(NEIGHBOURS, overlap.items(), key=lambda item: (item[1], item[0]))
        best = nearest[0][1]
        return [(self._sets[number - self._first], (count / best) ** _SHARPNESS) for number, count in nearest]


def from_lists(data: Any) -> list[list[str]]:
    """Raises `TypeError`/`ValueError` for anything but a list of lists of strings."""
    if not isinstance(data, list) or any(not isinstance(s, list) for s in data):
        raise ValueError("sessions must be a list of token lists")
    return [[str(t) for t in s if isinstance(t, str)] for s in data]
