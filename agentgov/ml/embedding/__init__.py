"""Sentence embeddings for semantic search of registered agents.

Pure and synchronous (numpy, onnxruntime): no trio, no network. Calls can block (the first one loads
the model, ~0.3 s; each embeds at ~100-250 texts/s), so an async caller runs them in a thread or worker.

Typical use by the search endpoint::

    emb = default_embedder()
    text = agent_text(name=..., agent_type=..., description=..., capabilities=..., owner=...)
    key = content_hash(text, model_name=emb.model_name)   # store with the vector; recompute if it differs
    blob = to_bytes(emb.embed([text])[0])                  # store in the DB
    ...
    matrix = matrix_from_bytes(blobs, emb.dimension)       # the tenant's agents, built once and cached
    hits = top_k(emb.embed([q])[0], matrix, agent_ids, k=10)
"""

from __future__ import annotations

import threading

from agentgov.ml.embedding.base import (
    ChecksumMismatchError,
    Embedder,
    EmbeddingError,
    FloatMatrix,
    ModelUnavailableError,
    from_bytes,
    matrix_from_bytes,
    normalize_rows,
    to_bytes,
    top_k,
)
from agentgov.ml.embedding.minilm import MiniLMEmbedder
from agentgov.ml.embedding.text import agent_text, content_hash
from agentgov.ml.embedding.tfidf import TfidfEmbedder

__all__ = [
    "ChecksumMismatchError",
    "Embedder",
    "EmbeddingError",
    "FloatMatrix",
    "MiniLMEmbedder",
    "ModelUnavailableError",
    "TfidfEmbedder",
    "agent_text",
    "content_hash",
    "default_embedder",
    "from_bytes",
    "matrix_from_bytes",
    "normalize_rows",
    "to_bytes",
    "top_k",
]

_default: MiniLMEmbedder | None = None
_default_lock = threading.Lock()


def default_embedder() -> MiniLMEmbedder:
    """The process-wide embedder for agent search: one shared :class:`MiniLMEmbedder` (an
    :class:`Embedder`).

    Returns the same instance on every call and does not load the model (no I/O): the first ``embed``
    or ``load()`` does, and raises :class:`ChecksumMismatchError` / :class:`ModelUnavailableError` if it
    cannot. Call ``load()`` at start-up, in a thread, to fail fast and keep the first search quick.
    """
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = MiniLMEmbedder()
    return _default
