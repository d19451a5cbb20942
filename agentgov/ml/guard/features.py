"""What the guard's classifier reads of a normalised text: its features, one text at a time or many.

- Hashed character 2-5-grams within word boundaries and hashed word 1-2-grams (`BUCKETS` columns each, the
  hashing of scikit-learn's `HashingVectorizer`, so that a model is a few arrays and needs no vocabulary), and one
  indicator per rule (`RULE_NAMES`; `rule_value`: 1 for a match, `QUOTED_FACTOR` for a quoted one).
- `count_features(texts)`: the counts of many texts (`Counts`), as a model is fitted; `weigh` turns them into the
  model's input (sublinear tf·idf, each block of unit length, then the rule indicators).
- `bucket_counts(text)`: one text's non-zero columns and counts, as a text is judged, at a fraction of the cost
  (a memory of each word's character columns and one of word grams' columns; `char_wb_grams` and `word_grams`
  make the vectorisers' grams; tests hold the two paths equal).

Pure; the memories change only by `encoding.remember` (one atomic `clear` or `update`), are read once per word or
gram in a call, and hold read-only arrays, so threads may share them.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction.text import HashingVectorizer

from agentgov.ml.guard.encoding import BUCKETS, hash_gram_array, hashed_columns, remember, weigh_block
from agentgov.ml.guard.normalise import without_links
from agentgov.ml.guard.rules import QUOTED_FACTOR, RULES, RuleHit, match_rules
from agentgov.ml.guard.style import tokens

RULE_NAMES = tuple(rule.name for rule in RULES)

_CHAR = HashingVectorizer(
    analyzer="char_wb", ngram_range=(2, 5), n_features=BUCKETS, alternate_sign=False, norm=None, dtype=np.float64
)
_WORD = HashingVectorizer(
    analyzer="word",
    ngram_range=(1, 2),
    n_features=BUCKETS,
    alternate_sign=False,
    norm=None,
    token_pattern=r"(?u)\b\w+\b",
    dtype=np.float64,
)
_NO_BUCKETS = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


_WORD_COLUMNS: dict[str, int] = {}
#: Words (of at most `MAX_REMEMBERED_WORD_CHARS`) whose character n-grams' columns are remembered whole, so a
#: word seen before costs one lookup instead of cutting and hashing its grams (a few MB at most; a memory that would
#: pass its bound starts again: `encoding.remember`).
MAX_REMEMBERED_WORDS = 20_000
MAX_REMEMBERED_WORD_CHARS = 40
_WORD_CHAR_COLUMNS: dict[str, np.ndarray] = {}  # read-only arrays


def _grams_of_word(word: str) -> list[str]:
    """The character 2-5-grams of one lower-cased word, padded with a space on each side (`char_wb`)."""
    padded = f" {word} "
    size = len(padded)
    grams: list[str] = []
    for n in range(2, 6):
        if n >= size:  # a short word counts once, whole
            grams.append(padded)
            break
        grams.extend([padded[i : i + n] for i in range(size - n + 1)])
    return grams


def char_wb_grams(text: str) -> list[str]:
    """The character 2-5-grams within word boundaries of `text`, exactly as `_CHAR`'s analyzer (sklearn's `char_wb`,
    lower-casing included) makes them, in the same order, at about half the cost."""
    return [gram for word in text.lower().split() for gram in _grams_of_word(word)]


def _char_columns(text: str) -> list[np.ndarray]:
    """The columns of `char_wb_grams(text)` (as a multiset), an array per word, remembered per word (read-only
    arrays: joined by one `np.concatenate`, where a list of ints cost more to turn into an array than to build);
    the grams of the words not remembered are cut and hashed in one call (looking each gram up in a memory first
    cost as much as hashing it)."""
    words = text.lower().split()
    known = {word: _WORD_CHAR_COLUMNS.get(word) for word in dict.fromkeys(words)}  # one read per word
    columns_of = {word: columns for word, columns in known.items() if columns is not None}
    unknown = [word for word, columns in known.items() if columns is None]
    if unknown:
        grams_of = [_grams_of_word(word) for word in unknown]
        flat = hash_gram_array([gram for grams in grams_of for gram in grams])
        start = 0
        keep = {}
        for word, grams in zip(unknown, grams_of, strict=True):
            columns = flat[start : start + len(grams)].copy()  # its own array: a view would keep the text's alive
            columns.flags.writeable = False
            columns_of[word] = columns
            if len(word) <= MAX_REMEMBERED_WORD_CHARS:
                keep[word] = columns
            start += len(grams)
        remember(_WORD_CHAR_COLUMNS, keep, MAX_REMEMBERED_WORDS)
    return [columns_of[word] for word in words]


_TOKEN = re.compile(_WORD.token_pattern)


def word_grams(text: str) -> list[str]:
    """The word 1- and 2-grams of `text`, exactly as `_WORD`'s analyzer (sklearn's `word`: lower-cased
    tokens, then each pair joined by a space) makes them, in the same order, at about half the cost."""
    tokens = _TOKEN.findall(text.lower())
    return tokens + [f"{first} {second}" for first, second in itertools.pairwise(tokens)]


def bucket_counts(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(sorted columns, counts) of one normalised text's hashed n-grams: character n-grams in columns
    0..BUCKETS-1, word n-grams in BUCKETS..2*BUCKETS-1 — its row of `count_features` without building a
    matrix (the same hashing as `HashingVectorizer`; a test holds the two equal)."""
    columns = _char_columns(text)
    words = hashed_columns(word_grams(text), _WORD_COLUMNS)
    if words:
        columns.append(np.array(words, dtype=np.int64) + BUCKETS)
    if not columns:
        return _NO_BUCKETS
    buckets, counts = np.unique(np.concatenate(columns), return_counts=True)
    return buckets, counts


@dataclasses.dataclass(frozen=True)
class Counts:
    """The raw features of some texts: hashed n-gram counts (two blocks), rule indicators, and the tokens the
    style model reads (`style.tokens`)."""

    chars: sp.csr_matrix
    words: sp.csr_matrix
    rules: np.ndarray  # (texts, len(RULE_NAMES)) of 0/1
    tokens: tuple[tuple[str, ...], ...]

    def rows(self, index: np.ndarray) -> Counts:
        """The rows a boolean mask selects."""
        positions = np.flatnonzero(index)
        picked = tuple(self.tokens[k] for k in positions)
        return Counts(self.chars[positions], self.words[positions], self.rules[positions], picked)


def count_features(
    texts: Sequence[str],
    hits: Sequence[Sequence[RuleHit]] | None = None,
    *,
    drop_links: bool = True,
    style_symbols: bool = False,
) -> Counts:
    """Hashed n-gram counts and rule indicators of normalised texts (`hits`: their rule hits, if known). The
    rules read each text whole; the n-grams and tokens are of `without_links(text)` unless `drop_links` is
    false (the view of models of formats 1 and 2); the tokens read symbols with `style_symbols` (formats 1 to
    5, `StyleModel.symbols`)."""
    if hits is None:
        hits = [match_rules(text) for text in texts]
    if drop_links:
        texts = [without_links(text) for text in texts]
    rules = np.zeros((len(texts), len(RULE_NAMES)))
    for row, found in enumerate(hits):
        for hit in found:
            rules[row, RULE_NAMES.index(hit.rule)] = rule_value(hit)
    chars, words = hashed_blocks(texts)
    return Counts(chars, words, rules, tuple(tokens(text, symbols=style_symbols) for text in texts))


def hashed_blocks(texts: Sequence[str]) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """The character and the word n-gram counts of `texts`, one row each: the matrices `_CHAR.transform` and
    `_WORD.transform` make (sorted columns, float64 counts, 32-bit indices), built from each text's
    `bucket_counts` (its per-word memory makes it several times faster; a test holds the two equal)."""
    char_columns, char_counts, word_columns, word_counts = [], [], [], []
    for text in texts:
        buckets, counts = bucket_counts(text)
        split = int(np.searchsorted(buckets, BUCKETS))
        char_columns.append(buckets[:split])
        char_counts.append(counts[:split])
        word_columns.append(buckets[split:])
        word_counts.append(counts[split:])
    return _block(char_columns, char_counts, 0), _block(word_columns, word_counts, BUCKETS)


def _block(columns: list[np.ndarray], counts: list[np.ndarray], offset: int) -> sp.csr_matrix:
    """A (rows, BUCKETS) matrix of each row's sorted `columns` (less `offset`) and `counts`."""
    indptr = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum([len(row) for row in columns], out=indptr[1:])
    index_type = np.int32 if indptr[-1] < np.iinfo(np.int32).max else np.int64
    empty = np.zeros(0, dtype=np.int64)
    indices = (np.concatenate(columns) if columns else empty) - offset
    data = np.concatenate(counts).astype(np.float64) if counts else np.zeros(0)
    return sp.csr_matrix((data, indices.astype(index_type), indptr.astype(index_type)), shape=(len(columns), BUCKETS))


def rule_value(hit: RuleHit) -> float:
    """A rule's feature: 1 for a match, `QUOTED_FACTOR` for a quoted one."""
    return QUOTED_FACTOR if hit.quoted else 1.0


def weigh(counts: Counts, char_idf: np.ndarray, word_idf: np.ndarray) -> sp.csr_matrix:
    """The model's input: each block log-scaled, idf-weighted and of unit length, then the rule indicators."""
    blocks = [weigh_block(counts.chars, char_idf), weigh_block(counts.words, word_idf), sp.csr_matrix(counts.rules)]
    return sp.hstack(blocks, format="csr")
