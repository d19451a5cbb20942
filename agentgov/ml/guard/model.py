"""The guard's learned classifier and how a text is judged with it.

Features of a (normalised) text (`features.py`): hashed character 2-5-grams within word boundaries and hashed
word 1-2-grams (`BUCKETS` each; hashing needs no vocabulary, so the model is a few arrays), each block weighted by
sublinear term frequency times inverse document frequency and scaled to unit length, plus one indicator per
explainable rule that matched. Two linear models read them: `attack` (the probability that the text is an attack of any
kind) and `category` (which kind, given an attack: injection, jailbreak, leakage). A model of format 2 also
holds a `StyleModel` (`style.py`: the text with its content words masked), whose log-odds are mixed into the
attack's by the style model's `weight`; a model of format 1 (stored before) is read without one. A model of
format 3 to 6 reads each text without its links (`normalise.without_links`: a link's text kept, web addresses
removed), as it was fitted; formats 1 and 2 read them, as they were fitted. A model of format 4 to 6 also holds
a `HarmModel` (`harm.py`: a harmful request, blocking inside a jailbreak frame), the third reading: formats 5
and 6 read windows of words and rank a harmful request without a frame too, format 4 reads sentences of framed
text. The style reading of format 6 reads words and a sentence's punctuation; that of formats 1 to 5 also reads
brackets, operators and markup (`StyleModel.symbols`), as it was fitted.

`GuardModel.assess(text)` normalises the text (`normalise`), splits a long one into overlapping chunks of
`CHUNK_CHARS` (a document is read whole, never truncated), reads each reading a decoding gave (hidden text, a
decoded payload, respelt letters, an English gloss: `gloss.py`) as pieces of their own (a glossed text's own
pieces read in the style of its gloss: `style_of`), and answers the highest piece's figures: `score` is
the largest of the classifier's attack probability, the strongest rule hit (`rule_score`: an unquoted hit
is over the threshold, so a rule blocks on its own), the harm reading's score (`HarmModel.score`: below
the threshold without a frame) and, for a Chinese, Japanese or Korean text that is not the operator's, the score of
the jailbreak terms it names (`terms.py`: always below the threshold); each category's score is the larger of its
share of the attack probability and its strongest rule hit (and, for `jailbreak`, the harm reading's score of a
framed text and the terms' score), and `block` is `score >= threshold`.
Pure and thread-safe; `from_document` raises `ValueError` for a document it cannot read.
"""

from __future__ import annotations

import binascii
import dataclasses
import functools
import math
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np

from agentgov.ml.guard.advice import advice_spans
from agentgov.ml.guard.answer_form import form_spans
from agentgov.ml.guard.assessment import Assessment, HarmFinding
from agentgov.ml.guard.code_text import asks_nothing_of_the_model, prose_of_code
from agentgov.ml.guard.data_text import data_words
from agentgov.ml.guard.encoding import (
    BUCKETS,
    hash_gram_array,
    pack_array,
    unit_weights,
    unpack_array,
)
from agentgov.ml.guard.exposition import exposition_spans
from agentgov.ml.guard.features import RULE_NAMES, Counts, bucket_counts, rule_value, weigh, word_grams
from agentgov.ml.guard.gloss import Gloss, gloss
from agentgov.ml.guard.harm import HarmModel, frame
from agentgov.ml.guard.normalise import normalise, without_links
from agentgov.ml.guard.rules import (
    CATEGORIES,
    QUOTED_FACTOR,
    RuleHit,
    Scan,
    hidden_text_hit,
    scan,
)
from agentgov.ml.guard.speech import spoken
from agentgov.ml.guard.style import StyleModel
from agentgov.ml.guard.terms import finding as terms_finding

FORMAT = "agentgov.guard/6"  # its style reading reads no symbols; a harm reading (if any) reads windows
_FORMAT_WITHOUT_HARM = "agentgov.guard/3"  # reads texts without links, has a style reading, no harm reading
_FORMAT_FRAMED_HARM = "agentgov.guard/4"  # its harm reading reads sentences, and framed texts only
_FORMAT_WINDOWED_HARM = "agentgov.guard/5"  # its harm reading reads windows; its style reading reads symbols
#: Formats this version reads: 1 has no style model (its attack probability is the character and word model's);
#: 1 and 2 were fitted on texts with their links; 1 to 3 have no harm reading; 4's reads sentences of framed text.
READABLE_FORMATS = (
    "agentgov.guard/1",
    "agentgov.guard/2",
    _FORMAT_WITHOUT_HARM,
    _FORMAT_FRAMED_HARM,
    _FORMAT_WINDOWED_HARM,
    FORMAT,
)
_DROPS_LINKS = (_FORMAT_WITHOUT_HARM, _FORMAT_FRAMED_HARM, _FORMAT_WINDOWED_HARM, FORMAT)
#: The format a model that reads links is written in (so it is read back as it was fitted): by whether it has a
#: style model.
_FORMAT_WITH_LINKS = {False: "agentgov.guard/1", True: "agentgov.guard/2"}
CHUNK_CHARS = 4000
CHUNK_OVERLAP = 400
MIN_OWN_CHARS = 40
MIN_OWN_SHARE = 0.3
#: Code's prose (`code_text`) has at least this many tokens for the style reading to read it; code with less is
#: read by the character and word model alone.
MIN_PROSE_TOKENS = 10
MIN_CHARS_BESIDE_FORM = 10  # a text's characters besides its form sentences, at least, for them to be left out
#: The share of the threshold a reading that must not block on its own counts at most (`GuardModel.below_threshold`:
#: a quoted rule hit, and the classifier and the harm reading of an operator's text).
BELOW_THRESHOLD = 0.99
#: What stands for a text's style reading: its log-odds (a text standing for it: `GuardModel.style_of`), None to
#: read it, or one assessment's memory of the texts read so far and their log-odds (read, unless remembered).
StyleSource = float | dict[str, float | None] | None
GLOSS_STYLE_CHARS = 8_000  # of a gloss, read for the style of the text it glosses (`GuardModel.style_of`)


def chunks(text: str) -> list[str]:
    """`text` in pieces of at most `CHUNK_CHARS`, consecutive ones overlapping by `CHUNK_OVERLAP`."""
    if len(text) <= CHUNK_CHARS:
        return [text]
    step = CHUNK_CHARS - CHUNK_OVERLAP
    return [text[start : start + CHUNK_CHARS] for start in range(0, len(text) - CHUNK_OVERLAP, step)]


@dataclasses.dataclass(frozen=True)
class GuardModel:
    char_idf: np.ndarray
    word_idf: np.ndarray
    attack_coef: np.ndarray
    attack_intercept: float
    category_coef: np.ndarray  # (len(CATEGORIES), features)
    category_intercept: np.ndarray
    threshold: float
    rule_names: tuple[str, ...] = RULE_NAMES
    style: StyleModel | None = None  # the second reading (`style.py`), mixed into the attack probability
    drops_links: bool = True  # reads texts `without_links` (formats 3 to 6); formats 1 and 2 read links
    harm: HarmModel | None = None  # the third reading (`harm.py`), formats 4 to 6

    # ------------------------------------------------------------------------------------------ judging

    @functools.cached_property
    def _columns(self) -> np.ndarray:
        """Per feature column, its weight in the attack model and in each category's: (features, 4), so that
        a text's few columns are gathered as contiguous rows."""
        return np.ascontiguousarray(np.vstack([self.attack_coef, self.category_coef]).T)

    @functools.cached_property
    def _intercepts(self) -> np.ndarray:
        return np.concatenate([[self.attack_intercept], self.category_intercept])

    @functools.cached_property
    def _idf(self) -> np.ndarray:
        """Both blocks' idf, in the columns of `bucket_counts`."""
        return np.concatenate([self.char_idf, self.word_idf])

    def view(self, text: str) -> str:
        """What the classifier reads of a normalised text: `without_links(text)` for a model that drops links."""
        return without_links(text) if self.drops_links else text

    def probabilities(self, counts: Counts) -> tuple[np.ndarray, np.ndarray]:
        """(attack probability per text, category distribution per text given an attack), of `count_features`
        made with this model's `drops_links` and its style model's `symbols` (`style_symbols`)."""
        features = weigh(counts, self.char_idf, self.word_idf)
        attack_logit = features @ self.attack_coef + self.attack_intercept
        if self.style is not None:
            attack_logit = self.style.mix(attack_logit, self.style.logits(counts.tokens))
        attack = _sigmoid(attack_logit)
        logits = features @ self.category_coef.T + self.category_intercept
        logits -= logits.max(axis=1, keepdims=True)
        share = np.exp(logits)
        share /= share.sum(axis=1, keepdims=True)
        return attack, share

    def judge(self, text: str, hits: Sequence[RuleHit], style: StyleSource = None) -> tuple[float, np.ndarray]:
        """`probabilities` of one normalised text with its rule hits, computed on its few non-zero features
        only (a fraction of a millisecond for a paragraph). `style`: the style reading's log-odds of a text that
        stands for this one (`style_of`), or None (or one assessment's memory of the texts read) to read this
        one's."""
        text = self.view(text)
        logits = self._content_logits(text, hits)
        attack_logit = float(logits[0])
        if self.style is not None:
            styled = self._style_logit(text, style)
            if styled is not None:  # None: code with too little prose, read by the other reading alone
                attack_logit = self.style.mix(attack_logit, styled)
        category = np.exp(logits[1:] - logits[1:].max())
        return _probability(attack_logit), category / category.sum()

    def readings(self, text: str, hits: Sequence[RuleHit], style: StyleSource = None) -> tuple[tuple[str, float], ...]:
        """Each reading's own attack probability for one normalised text: `wording` (the character and word
        model) and `style` (the masked text, or `style` when another text stands for it); nothing for a model
        without a style reading. `judge` mixes their log-odds (`StyleModel.mix`)."""
        if self.style is None:
            return ()
        text = self.view(text)
        content = _probability(float(self._content_logits(text, hits)[0]))
        styled = self._style_logit(text, style)
        return (("wording", content),) + ((("style", _probability(styled)),) if styled is not None else ())

    def _style_logit(self, viewed: str, style: StyleSource) -> float | None:
        """The style reading's log-odds of a viewed text: `style` when it is a number, else read from the text
        (remembered in `style` when it is a memory): from its prose when it is code (`code_text.prose_of_code`),
        None for code with fewer than `MIN_PROSE_TOKENS` tokens of prose (read by the other reading alone)."""
        assert self.style is not None
        if isinstance(style, float):
            return style
        if style is not None and viewed in style:
            return style[viewed]
        prose = prose_of_code(viewed)
        tokens = self.style.tokenise(viewed if prose is None else prose)
        found = self.style.logit(tokens) if prose is None or len(tokens) >= MIN_PROSE_TOKENS else None
        if style is not None:
            style[viewed] = found
        return found

    def style_of(self, glossed: Gloss | None, memory: dict[str, float | None] | None = None) -> float | None:
        """The style reading's log-odds that stand for a text's own pieces: for a text glossed in English, its
        gloss's (the first `GLOSS_STYLE_CHARS` of it); None (each piece read in its own style) otherwise. The
        masked-token reading learnt how English attacks are written; in another language nearly every token is
        masked, and it read Spanish prose about writing prompts at 0.57-0.85. A text read word for word in English
        is written as its gloss is. (For a language with no gloss its own style is still read: read by its
        wording alone, Arabic and Chinese attacks fell below English ordinary text.) `memory`: one assessment's
        memory of the texts whose style was read (the gloss is read again as a piece of its own)."""
        if self.style is None or glossed is None:
            return None
        return self._style_logit(self.view(glossed.text[:GLOSS_STYLE_CHARS]), memory)

    def _content_logits(self, text: str, hits: Sequence[RuleHit]) -> np.ndarray:
        """The character and word model's log-odds: attack, then one per category."""
        logits = self._intercepts.copy()
        buckets, counts = bucket_counts(text)
        if len(buckets):
            split = int(np.searchsorted(buckets, BUCKETS))  # each block (characters, words) of unit length
            idf = self._idf[buckets]
            weights = np.concatenate(
                [unit_weights(counts[:split], idf[:split]), unit_weights(counts[split:], idf[split:])]
            )
            logits += weights @ self._columns[buckets]
        for hit in hits:  # one hit per rule at most
            logits += self._columns[2 * BUCKETS + RULE_NAMES.index(hit.rule)] * rule_value(hit)
        return logits

    def _judge_speech(
        self, text: str, scanned: Scan, style: StyleSource = None, *, describes: bool = False
    ) -> tuple[float, np.ndarray]:
        """`judge`, with the sentences that only shape the answer left out (`answer_form.form_spans`: the
        classifier learnt orders about the answer from attacks alone; a text of fewer than `MIN_CHARS_BESIDE_FORM`
        besides them is read whole, as constraints with no request are no ordinary prompt), the sentences that
        advise a person about their own credentials left out too (`advice.advice_spans`: the classifier learnt
        "your password" from attacks alone; advice asks for nothing, so a text of advice alone is read as
        empty), and, where the text `describes` (the writer's own pieces of a text in English or another language
        not glossed), so are the sentences that describe attacks in the third person asking no one for anything
        (`exposition.exposition_spans`: the classifier learnt the subject's vocabulary from attacks alone), and
        quotations (and
        mentioned attacks, `Scan.reported`) read as reported speech: when a text quotes and has a voice of its own
        (at least `MIN_OWN_CHARS` and `MIN_OWN_SHARE` of it outside what it reports and its form and advice
        sentences, its descriptions counted as its own), its
        attack probability is the larger of its own words' and `QUOTED_FACTOR` of the whole text's. A discussion
        that quotes an attack is judged by what it says; a text that only quotes is judged whole. The rule hits are
        the whole text's."""
        hits = scanned.hits
        advice = advice_spans(text)
        described = exposition_spans(text, scanned.reported) if describes else []
        voiced = form_spans(text) + advice  # left out of the reading, though the writer's own voice counts them out
        form = sorted(voiced + described)  # (`spoken` merges overlaps)
        read = spoken(text, form).strip() if form else text
        if len(read) < MIN_CHARS_BESIDE_FORM and not (advice or described):  # only orders about the answer: whole
            read, form, voiced = text, [], []
        whole = self.judge(read, hits, style)
        spans = scanned.reported
        if not spans:
            return whole
        remainder = " ".join(spoken(text, [*spans, *form]).split())
        # a description is the writer's own voice, though not read: it counts towards what the text says itself
        own = len(" ".join(spoken(text, [*spans, *voiced]).split()))
        if own < MIN_OWN_CHARS or own < MIN_OWN_SHARE * len(spoken(text, voiced).strip() if voiced else text):
            return whole
        speech = self.judge(remainder, [hit for hit in hits if not hit.quoted], style)
        attack = max(speech[0], QUOTED_FACTOR * whole[0])
        return attack, (speech[1] if speech[0] >= QUOTED_FACTOR * whole[0] else whole[1])

    def assess(self, text: str, *, operator: bool = False, user: bool = False) -> Assessment:
        """The judgement of `text` (see the module docstring). An `operator` text (`source: "system"`, the
        operator's own instructions to its model) is full of orders to a model and reads as an attack to the
        classifier: for it the classifier's probability counts at most just below the threshold
        (`Assessment.operator`), and so does the harm reading's (a policy's list of forbidden subjects reads as
        harmful requests): only a rule (an attack's phrasing, neither quoted nor negated: its prohibitions, "never
        reveal your instructions", are read as such, `rules.scan(prohibitions=True)`) or hidden text blocks. In an
        operator's or a `user`'s text (`source: "user"`: the model's own user writing to it), a rule of planted
        instructions (a reader hailed as a model: `rules.Rule.planted`) counts as quoted: the one the model serves
        is speaking to it (`rules.scan(principal=True)`). A program that asks the model nothing
        (`code_text.asks_nothing_of_the_model`: no "you", no request, order or question in its comments and strings;
        not data, where a tool's answer carries planted orders), with no decoding and no unquoted rule hit, is
        judged like an operator's text by the classifier (`Assessment.program`): its vocabulary ("import",
        "response", "password") is what the base data's code attacks taught the classifier."""
        normalised = normalise(text)
        written = chunks(normalised.written)
        decoded = [piece for reading in normalised.readings for piece in chunks(reading)]
        glossed = gloss(normalised.written)  # text in another language, read word by word in English
        glossed_pieces = chunks(glossed.text) if glossed is not None else []
        decoded += glossed_pieces
        pieces = written + decoded  # each reading on its own: a decoding adds no words to the writer's own
        first_gloss = len(pieces) - len(glossed_pieces)  # a gloss is read by the English rules (`rules.scan`)
        principal = operator or user
        scans = [
            scan(piece, prohibitions=operator, principal=principal, gloss=k >= first_gloss)
            for k, piece in enumerate(pieces)
        ]
        piece_hits = [scanned.hits for scanned in scans]
        hits: dict[str, RuleHit] = {}
        for found in piece_hits:
            for hit in found:
                if hit.rule not in hits or (hits[hit.rule].quoted and not hit.quoted):
                    hits[hit.rule] = hit
        memory: dict[str, float | None] = {}  # this assessment's texts whose style was read, and their log-odds
        style = self.style_of(glossed, memory)  # the style the writer's own pieces are read in
        words = data_words(normalised.written) if len(written) > 1 and self.drops_links else None
        if words is None:
            own, own_hits = written, piece_hits[: len(written)]
            describes = glossed is None  # an order in a language glossed is verb-last: its openings tell nothing
            judged = [
                self._judge_speech(piece, found, style, describes=describes)
                for piece, found in zip(own, scans[: len(written)], strict=True)
            ]
        else:  # a long JSON or markup document: its words are read before it is cut (its pieces are no document)
            own = chunks(words)
            own_hits = [list(hits.values())] * len(own)
            judged = [self.judge(piece, found, style) for piece, found in zip(own, own_hits, strict=True)]
        decoded_scans = scans[len(written) :]
        judged += [
            self._judge_speech(piece, found, memory) for piece, found in zip(decoded, decoded_scans, strict=True)
        ]
        read, read_hits = own + decoded, own_hits + piece_hits[len(written) :]
        best = max(range(len(judged)), key=lambda k: judged[k][0])
        classifier, share = judged[best]
        # a program that asks the model nothing, and matches no rule, is read but not blocked by the classifier alone
        code_alone = (
            not operator
            and not normalised.readings  # a decoded payload or hidden text is no program's
            and all(hit.quoted for hit in hits.values())
            and asks_nothing_of_the_model(normalised.written)
        )
        counted = self.below_threshold(classifier) if operator or code_alone else classifier
        categories = {name: float(counted * share[k]) for k, name in enumerate(CATEGORIES)}
        top = max(categories, key=lambda name: categories[name])
        for finding in normalised.findings:  # words hidden in tag characters block (`rules.HIDDEN_TEXT`)
            smuggled = hidden_text_hit(finding.hidden)
            if smuggled is not None:
                hits[smuggled.rule] = smuggled
        ordered = tuple(sorted(hits.values(), key=lambda h: -h.score))
        for hit in ordered:
            categories[hit.category] = max(categories[hit.category], self.rule_score(hit))
        score = max([counted, *(self.rule_score(hit) for hit in ordered)])
        harm = self.harm_finding(pieces, [scanned.reported for scanned in scans])
        if harm is not None:
            harm_score = self.below_threshold(harm.score) if operator else harm.score
            if harm.frame is not None:  # a framed harmful request is a jailbreak; a plain one only ranks
                categories["jailbreak"] = max(categories["jailbreak"], harm_score)
            score = max(score, harm_score)
        named = None if operator else terms_finding(normalised.written, self.threshold)
        if named is not None:  # ranks a Chinese, Japanese or Korean text, never blocks it
            categories["jailbreak"] = max(categories["jailbreak"], named.score)
            score = max(score, named.score)
        return Assessment(
            score=round(score, 4),
            categories={name: round(value, 4) for name, value in categories.items()},
            block=score >= self.threshold,
            classifier_score=classifier,
            top_category=top,
            hits=ordered,
            findings=normalised.findings,
            chunks=len(written),
            telling_words=self.telling_words(read[best]) if classifier >= self.threshold else (),
            readings=(
                self.readings(read[best], read_hits[best], style if best < len(own) else memory)
                if classifier >= self.threshold
                else ()
            ),
            harm=harm,
            operator=operator,
            program=code_alone,
            language=glossed.name if glossed is not None else None,
            terms=named,
        )

    def harm_finding(self, pieces: Sequence[str], reported: Sequence[Sequence[tuple[int, int]]]) -> HarmFinding | None:
        """The harm reading of the normalised `pieces` of one text (with the stretches each reports,
        `rules.Scan.reported`): the stretch of all the pieces' own words (`speech.spoken`) most likely a harmful
        request, scored as framed when some piece speaks a jailbreak frame (`HarmModel.score`); `None` without a
        harm model, or without a spoken frame when the model gives unframed requests no share (format 4). The
        text is framed as a whole, as it is when fitted: a frame and a request may lie in different pieces."""
        if self.harm is None:
            return None
        frames = (frame(piece, stretches) for piece, stretches in zip(pieces, reported, strict=True))
        first = next((found for found in frames if found is not None), None)
        if first is None and not self.harm.unframed_share:
            return None
        best, request = 0.0, ""
        for piece, stretches in zip(pieces, reported, strict=True):
            probability, stretch = self.harm.probability(spoken(piece, stretches))
            if probability > best:
                best, request = probability, stretch
        score = self.harm.score(best, self.threshold, framed=first is not None)
        return HarmFinding(score, best, self.harm.cut, first, request)

    def telling_words(self, text: str, count: int = 3) -> tuple[str, ...]:
        """The words of `text` whose own feature (the word alone) weighs most towards "attack" in the model,
        strongest first; only words that weigh towards it. An explanation, not the whole of the score: the
        character n-grams and word pairs count too."""
        words = sorted({gram for gram in word_grams(self.view(text)) if " " not in gram})
        if not words:
            return ()
        indices = hash_gram_array(words)
        weights = self.attack_coef[BUCKETS + indices] * self.word_idf[indices]
        ranked = sorted(range(len(words)), key=lambda k: -weights[k])
        return tuple(words[k] for k in ranked[:count] if weights[k] > 0)

    def below_threshold(self, value: float) -> float:
        """`value`, at most `BELOW_THRESHOLD` of the threshold: the score of a reading that must not block alone."""
        return min(value, self.threshold * BELOW_THRESHOLD)

    def rule_score(self, hit: RuleHit) -> float:
        """A rule hit on the score's scale: an unquoted hit is over the threshold (a rule blocks on its own:
        the rules are narrow) by its own strength; a quoted one is its reduced strength, below any threshold."""
        if hit.quoted:
            return self.below_threshold(hit.score)
        return self.threshold + (1.0 - self.threshold) * hit.score

    def with_threshold(self, threshold: float) -> GuardModel:
        return dataclasses.replace(self, threshold=threshold)

    # --------------------------------------------------------------------------------------- document

    def to_document(self) -> dict[str, Any]:
        """The model as JSON-ready data: arrays as base64 of zlib-compressed float16 (deterministic bytes)."""
        document: dict[str, Any] = {
            "format": self._format(),
            "buckets": BUCKETS,
            "categories": list(CATEGORIES),
            "rules": list(self.rule_names),
            "threshold": round(self.threshold, 6),
            "char_idf": pack_array(self.char_idf),
            "word_idf": pack_array(self.word_idf),
            "attack_coef": pack_array(self.attack_coef),
            "attack_intercept": round(float(self.attack_intercept), 6),
            "category_coef": [pack_array(row) for row in self.category_coef],
            "category_intercept": [round(float(v), 6) for v in self.category_intercept],
        }
        if self.style is not None:
            document["style"] = self.style.to_document()
        if self.harm is not None:
            document["harm"] = self.harm.to_document()
        return document

    def _format(self) -> str:
        """The format this model is read back in as fitted: by whether it reads links, how its style model
        reads, and its harm reading. Raises `ValueError` for a combination no format holds (a style reading
        without symbols beside links or a harm reading of framed sentences: `fit` makes neither)."""
        symbols = self.style is not None and self.style.symbols
        framed = self.harm is not None and not self.harm.window
        if self.style is not None and not symbols and (framed or not self.drops_links):
            raise ValueError("no format holds a style reading without symbols beside links or framed sentences")
        if not self.drops_links:
            return _FORMAT_WITH_LINKS[self.style is not None]
        if not symbols and not framed:
            return FORMAT
        if self.harm is None:
            return _FORMAT_WITHOUT_HARM
        return _FORMAT_WINDOWED_HARM if self.harm.window else _FORMAT_FRAMED_HARM

    @classmethod
    def from_document(cls, document: dict[str, Any]) -> GuardModel:
        """Raises `ValueError` for a document of another format or shape."""
        try:
            if document.get("format") not in READABLE_FORMATS or document.get("buckets") != BUCKETS:
                raise ValueError(f"not a {FORMAT} model with {BUCKETS} buckets")
            if list(document["categories"]) != list(CATEGORIES):
                raise ValueError("the model's categories differ from this version's")
            stored_rules = [str(name) for name in document["rules"]]
            width = 2 * BUCKETS + len(stored_rules)
            attack = _align(unpack_array(document["attack_coef"], width), stored_rules)
            category = np.vstack([_align(unpack_array(row, width), stored_rules) for row in document["category_coef"]])
            if category.shape[0] != len(CATEGORIES):
                raise ValueError("one category model per category expected")
            if not 0.0 < float(document["threshold"]) < 1.0:
                raise ValueError("the threshold must lie between 0 and 1")
            return cls(
                char_idf=unpack_array(document["char_idf"], BUCKETS),
                word_idf=unpack_array(document["word_idf"], BUCKETS),
                attack_coef=attack,
                attack_intercept=float(document["attack_intercept"]),
                category_coef=category,
                category_intercept=np.asarray(document["category_intercept"], dtype=np.float64),
                threshold=float(document["threshold"]),
                style=(
                    StyleModel.from_document(document["style"], symbols=document["format"] != FORMAT)
                    if "style" in document
                    else None
                ),
                drops_links=document["format"] in _DROPS_LINKS,
                harm=_harm_of(document),
            )
        except (KeyError, TypeError, AttributeError, OverflowError, zlib.error, binascii.Error) as exc:
            raise ValueError(f"unreadable guard model: {exc!r}") from None


def _harm_of(document: dict[str, Any]) -> HarmModel | None:
    """The harm reading of a model document: required by formats 4 and 5, optional in format 6."""
    found = document["format"]
    if found in (_FORMAT_FRAMED_HARM, _FORMAT_WINDOWED_HARM):
        return HarmModel.from_document(document["harm"], windowed=found == _FORMAT_WINDOWED_HARM)
    if found == FORMAT and "harm" in document:
        return HarmModel.from_document(document["harm"], windowed=True)
    return None


def _probability(logit: float) -> float:
    return 1.0 / (1.0 + math.exp(-min(50.0, max(-50.0, logit))))


def _sigmoid(values: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(values, -50, 50)))


def _align(coef: np.ndarray, stored_rules: list[str]) -> np.ndarray:
    """Coefficients over this version's rules: a stored rule no longer present is dropped, a new one weighs 0."""
    aligned = np.zeros(2 * BUCKETS + len(RULE_NAMES))
    aligned[: 2 * BUCKETS] = coef[: 2 * BUCKETS]
    for position, name in enumerate(stored_rules):
        if name in RULE_NAMES:
            aligned[2 * BUCKETS + RULE_NAMES.index(name)] = coef[2 * BUCKETS + position]
    return aligned
