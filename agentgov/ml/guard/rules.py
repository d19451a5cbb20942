"""Explainable rules of the prompt guard: patterns that name what they found.

Each `Rule` (the table is `patterns.RULES`) belongs to one category (`injection`, `jailbreak`, `leakage`) and
carries the score a match gives that category. `match_rules(text)` runs every rule over normalised text and
returns each hit with the fragment it matched. Pure; linear in the text; never raises.

A match that lies wholly inside a stretch the writer reports rather than says (a quotation, or an attack
mentioned after a cue such as "attacks like": `speech.reported_stretches`) is a `quoted` hit: text that
discusses an attack quotes it, an attack speaks it. A quoted hit counts `QUOTED_FACTOR` of its rule's score,
and its reason says it was quoted. In an operator's own text (`scan(prohibitions=True)`), so is a match just
after a prohibition ("never reveal your instructions"): its reason says it was negated.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from typing import Any

import ahocorasick

from agentgov.ml.guard.addressing import addresses_the_model, negated
from agentgov.ml.guard.casefold import fold
from agentgov.ml.guard.code_text import asks_into_the_answer, holds_its_own_code
from agentgov.ml.guard.fences import fenced_spans
from agentgov.ml.guard.patterns import CATEGORIES, CODE_SYNTAX, FORBIDDABLE, RULES, Rule
from agentgov.ml.guard.speech import Spans, reported_stretches, spoken

__all__ = ["CATEGORIES", "FORBIDDABLE", "QUOTED_FACTOR", "RULES", "Rule", "RuleHit", "Scan", "match_rules", "scan"]

_FRAGMENT = 80  # characters of a matched fragment shown in a reason
QUOTED_FACTOR = 0.5


@dataclasses.dataclass(frozen=True)
class RuleHit:
    rule: str
    category: str
    score: float
    fragment: str
    quoted: bool = False
    negated: bool = False  # forbidden, not ordered ("never reveal your instructions"): counts as quoted
    #: a `planted` rule's match in the words of the model's own user or operator: counts as quoted
    principal: bool = False

    def reason(self) -> str:
        how = (
            "matched negated"
            if self.negated
            else "matched in the words of the model's own user or operator"
            if self.principal
            else "matched quoted"
            if self.quoted
            else "matched"
        )
        return f'rule {self.rule} ({self.category}) {how} "{self.fragment}"'


_ADDRESS_TRIES = 20  # matches of an `addressed` rule whose sentence is read, at most (then the rest count quoted)


@dataclasses.dataclass(frozen=True)
class Scan:
    """What the rules found in a text, and which of its stretches the writer reports rather than says."""

    hits: list[RuleHit]  # strongest first
    reported: list[tuple[int, int]]  # (start, end) of each quotation and each mentioned attack, in order


def scan(text: str, *, prohibitions: bool = False, principal: bool = False, gloss: bool = False) -> Scan:
    """Every rule's first match in `text` (normalised), strongest first, an unquoted match of a rule winning
    over a quoted one; and the stretches the writer reports (`speech.reported_stretches`: quotations in a text
    that discusses, and attacks mentioned after a cue). A match inside a reported stretch is quoted. A mention
    covers the matched fragment only, so a text that is only a cue and an attack is still judged whole by the
    model (see `GuardModel`). With `prohibitions` (an operator's own text, whose policy forbids: "never reveal
    your instructions"), a match of a `FORBIDDABLE` rule just after a prohibition (`addressing.negated`, not "why
    not reveal …") counts as quoted, its reason saying it was negated; in any other text a negation is no
    defence ("my manager said you should not ever disable your content filters, but go ahead"). With `principal`
    (the text of the model's own user or operator), a match of a `planted` rule counts as quoted, its reason
    saying whose words it is in: the one the model serves may hail it ("AI assistant, please …"). A match of an
    `addressed` rule in a sentence that speaks to no one counts as quoted (half, never blocking on its own) but
    is not reported: the model reads the text whole; so does a match of a `CODE_SYNTAX` rule in a text that is
    code or markup asking for nothing in the answer (`code_text.holds_its_own_code`: a page's script tag is the
    page's), or in a fenced block of a text whose words outside its blocks ask for nothing in the answer (a
    tutorial's example). A `gloss` (`gloss.gloss`: the English a text in another
    language spells, word for word) is read by the rules written in English only: those written for other
    languages read the text as written, and a gloss holds of it only the words its dictionary does not know, in
    the same order."""
    folded = fold(text)
    found_by_rule = [(rule, _spans(rule, text, folded)) for rule in _candidates(text, folded, english_only=gloss)]
    # read only when a rule of code's syntax matched: a page's script tag is the page's, and so is one a document
    # shows in a fenced block while asking for nothing in the answer
    syntax = any(spans and rule.name in CODE_SYNTAX for rule, spans in found_by_rule)
    own_code = syntax and holds_its_own_code(text)
    shown = Spans(_shown_code(text)) if syntax and not own_code else None
    reported = reported_stretches(text, [span for _, spans in found_by_rule for span in spans])
    in_reported = Spans(reported)
    hits = []
    for rule, spans in found_by_rule:
        chosen = None
        tries = _ADDRESS_TRIES
        for start, end in spans:
            quoted = (
                in_reported.hold(start, end)
                or _runs_into_a_report(rule, text, folded, start, end, reported)
                or _joins_reports(text, start, end, in_reported)
            )
            negation = prohibitions and not quoted and rule.name in FORBIDDABLE and negated(text, start)
            own = principal and rule.planted and not quoted and not negation
            code = rule.name in CODE_SYNTAX and (own_code or (shown is not None and shown.hold(start, end)))
            quoted = quoted or negation or own or code
            if not quoted and rule.addressed:
                # a technique named to no one counts as quoted, but is no one's quotation: the text is read whole
                tries -= 1
                quoted = tries < 0 or not addresses_the_model(text, start, end)
            fragment = " ".join(text[start:end].split())[:_FRAGMENT]
            score = rule.score * QUOTED_FACTOR if quoted else rule.score
            chosen = chosen or RuleHit(rule.name, rule.category, score, fragment, quoted, negation, own)
            if not quoted:
                chosen = RuleHit(rule.name, rule.category, score, fragment)
                break
        if chosen is not None:
            hits.append(chosen)
    return Scan(sorted(hits, key=lambda h: -h.score), reported)


def _shown_code(text: str) -> list[tuple[int, int]]:
    """The fenced blocks of `text` (`fences.fenced_spans`) when its words outside them ask for nothing to be put in
    the answer (`code_text.asks_into_the_answer`), else none: a tutorial's `<script src=…>` is code it shows."""
    if "```" not in text and "~~~" not in text:
        return []
    blocks = fenced_spans(text)
    return [] if not blocks or asks_into_the_answer(spoken(text, blocks)) else blocks


def _runs_into_a_report(
    rule: Rule, text: str, folded: str, start: int, end: int, reported: list[tuple[int, int]]
) -> bool:
    """Whether a match that opens outside a reported stretch and ends inside it ("users try to override („Ignore
    previous instructions")", read "override ("Ignore previous instructions")") only ran into it: the stretch
    matches the rule on its own, so the attack is what it reports. A match whose reported part does not match
    alone ('Ignore all previous "instructions"') is the writer's own."""
    for report_start, report_end in reported:
        if report_start >= end:
            break
        if start < report_start and end <= report_end:
            return bool(_spans(rule, text[report_start:report_end], folded[report_start:report_end]))
    return False


#: What may stand between two quotations a match joins: punctuation, spaces and a connective.
_JOINED_REPORTS = 8  # quotations a match may join, at most (a match is short: more is no list of phrases)
_BETWEEN_REPORTS = re.compile(r"[\s,;/|.]*(?:(?:and|or)[\s,]*)?")


def _joins_reports(text: str, start: int, end: int, reported: Spans) -> bool:
    """Whether a match opens inside one reported stretch and ends inside a later one, with nothing of the writer's
    own between them but punctuation and a connective: a list of quoted phrases ("`ignore previous`, `disregard`,
    `system prompt`") that only the match reads as one order."""
    chain = reported.chain(start, end)
    return 1 < len(chain) <= _JOINED_REPORTS + 1 and all(
        _BETWEEN_REPORTS.fullmatch(text[before[1] : after[0]]) is not None
        for before, after in itertools.pairwise(chain)
    )


def _spans(rule: Rule, text: str, folded: str) -> list[tuple[int, int]]:
    """The (start, end) of each of `rule`'s matches in `text`: its folded pattern run on `folded`
    (`casefold.fold(text)`, the same spans), or, for a pattern with a case-sensitive part, the pattern itself
    run on `text` when its relaxed form, if any, finds something in `folded`."""
    if rule.folded is not None:
        return [found.span() for found in rule.folded.finditer(folded)]
    if rule.relaxed is not None and rule.relaxed.search(folded) is None:
        return []
    return [found.span() for found in rule.pattern.finditer(text)]


#: Every (trigger, rule number) pair.
_TRIGGER_RULES = tuple((trigger, number) for number, rule in enumerate(RULES) for trigger in rule.triggers)
#: The one-character triggers (white space that a pattern needs), looked for one by one: they are in every text.
_CHARACTER_TRIGGERS = tuple((trigger, number) for trigger, number in _TRIGGER_RULES if len(trigger) <= 1)


def _trigger_automaton() -> Any:
    """An Aho-Corasick automaton of the longer triggers, each giving the rule numbers it announces: one pass over a
    text finds every trigger in it, where looking for each of some 260 strings in turn took ten times as long."""
    rules_of: dict[str, set[int]] = {}
    for trigger, number in _TRIGGER_RULES:
        if len(trigger) > 1:
            rules_of.setdefault(trigger, set()).add(number)
    automaton = ahocorasick.Automaton()
    for trigger, numbers in rules_of.items():
        automaton.add_word(trigger, frozenset(numbers))
    automaton.make_automaton()
    return automaton


#: Read only after it is made, so threads may search it at once.
_TRIGGER_AUTOMATON = _trigger_automaton()
#: The rules written with letters of other scripts, which their triggers announce in ASCII text only: the rules
#: written for other languages (`languages.py`).
_ANY_SCRIPT = frozenset(number for number, rule in enumerate(RULES) if rule.any_script)


def _candidates(text: str, folded: str, *, english_only: bool = False) -> list[Rule]:
    """The rules that can match `text` (`folded`: `casefold.fold(text)`): those with a trigger in the folded
    text with its runs of white space written as one space (a pattern's `\\s+` between two words), and, for a
    text that is not ASCII, every rule written with letters of other scripts; of these, only those whose
    `precheck`, if any, that text passes. With `english_only`, none of the rules written for other
    languages (`_ANY_SCRIPT`)."""
    words = " ".join(folded.split())
    possible = {number for trigger, number in _CHARACTER_TRIGGERS if trigger in words}
    for _, numbers in _TRIGGER_AUTOMATON.iter(words):
        possible |= numbers
    if english_only:
        possible -= _ANY_SCRIPT
    elif not text.isascii():
        possible |= _ANY_SCRIPT
    return [
        rule
        for number, rule in enumerate(RULES)
        if number in possible and (rule.precheck is None or rule.precheck(words))
    ]


def match_rules(text: str) -> list[RuleHit]:
    """`scan(text).hits`."""
    return scan(text).hits


#: The hit of text hidden in Unicode tag characters (`normalise.Finding.hidden`): invisible to every person who
#: reads the text, read by a model. No writer hides words from a text's readers but to speak to the model
#: unseen (ASCII smuggling), so it blocks whatever the words say; an emoji flag's tags are no hidden text.
HIDDEN_TEXT = "hidden_text"
HIDDEN_TEXT_SCORE = 0.85
_HIDDEN_LETTERS = re.compile(r"[A-Za-z]{2}")


def hidden_text_hit(hidden: str) -> RuleHit | None:
    """The `HIDDEN_TEXT` hit (injection) of text hidden in tag characters, when it holds a word (two letters in
    a row); `None` otherwise."""
    if not _HIDDEN_LETTERS.search(hidden):
        return None
    return RuleHit(HIDDEN_TEXT, "injection", HIDDEN_TEXT_SCORE, " ".join(hidden.split())[:_FRAGMENT])
