"""A lexical TF-IDF baseline that fits the :class:`~agentgov.ml.embedding.Embedder` contract.

It exists to measure the semantic model against: it only matches words the query shares with an agent's
text, so "agent that sends emails" does not find a "mail dispatcher bot". Not meant for production use:
its vectors are dense and as wide as the vocabulary, and it must be refitted (changing its
``model_name``) whenever the corpus changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np

from agentgov.ml.embedding.base import FloatMatrix, normalize_rows

__all__ = ["TfidfEmbedder"]


class TfidfEmbedder:
    """TF-IDF (scikit-learn) over word unigrams, fitted on ``corpus`` at construction.

    Settings: lowercase, Unicode accents stripped, English stop words dropped, sublinear term frequency,
    at most ``max_features`` terms. :meth:`embed` returns unit-norm rows, except an all-zero row for a
    text that has no term of the fitted vocabulary (it is similar to nothing).

    Raises ``ValueError`` at construction if ``corpus`` yields no term at all. Thread-safe after
    construction (``transform`` does not mutate the fitted vectorizer).
    """

    def __init__(self, corpus: Sequence[str], *, max_features: int | None = 8192) -> None:
        if isinstance(corpus, str):
            raise TypeError("corpus must be a sequence of str, not a str")
        # Imported here: scikit-learn is slow to import and only this baseline needs it.
        from sklearn.feature_extraction.text import TfidfVectorizer

        self._vectorizer = TfidfVectorizer(
            lowercase=True,
            strip_accents="unicode",
            stop_words="english",
            sublinear_tf=True,
            max_features=max_features,
            dtype=np.float32,
        )
        try:
            self._vectorizer.fit(list(corpus))
        except ValueError as exc:  # sklearn: "empty vocabulary; perhaps the documents only contain ..."
            raise ValueError(f"cannot fit TF-IDF on this corpus: {exc}") from exc
        vocabulary = self._vectorizer.get_feature_names_out()
        digest = hashlib.sha256()
        digest.update("\n".join(vocabulary.tolist()).encode())
        digest.update(np.asarray(self._vectorizer.idf_, dtype="<f4").tobytes())
        self._dimension = len(vocabulary)
        self._model_name = f"tfidf/{digest.hexdigest()[:12]}"

    @property
    def model_name(self) -> str:
        """``tfidf/<digest of vocabulary and idf weights>``: a refit on another corpus is another space."""
        return self._model_name

    @property
    def dimension(self) -> int:
        """The vocabulary size."""
        return self._dimension

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """See :meth:`Embedder.embed`; all-zero rows for texts with no known term. Raises ``TypeError``
        if ``texts`` is a ``str`` or holds a non-``str``."""
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of str, not a str")
        items = list(texts)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"embed() takes str items, got {type(item).__name__}")
        if not items:
            return np.empty((0, self._dimension), dtype=np.float32)
        sparse = self._vectorizer.transform(items)
        return normalize_rows(sparse.toarray())
