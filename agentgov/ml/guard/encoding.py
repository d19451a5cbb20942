"""How the guard's models turn n-grams into columns and weights, and their arrays into JSON.

Shared by the readings of a text (`model.py`: its characters and words; `style.py`: its masked words; `harm.py`:
its sentences' content words, over a vocabulary instead of `BUCKETS`):

- `hashed_columns(grams, memory)`: the column of each n-gram among `BUCKETS` (scikit-learn's
  `HashingVectorizer` hashing, so the batch and the one-text paths agree), remembering up to
  `MAX_REMEMBERED_GRAMS` grams per `memory` so a gram seen before costs a dict lookup (`remember`: a memory that
  would pass its bound starts again empty, so it follows the texts of the day instead of keeping the first ones
  for good);
- `inverse_document_frequency` and `weigh_block`: sublinear tf·idf of a block of counts, each row of unit length
  (`unit_weights`: the same for one text's non-zero columns);
- `pack_array` / `unpack_array`: arrays as base64 of zlib-compressed float16 (deterministic bytes), and back
  (`ValueError` for anything else); `as_stored`: values as a stored document will hold them; `read_words`: a
  stored vocabulary, checked.

Pure functions; a memory dict is only ever changed by one `dict.update` or `dict.clear` (each atomic), and read
once per key per call, so threads may share it.
"""

from __future__ import annotations

import base64
import itertools
import zlib
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from sklearn.feature_extraction._hashing_fast import transform as _hash_grams

BUCKETS = 2**16
#: Grams whose hashed column is remembered (per memory), so a gram seen before costs a dict lookup; beyond it
#: new grams are hashed each time (bounded memory: a few MB).
MAX_REMEMBERED_GRAMS = 100_000


def hash_gram_array(grams: Sequence[str]) -> np.ndarray:
    """The column of each gram, hashed (no memory), as an int64 array."""
    if not grams:
        return np.zeros(0, dtype=np.int64)
    indices, _, _ = _hash_grams([zip(grams, itertools.repeat(1))], BUCKETS, np.float64, False, 0)
    return np.asarray(indices, dtype=np.int64)


def hash_grams(grams: Sequence[str]) -> list[int]:
    """The column of each gram, hashed (no memory)."""
    return hash_gram_array(grams).tolist()


def remember(memory: dict[str, Any], new: dict[str, Any], bound: int) -> None:
    """Add `new` to `memory`, which holds at most `bound` entries (a batch more, while threads add at once): when it
    would pass the bound it is emptied first (its entries are computed again on their next use); a batch larger
    than the bound is not kept. One `clear` and one `update`, each atomic: a concurrent reader sees an entry or
    not, never a part of one."""
    if len(new) > bound:
        return
    if len(memory) + len(new) > bound:
        memory.clear()
    memory.update(new)


def hashed_columns(grams: list[str], memory: dict[str, int]) -> list[int]:
    """The hashed column of each gram (the hashing of `HashingVectorizer`), the new ones remembered in `memory`
    (`remember`, within `MAX_REMEMBERED_GRAMS`)."""
    found = [memory.get(gram, -1) for gram in grams]
    if -1 not in found:
        return found
    missing = [gram for gram, column in zip(grams, found, strict=True) if column < 0]
    columns = hash_grams(missing)  # a gram missing twice is hashed twice: cheaper than looking it up again
    remember(memory, dict(zip(missing, columns, strict=True)), MAX_REMEMBERED_GRAMS)
    filling = iter(columns)
    return [column if column >= 0 else next(filling) for column in found]


def count_rows(rows: Sequence[np.ndarray]) -> sp.csr_matrix:
    """A (rows, BUCKETS) matrix counting each row's columns (a column listed twice counts 2)."""
    indptr = np.zeros(len(rows) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(row) for row in rows])
    indices = np.concatenate([np.asarray(row, dtype=np.int64) for row in rows]) if rows else np.zeros(0, np.int64)
    matrix = sp.csr_matrix((np.ones(len(indices)), indices, indptr), shape=(len(rows), BUCKETS))
    matrix.sum_duplicates()
    return matrix


def inverse_document_frequency(counts: sp.csr_matrix) -> np.ndarray:
    """Smoothed idf of each bucket: log((1 + n) / (1 + df)) + 1."""
    documents = counts.shape[0]
    df = np.bincount(counts.indices, minlength=counts.shape[1])
    return np.log((1.0 + documents) / (1.0 + df)) + 1.0


def weigh_block(counts: sp.csr_matrix, idf: np.ndarray) -> sp.csr_matrix:
    """Each count as (1 + log count) · idf, each row scaled to unit length (an empty row stays empty)."""
    weighted = counts.copy().astype(np.float64)
    weighted.data = (1.0 + np.log(weighted.data)) * idf[weighted.indices]
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(weighted.multiply(1.0 / norms[:, None]))


def unit_weights(counts: np.ndarray, idf: np.ndarray) -> np.ndarray:
    """One text's row of `weigh_block`, for its non-zero columns only: each count as (1 + log count) · idf, the
    whole of unit length (`counts` and `idf` aligned, counts at least 1; empty in, empty out)."""
    weights = (1.0 + np.log(counts)) * idf
    if len(weights):
        weights /= np.sqrt(weights @ weights)
    return weights


def as_stored(values: np.ndarray) -> np.ndarray:
    """The values as a stored document holds them (float16), so a fitted model judges exactly like the same
    model read back."""
    return np.asarray(values, dtype=np.float16).astype(np.float64)


def pack_array(values: np.ndarray) -> str:
    raw = np.asarray(values, dtype="<f2").tobytes()
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def unpack_array(text: str, length: int) -> np.ndarray:
    """Raises `ValueError` (or `zlib.error`, `binascii.Error` for undecodable text) unless `text` holds
    `length` finite values."""
    values = np.frombuffer(zlib.decompress(base64.b64decode(text, validate=True)), dtype="<f2").astype(np.float64)
    if values.shape != (length,) or not np.all(np.isfinite(values)):
        raise ValueError(f"an array of {length} finite values expected")
    return values


def read_words(value: object, owner: str) -> tuple[str, ...]:
    """A stored vocabulary: a list of strings, sorted, each once (a word's place is its number). Raises
    `ValueError` naming `owner` for anything else."""
    if not isinstance(value, list) or not all(isinstance(word, str) for word in value):
        raise ValueError(f"the {owner}'s words must be a list of strings")
    if any(later <= earlier for earlier, later in itertools.pairwise(value)):
        raise ValueError(f"the {owner}'s words must be sorted, each once")
    return tuple(value)
