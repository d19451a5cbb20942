"""`VectorIndex`: the registry's in-memory search index, pure and synchronous."""

from __future__ import annotations

import numpy as np

from agentgov.ml.embedding.index import VectorIndex


def unit(*values: float) -> np.ndarray:
    vector = np.asarray(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_search_ranks_by_cosine_best_first() -> None:
    index = VectorIndex()
    index.replace({"mail": unit(1, 0, 0), "files": unit(0, 1, 0), "both": unit(1, 1, 0)})
    hits = index.search(unit(1, 0.1, 0), k=2)
    assert [key for key, _ in hits] == ["mail", "both"]
    assert hits[0][1] > hits[1][1]
    assert len(index) == 3 and "files" in index


def test_an_empty_index_finds_nothing() -> None:
    assert VectorIndex().search(unit(1, 0), k=5) == []


def test_put_patches_the_built_matrix_like_a_rebuild_would() -> None:
    patched, rebuilt = VectorIndex(), VectorIndex()
    start = {"a": unit(1, 0, 0), "b": unit(0, 1, 0)}
    patched.replace(start)
    patched.search(unit(1, 0, 0), k=1)  # the matrix is built now
    changes = {"b": unit(0, 0, 1), "c": unit(1, 1, 1)}
    patched.put(changes)
    rebuilt.replace({**start, **changes})
    for query in (unit(0, 0, 1), unit(1, 1, 1), unit(1, 0, 0)):
        assert patched.search(query, k=3) == rebuilt.search(query, k=3)


def test_forget_and_clear() -> None:
    index = VectorIndex()
    index.replace({"a": unit(1, 0), "b": unit(0, 1)})
    index.search(unit(1, 0), k=1)
    index.forget("a")
    index.forget("missing")  # no error
    assert [key for key, _ in index.search(unit(1, 0), k=2)] == ["b"]
    index.clear()
    assert len(index) == 0 and index.search(unit(1, 0), k=2) == []
