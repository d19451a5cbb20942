"""One rule of the guard: a pattern, the category and score its match gives, and the cheap tests that say when
it can match at all (`patterns.RULES` is the table; `rules.scan` applies it).

`make_rule` compiles a pattern the three ways `scan` runs it: as written (case-insensitive), lower-cased for
folded text when it can be (`casefold`), and, for a pattern with a case-sensitive part, a relaxed form that is
a necessary test on folded text. It raises `re.error` for a pattern that does not compile, at import.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

from agentgov.ml.guard.casefold import compile_folded, foldable, relaxed_pattern
from agentgov.ml.guard.openings import share_openings


@dataclasses.dataclass(frozen=True)
class Rule:
    name: str
    category: str
    score: float
    pattern: re.Pattern[str]
    #: Lower-case strings of which every match holds at least one, in a text folded (`casefold.fold`) with its
    #: runs of white space written as one space: a text holding none cannot match, so the pattern is not run
    #: (`scan`; a test holds the shortcut equal to running every pattern). A pattern written in ASCII is
    #: announced by its triggers in a text of any script; one with letters of other scripts, in ASCII text only.
    triggers: tuple[str, ...]
    #: A cheaper test every matching text passes, run on the folded text (`casefold.fold`) with its runs of white
    #: space written as one space, for a rule no trigger string can announce (any text).
    precheck: Callable[[str], bool] | None = None
    #: Whether a match counts only where its sentence speaks to the model ("you have been jailbroken"): the
    #: name of a technique in a sentence that addresses no one ("the Do Anything Now prompt was patched") is
    #: reported, like a mention (`scan`).
    addressed: bool = False
    #: Whether a match is an instruction planted for the model by a third party (a document hailing "the AI
    #: reading this"): in the text of the model's own user or operator, the one the model serves is speaking to
    #: it ("AI assistant, please summarise this thread"), and the match counts as quoted (`scan(principal=True)`).
    planted: bool = False
    #: The pattern lower-cased, to run case-sensitively on folded text (the same matches at the same spans, in
    #: about half the time: `casefold`); None for a pattern with a case-sensitive group, which runs as written.
    folded: re.Pattern[str] | None = None
    #: For a pattern with a case-sensitive part: that part relaxed and the whole folded (`casefold.relaxed_pattern`),
    #: a necessary test run on the folded text before the pattern itself.
    relaxed: re.Pattern[str] | None = None

    @property
    def any_script(self) -> bool:
        """Whether the pattern has letters outside ASCII, so that its triggers announce it in ASCII text only."""
        return not self.pattern.pattern.isascii()


def make_rule(
    name: str,
    category: str,
    score: float,
    pattern: str,
    triggers: tuple[str, ...],
    precheck: Callable[[str], bool] | None = None,
    *,
    addressed: bool = False,
    planted: bool = False,
) -> Rule:
    """The `Rule` of `pattern`, compiled as written (case-insensitive), folded when it can be, else relaxed."""
    folded = compile_folded(pattern) if foldable(pattern) else None
    relaxed = None if folded is not None else relaxed_pattern(pattern)
    compiled = re.compile(pattern, re.IGNORECASE)
    return Rule(
        name,
        category,
        score,
        compiled,
        triggers,
        precheck,
        addressed,
        planted,
        folded,
        re.compile(share_openings(relaxed)) if relaxed is not None else None,
    )
