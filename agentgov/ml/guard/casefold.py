"""Text lower-cased as `re.IGNORECASE` compares it, so that the rules' patterns can run case-sensitively.

`re.IGNORECASE` costs a pattern most of its optimisations (a literal prefix, a set of first characters), so a
rule ran at every position of a text; the same pattern, lower-cased and run case-sensitively on lower-cased
text, skips to where it can start and runs in about half the time. The two are the same search when both sides
are lower-cased as the regular expression engine compares characters under `re.IGNORECASE`:

- `fold(text)` maps each character to one representative of the characters `re.IGNORECASE` holds equal to it:
  its simple lower case (U+0130, capital I with a dot, to "i", where `str.lower` gives two characters), then one
  member of each of the engine's extra classes (dotless i with "i", long s with "s", Greek final sigma with
  sigma, the old Cyrillic letter forms with their letters). Each character stays one character, so a match's
  span is the same in the text and in its fold.
- `fold_pattern(pattern)` folds the literal characters of a pattern and leaves its escapes (`\\S`, `\\u3002`,
  `\\N{...}`) as they are.

A pattern folds correctly when it holds no case-sensitive group (`(?-i:...)`: `foldable`). For one that does,
`relaxed_pattern` gives a necessary test: the pattern with those groups ignoring case too, folded. Pure.
"""

from __future__ import annotations

import re

from agentgov.ml.guard.openings import group_end, share_openings

#: Characters `re.IGNORECASE` holds equal beyond their lower case (CPython's `re._casefix`), one class per
#: string; the first is the representative. A combining mark is not folded into a letter (`\w` and `\b` would
#: read it differently): U+0345 stays itself.
_EXTRA_CLASSES = (
    "i\u0131",
    "s\u017f",
    "\u03bc\u00b5",
    "\u03b9\u1fbe",
    "\u0390\u1fd3",
    "\u03b0\u1fe3",
    "\u03b2\u03d0",
    "\u03b5\u03f5",
    "\u03b8\u03d1",
    "\u03ba\u03f0",
    "\u03c0\u03d6",
    "\u03c1\u03f1",
    "\u03c3\u03c2",
    "\u03c6\u03d5",
    "\u0432\u1c80",
    "\u0434\u1c81",
    "\u043e\u1c82",
    "\u0441\u1c83",
    "\u0442\u1c84\u1c85",
    "\u044a\u1c86",
    "\u0463\u1c87",
    "\ua64b\u1c88",
    "\u1e61\u1e9b",
    "\ufb06\ufb05",
)

_AFTER_LOWER = str.maketrans({ord(member): members[0] for members in _EXTRA_CLASSES for member in members[1:]})
#: Any character `_AFTER_LOWER` replaces: most texts hold none, and a search costs a fraction of a translation.
_EXTRA_MEMBER = re.compile("[" + "".join(re.escape(m) for members in _EXTRA_CLASSES for m in members[1:]) + "]")


def fold(text: str) -> str:
    """`text` with each character replaced by the representative of its class under `re.IGNORECASE` (see the
    module docstring); the result has the same length, so spans carry over."""
    if text.isascii():
        return text.lower()
    lowered = text.replace("\u0130", "i").lower()  # U+0130's simple lower case, where `str.lower` gives two
    if _EXTRA_MEMBER.search(lowered) is None:
        return lowered
    return lowered.translate(_AFTER_LOWER)


_ESCAPE_LENGTHS = {"x": 2, "u": 4, "U": 8}


def foldable(pattern: str) -> bool:
    """Whether `pattern` (written for `re.IGNORECASE`) has no case-sensitive group, so `fold_pattern` keeps its
    meaning."""
    return "(?-i:" not in pattern


def fold_pattern(pattern: str) -> str:
    """`pattern` with its literal characters folded (`fold`) and its escapes kept: run without `re.IGNORECASE`
    on `fold(text)`, it matches where `pattern` with `re.IGNORECASE` matches `text`, at the same spans.
    Raises `ValueError` for a pattern with a case-sensitive group (`foldable`)."""
    if not foldable(pattern):
        raise ValueError("a pattern with a case-sensitive group cannot be folded")
    parts: list[str] = []
    position = 0
    while position < len(pattern):
        char = pattern[position]
        if char != "\\":
            parts.append(fold(char))
            position += 1
            continue
        escaped = pattern[position + 1 : position + 2]
        end = position + 2
        if escaped in _ESCAPE_LENGTHS:
            end += _ESCAPE_LENGTHS[escaped]
        elif escaped == "N" and pattern[end : end + 1] == "{":
            end = pattern.index("}", end) + 1
        parts.append(pattern[position:end])
        position = end
    return "".join(parts)


def compile_folded(pattern: str) -> re.Pattern[str]:
    """`fold_pattern(pattern)`, compiled to run case-sensitively on folded text, its alternatives that open with
    the same word-start assertion sharing it (`openings.share_openings`: the same matches, found faster)."""
    return re.compile(share_openings(fold_pattern(pattern)))


def case_sensitive_groups(pattern: str) -> list[str]:
    """The text of each case-sensitive group (`(?-i:...)`) of `pattern`, outermost ones, in order."""
    groups = []
    start = pattern.find("(?-i:")
    while start >= 0:
        end = group_end(pattern, start)
        groups.append(pattern[start : end + 1])
        start = pattern.find("(?-i:", end + 1)
    return groups


def relaxed_pattern(pattern: str) -> str | None:
    """For a pattern with case-sensitive groups, the folded pattern (`fold_pattern`) with those groups ignoring case
    as well: it matches every text the pattern matches, and more ("dan" where the pattern wants "DAN"), so where
    it finds nothing in `fold(text)` the pattern finds nothing in `text`. None for a pattern without such a group
    (`fold_pattern` serves it), or with a negative lookaround or a negated class inside one (relaxing those would
    refuse more, not less)."""
    groups = case_sensitive_groups(pattern)
    if not groups or any(sign in group for group in groups for sign in ("(?!", "(?<!", "[^")):
        return None
    return fold_pattern(pattern.replace("(?-i:", "(?:"))
