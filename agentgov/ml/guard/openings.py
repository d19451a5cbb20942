"""Alternatives of a regular expression that open with the same word-start assertion, written to share it.

Python's engine tries the alternatives of a group one after another at each position, and it skips an
alternative at once when that alternative opens with a literal character the text does not hold there. An
alternative that opens with `\\b` or `(?<!\\w)` is entered at every word first, and fails later. The rules'
patterns (`languages.py`) list dozens of such alternatives, so each word cost dozens of tries.

`share_openings(pattern)` writes each run of consecutive alternatives that open with the same assertion as one
alternative: the assertion, then a group of what followed it (`\\bdu …|\\btu …` reads `\\b(?:du …|tu …)`). Both
forms try the same alternatives in the same order at each position, and an assertion matches in one way only, so
they find the same matches at the same spans; the shared form tests the assertion once and skips the rest by
their opening letters. It rewrites the top level of the pattern and, where the pattern is a run of lookaheads
followed by a single group, that group's alternatives. Pure.
"""

from __future__ import annotations

from collections.abc import Iterator

OPENINGS = ("\\b", "(?<!\\w)")


def class_end(pattern: str, start: int) -> int:
    """The position just after the character class that opens at `start` (a `[`)."""
    position = start + 1
    if pattern[position : position + 1] == "^":
        position += 1
    if pattern[position : position + 1] == "]":  # a leading "]" is a member
        position += 1
    while position < len(pattern) and pattern[position] != "]":
        position += 2 if pattern[position] == "\\" else 1
    return position + 1


def _walk(pattern: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """Each character of `pattern` from `start` that is neither escaped nor in a class, with its position and the
    depth of groups there (a `(` counted in, a `)` counted out)."""
    depth, position = 0, start
    while position < len(pattern):
        char = pattern[position]
        if char == "\\":
            position += 2
            continue
        if char == "[":
            position = class_end(pattern, position)
            continue
        depth += (char == "(") - (char == ")")
        yield position, char, depth
        position += 1


def group_end(pattern: str, start: int) -> int:
    """The position of the `)` that closes the group opening at `start` (a `(`); `len(pattern)` when none does."""
    for position, char, depth in _walk(pattern, start):
        if char == ")" and depth == 0:
            return position
    return len(pattern)


def alternatives(pattern: str) -> list[str]:
    """The top-level alternatives of `pattern` (split at each `|` outside groups and classes)."""
    parts, start = [], 0
    for position, char, depth in _walk(pattern):
        if char == "|" and depth == 0:
            parts.append(pattern[start:position])
            start = position + 1
    parts.append(pattern[start:])
    return parts


def _opening(alternative: str) -> str | None:
    return next((opening for opening in OPENINGS if alternative.startswith(opening)), None)


def _share(parts: list[str]) -> str:
    """The alternatives joined, each run of two or more with the same opening sharing it."""
    out: list[str] = []
    k = 0
    while k < len(parts):
        opening = _opening(parts[k])
        run_end = k + 1
        while opening is not None and run_end < len(parts) and _opening(parts[run_end]) == opening:
            run_end += 1
        if run_end - k > 1:
            assert opening is not None
            out.append(opening + "(?:" + "|".join(part[len(opening) :] for part in parts[k:run_end]) + ")")
        else:
            out.append(parts[k])
        k = run_end
    return "|".join(out)


def share_openings(pattern: str) -> str:
    """`pattern` with each run of consecutive alternatives that open with the same word-start assertion sharing
    it (see the module docstring): at its top level, or inside its one group after a run of lookaheads."""
    parts = alternatives(pattern)
    if len(parts) > 1:
        return _share(parts)
    position = 0
    while pattern.startswith("(?=", position):  # lookaheads first: the group after them
        position = group_end(pattern, position) + 1
    if pattern.startswith("(?:", position) and group_end(pattern, position) == len(pattern) - 1:
        return pattern[: position + 3] + _share(alternatives(pattern[position + 3 : -1])) + ")"
    return pattern
