"""An in-memory vector index: id -> unit-norm vector, ranked by cosine similarity. Pure and synchronous."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from agentgov.ml.embedding.base import top_k


class VectorIndex:
    """Vectors of one dimension keyed by id, with the dense matrix a search needs.

    The matrix is built on the first search after a `replace` or a removal, and patched in place by `put`
    (a changed vector overwrites its row; new ones are appended in one copy), so a steady stream of small
    updates never rebuilds it. Ties rank by row order: ids in sorted order after a rebuild, then in the
    order `put` added them. Vectors must be unit-norm (as `Embedder.embed` returns them).
    """

    def __init__(self) -> None:
        self._vectors: dict[str, np.ndarray] = {}
        self._matrix: tuple[list[str], dict[str, int], np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self._vectors)

    def __contains__(self, key: object) -> bool:
        return key in self._vectors

    def replace(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Hold exactly `vectors` from now on."""
        self._vectors = dict(vectors)
        self._matrix = None

    def clear(self) -> None:
        self.replace({})

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        """Add new vectors and overwrite changed ones."""
        self._vectors.update(vectors)
        if self._matrix is None or not vectors:
            return
        ids, rows, matrix = self._matrix
        new = [key for key in vectors if key not in rows]
        for key, vector in vectors.items():
            if key in rows:
                matrix[rows[key]] = vector
        if new:
            matrix = np.vstack([matrix, np.stack([vectors[key] for key in new]).astype(np.float32)])
            for key in new:
                rows[key] = len(ids)
                ids.append(key)
            self._matrix = (ids, rows, matrix)

    def forget(self, key: str) -> None:
        """Remove `key` if held."""
        if self._vectors.pop(key, None) is not None:
            self._matrix = None

    def search(self, query: np.ndarray, k: int) -> list[tuple[str, float]]:
        """The `k` ids most similar to the unit-norm `query`, best first, as `(id, cosine)` pairs."""
        ids, matrix = self._ranked()
        return top_k(query, matrix, ids, k=k) if ids else []

    def _ranked(self) -> tuple[list[str], np.ndarray]:
        if self._matrix is None:
            ids = sorted(self._vectors)
            matrix = (
                np.stack([self._vectors[key] for key in ids]).astype(np.float32)
                if ids
                else np.empty((0, 0), dtype=np.float32)
            )
            self._matrix = (ids, {key: row for row, key in enumerate(ids)}, matrix)
        return self._matrix[0], self._matrix[2]
