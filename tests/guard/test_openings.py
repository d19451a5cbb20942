"""Alternatives that share their word-start assertion: how a pattern is rewritten, and that the rewriting finds
the same matches (every rule's folded pattern is also held to the pattern as written in `test_casefold.py`)."""

from __future__ import annotations

import re

import pytest

from agentgov.ml.guard.base import base_examples
from agentgov.ml.guard.casefold import fold, fold_pattern
from agentgov.ml.guard.openings import alternatives, group_end, share_openings
from agentgov.ml.guard.patterns import RULES
from tests.guard.test_rules import rule_test_texts


def test_alternatives_split_outside_groups_classes_and_escapes() -> None:
    assert alternatives(r"a[|]b|c\|d|(e|f)|[]|]g|") == ["a[|]b", r"c\|d", "(e|f)", "[]|]g", ""]
    assert group_end(r"(a(b)[)]\))c", 0) == 10 and group_end("(open", 0) == len("(open")


@pytest.mark.parametrize(
    ("pattern", "shared"),
    [
        (r"\bdu\s+bist|\btu\s+es|x|\bsei", r"\b(?:du\s+bist|tu\s+es)|x|\bsei"),
        (r"(?<!\w)a|(?<!\w)b|\bc", r"(?<!\w)(?:a|b)|\bc"),
        (r"(?=\w)(?:\ba|\bb|c)", r"(?=\w)(?:\b(?:a|b)|c)"),  # inside the one group after a lookahead
        (r"(?:\ba|\bb)x", r"(?:\ba|\bb)x"),  # a group followed by more: left as it is
        (r"\\bx|\\by", r"\\bx|\\by"),  # an escaped backslash and a "b" open nothing
        ("plain", "plain"),
    ],
)
def test_runs_of_alternatives_share_their_opening(pattern: str, shared: str) -> None:
    assert share_openings(pattern) == shared


def test_shared_openings_find_the_same_matches_in_every_rule() -> None:
    """Each rule's folded pattern, with and without shared openings, at the same spans on the base data and the
    rules' texts; the rules written for other languages do share some."""
    texts = [fold(example.text) for example in base_examples()[::3]] + [fold(text) for text in rule_test_texts()]
    changed = 0
    for rule in RULES:
        written = rule.pattern.pattern.replace("(?-i:", "(?:")  # case-sensitive parts relaxed, as in `relaxed`
        plain, shared = re.compile(fold_pattern(written)), re.compile(share_openings(fold_pattern(written)))
        changed += plain.pattern != shared.pattern
        for text in texts:
            assert [m.span() for m in plain.finditer(text)] == [m.span() for m in shared.finditer(text)], rule.name
    assert changed >= 4
