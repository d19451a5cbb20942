"""Strings of which every match of a pattern holds one, looked for in one pass over a text.

A rule whose pattern is costly to run on every text is first given a cheap necessary test: does the text hold one
of the stems every match holds? `Stems(...)` answers it with an Aho-Corasick automaton (pyahocorasick), one pass
over the text for all its stems, where a regular expression of dozens of alternatives tried them at most
positions. It reads a text folded (`casefold.fold`) with its runs of white space written as one space (what
`rules.scan` gives every precheck), so a stem holds a space where the pattern holds `\\s` or `\\s+`. The
automaton is only read once made, so threads may search it at once. Pure.
"""

from __future__ import annotations

import ahocorasick

from agentgov.ml.guard.casefold import fold


class Stems:
    """Stems (folded here; a space stands for any run of white space) and whether a text holds one of them."""

    def __init__(self, *parts: str) -> None:
        """`parts`: strings of stems separated by "|". Raises `ValueError` for an empty stem (every text would hold
        it) or none at all."""
        stems = [stem for part in parts for stem in part.split("|")]
        if not stems or not all(stems):
            raise ValueError("stems must be non-empty strings")
        self.stems = tuple(dict.fromkeys(fold(stem) for stem in stems))
        self._automaton = ahocorasick.Automaton()
        for stem in self.stems:
            self._automaton.add_word(stem, stem)
        self._automaton.make_automaton()

    def any_in(self, words: str) -> bool:
        """Whether `words` (folded, its runs of white space as one space) holds one of the stems."""
        return next(self._automaton.iter(words), None) is not None
