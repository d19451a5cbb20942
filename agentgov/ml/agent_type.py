"""Predict an agent's type (``llm | tool | workflow | custom``) from its metadata.

The prediction is shown as ``predicted_type`` in agent listings; it is advisory only and never used for
authorisation decisions.

Model
    Three TF-IDF blocks fed to a multinomial logistic regression (``saga`` solver, ``C`` =
    :data:`DEFAULT_C`, balanced class weights):

    * word uni/bi-grams of the *name* after splitting camelCase / snake_case / kebab-case and dropping
      version tokens, numbers and hex ids (``SupportBot-v2`` and ``support_bot_7f3a`` both become
      ``support bot``);
    * words of the *description* (English stop words removed);
    * tokens of the *capabilities*: each capability contributes its parts plus an order-independent joined
      token (``email.send``, ``send_email`` and ``EmailSend`` all yield ``email send email_send``).

    A character n-gram block and description bigrams were tried and dropped: on grouped cross-validation
    they lowered accuracy (0.915 -> 0.900) and tripled training time.

    The confidence returned by :meth:`TypeClassifier.predict` is the model's probability of the returned
    label (the largest class probability, so at least 0.25 for four classes).

Training data
    ``agent_type_data.json`` (package data, next to this module) holds ~240 hand-written agents plus a set
    of templates (slot vocabularies, naming patterns, description and capability pools) that
    :func:`load_training_examples` expands deterministically with the file's fixed seed into ~240 further
    examples with varied naming styles, capability spellings, empty descriptions (~10 %), generic
    capabilities shared by all labels and occasional capabilities borrowed from another label. Every
    example carries a ``group`` (its own id for hand-written ones, the template id for expansions) so that
    :func:`evaluate_held_out` can hold out whole templates instead of near-duplicates.

Agents without a description
    Pass ``description=""`` (``None`` is accepted and treated the same). The training set contains
    agents with empty descriptions, so the model then relies on the name and capabilities; expect lower
    confidence. Likewise pass ``capabilities=[]`` when none are declared.

Serialisation and trust boundary
    :meth:`TypeClassifier.to_bytes` / :meth:`TypeClassifier.from_bytes` use :mod:`pickle` (the only format
    that round-trips scikit-learn estimators without extra dependencies). Unpickling executes code, so
    **only bytes that agentgov itself produced and stored may be loaded** -- never a model uploaded by a
    tenant or fetched from elsewhere. Two safeguards back this up: an optional HMAC-SHA256 ``key`` (when
    given to ``from_bytes`` the signature is verified *before* anything is unpickled, and unsigned blobs are
    refused), and a restricted unpickler that only resolves classes from numpy, scipy, scikit-learn and this
    module. The restricted unpickler is defence in depth, not a sandbox. Blobs record the scikit-learn
    version and are refused under a different version; retrain instead (training takes well under a
    second).
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import pickle
import random
import re
import struct
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, Literal, cast, get_args

import numpy as np
import sklearn
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, confusion_matrix, precision_recall_fscore_support
from sklearn.model_selection import StratifiedGroupKFold, StratifiedShuffleSplit
from sklearn.pipeline import Pipeline

__all__ = [
    "AGENT_TYPES",
    "AgentExample",
    "AgentType",
    "ClassScore",
    "HeldOutReport",
    "TypeClassifier",
    "default_type_classifier",
    "evaluate_held_out",
    "load_training_examples",
    "train_type_classifier",
]

AgentType = Literal["llm", "tool", "workflow", "custom"]
AGENT_TYPES: Final[tuple[AgentType, ...]] = get_args(AgentType)

DATA_FILE: Final = "agent_type_data.json"
#: Regularisation strength of the logistic regression (chosen by grouped cross-validation on the
#: packaged data; accuracy is flat for C in 3-100).
DEFAULT_C: Final = 10.0


# --------------------------------------------------------------------------------------------- examples


@dataclass(frozen=True, slots=True)
class AgentExample:
    """One labelled agent. ``group`` ties near-duplicates together for held-out evaluation."""

    name: str
    description: str
    capabilities: tuple[str, ...]
    label: AgentType
    group: str = ""

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, group: str = "") -> AgentExample:
        """Build from a ``{"name", "description", "capabilities", "label"[, "group"]}`` mapping.

        Raises ``ValueError`` for an unknown label.
        """
        label = str(data["label"])
        if label not in AGENT_TYPES:
            raise ValueError(f"unknown agent type {label!r}; expected one of {AGENT_TYPES}")
        return cls(
            name=str(data.get("name") or ""),
            description=str(data.get("description") or ""),
            capabilities=tuple(str(c) for c in data.get("capabilities") or ()),
            label=cast(AgentType, label),
            group=str(data.get("group") or group),
        )


_SLOT_RE = re.compile(r"\{([A-Za-z]+?)(\d*)(_cap)?\}")


def _cap_form(value: str) -> str:
    return re.sub(r"[\s_]+", "-", value.strip().lower())


class _SlotFiller:
    """Fills ``{slot}``, ``{Slot}`` (capitalised), ``{slot2}`` (second distinct value) and ``{slot_cap}``."""

    def __init__(self, vocab: Mapping[str, Sequence[str]], rng: random.Random) -> None:
        self._vocab = vocab
        self._rng = rng
        self._values: dict[tuple[str, str], str] = {}

    def _value(self, base: str, index: str) -> str:
        key = (base, index)
        if key not in self._values:
            pool = list(self._vocab[base])
            taken = {v for (b, _), v in self._values.items() if b == base}
            fresh = [v for v in pool if v not in taken] or pool
            self._values[key] = self._rng.choice(fresh)
        return self._values[key]

    def fill(self, template: str) -> str:
        def repl(match: re.Match[str]) -> str:
            raw, index, cap = match.group(1), match.group(2), match.group(3)
            value = self._value(raw.lower(), index)
            if cap:
                return _cap_form(value)
            return value[:1].upper() + value[1:] if raw[:1].isupper() else value

        return _SLOT_RE.sub(repl, template)


def _style_name(words: Sequence[str], rng: random.Random, vocab: Mapping[str, Sequence[str]]) -> str:
    parts = [w for word in words for w in re.split(r"[\s\-_]+", word) if w]
    roll = rng.random()
    if roll < 0.12:
        parts = [rng.choice(list(vocab["team"])), *parts]
    elif roll < 0.30:
        parts = [*parts, rng.choice(["v2", "prod", "svc", "agent", "bot", "01", "staging", "v3", "2"])]
    style = rng.choice(["kebab", "kebab", "snake", "pascal", "title", "camel", "lower"])
    if style == "kebab":
        return "-".join(p.lower() for p in parts)
    if style == "snake":
        return "_".join(p.lower() for p in parts)
    if style == "pascal":
        return "".join(p[:1].upper() + p[1:].lower() for p in parts)
    if style == "camel":
        return parts[0].lower() + "".join(p[:1].upper() + p[1:].lower() for p in parts[1:])
    if style == "title":
        acronyms = {"hr", "it", "ai", "gpt", "etl"}
        return " ".join(p.upper() if p.lower() in acronyms else p[:1].upper() + p[1:] for p in parts)
    return " ".join(p.lower() for p in parts)


def _style_capabilities(caps: Sequence[str], rng: random.Random) -> list[str]:
    style = rng.choice(["dot", "dot", "dot", "snake", "colon", "verb_first", "pascal"])
    out: list[str] = []
    for cap in caps:
        parts = [p for p in re.split(r"[.\-_:/\s]+", cap) if p]
        if style == "snake":
            out.append("_".join(parts))
        elif style == "colon":
            out.append(":".join(parts))
        elif style == "verb_first":
            out.append("_".join(reversed(parts)))
        elif style == "pascal":
            out.append("".join(p[:1].upper() + p[1:] for p in parts))
        else:
            out.append(cap)
    return out


def _expand_templates(data: Mapping[str, Any]) -> list[AgentExample]:
    rng = random.Random(int(data["seed"]))
    vocab: Mapping[str, Sequence[str]] = data["vocab"]
    generic: Sequence[str] = data["generic_capabilities"]
    templates: Sequence[Mapping[str, Any]] = data["templates"]
    empty_rate = float(data["empty_description_rate"])
    generic_rate = float(data["generic_capability_rate"])
    cross_rate = float(data["cross_capability_rate"])
    pools_by_label: dict[str, list[str]] = {}
    for tpl in templates:
        pools_by_label.setdefault(tpl["label"], []).extend(tpl["caps"])

    out: list[AgentExample] = []
    for tpl in templates:
        label = tpl["label"]
        others = sorted(lbl for lbl in pools_by_label if lbl != label)
        for _ in range(int(tpl["count"])):
            filler = _SlotFiller(vocab, rng)
            name_words = [filler.fill(w) for w in rng.choice(tpl["names"])]
            name = _style_name(name_words, rng, vocab)
            description = "" if rng.random() < empty_rate else filler.fill(rng.choice(tpl["descriptions"]))
            kmin, kmax = tpl["k"]
            caps = [filler.fill(c) for c in rng.sample(list(tpl["caps"]), rng.randint(kmin, kmax))]
            if rng.random() < generic_rate:
                caps.append(rng.choice(list(generic)))
            if rng.random() < cross_rate:
                caps.append(filler.fill(rng.choice(pools_by_label[rng.choice(others)])))
            caps = list(dict.fromkeys(_style_capabilities(caps, rng)))
            out.append(AgentExample(name, description, tuple(caps), cast(AgentType, label), group=f"tpl:{tpl['id']}"))
    return out


def _read_data() -> dict[str, Any]:
    text = resources.files(__package__ or "agentgov.ml").joinpath(DATA_FILE).read_text(encoding="utf-8")
    return cast(dict[str, Any], json.loads(text))


def load_training_examples(*, include_templates: bool = True) -> list[AgentExample]:
    """Return the packaged labelled agents: hand-written first, then template expansions.

    Deterministic: the same package data always yields the same list in the same order. Exact duplicates
    (same name, description and capabilities) are dropped, keeping the first occurrence.
    """
    data = _read_data()
    examples = [AgentExample.from_mapping(row, group=f"hand:{i}") for i, row in enumerate(data["examples"])]
    if include_templates:
        examples.extend(_expand_templates(data))
    seen: set[tuple[str, str, tuple[str, ...]]] = set()
    unique: list[AgentExample] = []
    for ex in examples:
        key = (ex.name.lower(), ex.description, tuple(c.lower() for c in ex.capabilities))
        if key not in seen:
            seen.add(key)
            unique.append(ex)
    return unique


# ------------------------------------------------------------------------------------------ featurising

_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SPLIT_RE = re.compile(r"[^A-Za-z0-9]+")
_NOISE_TOKEN_RE = re.compile(r"^(?:v?\d+[a-z]?|[0-9a-f]*\d[0-9a-f]*|[a-z]\d+)$")


def _words(text: str) -> list[str]:
    out: list[str] = []
    for chunk in _SPLIT_RE.split(text):
        if chunk:
            out.extend(p.lower() for p in _CAMEL_RE.split(chunk) if p)
    return out


def name_tokens(name: str) -> list[str]:
    """Lower-case words of an agent name with version numbers, numbers and hex ids removed."""
    return [w for w in _words(name) if not _NOISE_TOKEN_RE.match(w)]


def capability_tokens(capabilities: Iterable[str]) -> list[str]:
    """Parts of each capability plus an order-independent joined token per capability."""
    out: list[str] = []
    for cap in capabilities:
        parts = [w for w in _words(cap) if not w.isdigit()]
        if not parts:
            continue
        out.extend(parts)
        if len(parts) > 1:
            out.append("_".join(sorted(parts)))
    return out


def _feature_row(name: str, description: str | None, capabilities: Iterable[str] | None) -> list[str]:
    n = " ".join(name_tokens(name or ""))
    c = " ".join(capability_tokens(capabilities or ()))
    return [n, description or "", c]


def _feature_matrix(rows: Sequence[Sequence[str]]) -> np.ndarray:
    matrix = np.empty((len(rows), 3), dtype=object)
    for i, row in enumerate(rows):
        matrix[i, :] = row
    return matrix


def _build_pipeline(c: float, seed: int) -> Pipeline:
    features = ColumnTransformer(
        [
            ("name", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True), 0),
            ("description", TfidfVectorizer(sublinear_tf=True, stop_words="english"), 1),
            ("capabilities", TfidfVectorizer(token_pattern=r"[a-z0-9_]{2,}", sublinear_tf=True), 2),
        ],
        sparse_threshold=1.0,
    )
    clf = LogisticRegression(C=c, solver="saga", max_iter=5000, class_weight="balanced", random_state=seed)
    return Pipeline([("features", features), ("clf", clf)])


# -------------------------------------------------------------------------------------------- classifier

_MAGIC: Final = b"AGTYPE\x00"
_FORMAT: Final = 1
_MAC_LEN: Final = 32
_ALLOWED_MODULE_PREFIXES: Final = ("numpy", "scipy.", "sklearn.", "agentgov.ml.agent_type")
_ALLOWED_BUILTINS: Final = frozenset(
    {
        "dict",
        "list",
        "tuple",
        "set",
        "frozenset",
        "slice",
        "int",
        "float",
        "complex",
        "str",
        "bytes",
        "bytearray",
        "bool",
        "object",
        "getattr",
    }
)


class _RestrictedUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module == "builtins" and name in _ALLOWED_BUILTINS:
            return super().find_class(module, name)
        if module == "numpy" or module.startswith(_ALLOWED_MODULE_PREFIXES):
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a type-classifier blob")


class TypeClassifier:
    """A fitted agent-type classifier. Immutable after construction; ``predict`` is thread-safe."""

    def __init__(self, pipeline: Pipeline, *, n_train: int) -> None:
        self._pipeline = pipeline
        self.n_train = n_train
        self.labels: tuple[AgentType, ...] = tuple(
            cast(AgentType, str(lbl)) for lbl in pipeline.named_steps["clf"].classes_
        )

    def predict_proba(
        self, name: str, description: str | None = "", capabilities: Sequence[str] | None = ()
    ) -> dict[AgentType, float]:
        """Probability of every label (sums to 1). Same inputs as :meth:`predict`."""
        row = _feature_matrix([_feature_row(name, description, capabilities)])
        proba = self._pipeline.predict_proba(row)[0]
        return {lbl: float(p) for lbl, p in zip(self.labels, proba, strict=True)}

    def predict(
        self, name: str, description: str | None = "", capabilities: Sequence[str] | None = ()
    ) -> tuple[AgentType, float]:
        """Return ``(label, confidence)`` with ``confidence`` = probability of ``label`` in ``[0.25, 1]``.

        ``description`` may be ``""`` or ``None`` when the agent has none; ``capabilities`` may be empty.
        Never raises for odd strings; an entirely empty agent gets the prior-driven label with low
        confidence.
        """
        return self.predict_many([(name, description, capabilities)])[0]

    def predict_many(
        self, agents: Iterable[tuple[str, str | None, Sequence[str] | None]]
    ) -> list[tuple[AgentType, float]]:
        """Vectorised :meth:`predict` over ``(name, description, capabilities)`` triples (for listings)."""
        rows = [_feature_row(n, d, c) for n, d, c in agents]
        if not rows:
            return []
        proba = self._pipeline.predict_proba(_feature_matrix(rows))
        best = np.argmax(proba, axis=1)
        return [(self.labels[int(j)], float(proba[i, j])) for i, j in enumerate(best)]

    # -- serialisation -------------------------------------------------------------------------------

    def to_bytes(self, *, key: bytes | None = None) -> bytes:
        """Serialise for storage by agentgov. With ``key`` the blob is HMAC-SHA256 signed.

        Layout: magic, 4-byte header length, JSON header (format, sklearn version, signed flag), pickle
        payload, then the 32-byte MAC over everything before it when signed.
        """
        header = json.dumps(
            {"format": _FORMAT, "sklearn": sklearn.__version__, "signed": key is not None}, sort_keys=True
        ).encode()
        body = _MAGIC + struct.pack(">I", len(header)) + header
        body += pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)
        if key is not None:
            body += hmac.new(key, body, hashlib.sha256).digest()
        return body

    @classmethod
    def from_bytes(cls, data: bytes, *, key: bytes | None = None) -> TypeClassifier:
        """Load a blob produced by :meth:`to_bytes`. TRUSTED INPUT ONLY (see module docstring).

        With ``key``, the blob must be signed with that key and the MAC is checked before unpickling.
        Raises ``ValueError`` for a foreign, corrupted, wrongly signed or version-mismatched blob.
        """
        if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 4:
            raise ValueError("not an agent-type classifier blob")
        (hlen,) = struct.unpack(">I", data[len(_MAGIC) : len(_MAGIC) + 4])
        start = len(_MAGIC) + 4
        try:
            header = json.loads(data[start : start + hlen])
        except ValueError as exc:
            raise ValueError("corrupted agent-type classifier header") from exc
        if header.get("format") != _FORMAT:
            raise ValueError(f"unsupported agent-type classifier format {header.get('format')!r}")
        payload_end = len(data)
        if header.get("signed"):
            if key is None:
                raise ValueError("blob is signed; a key is required to load it")
            payload_end -= _MAC_LEN
            expected = hmac.new(key, data[:payload_end], hashlib.sha256).digest()
            if not hmac.compare_digest(expected, data[payload_end:]):
                raise ValueError("agent-type classifier signature mismatch")
        elif key is not None:
            raise ValueError("blob is not signed but a key was given")
        if header.get("sklearn") != sklearn.__version__:
            raise ValueError(
                f"classifier was saved with scikit-learn {header.get('sklearn')}, running "
                f"{sklearn.__version__}; retrain it"
            )
        try:
            obj = _RestrictedUnpickler(io.BytesIO(data[start + hlen : payload_end])).load()
        except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
            raise ValueError(f"cannot load agent-type classifier: {exc}") from exc
        if not isinstance(obj, cls):
            raise ValueError("blob does not contain a TypeClassifier")
        return obj


def _coerce(examples: Iterable[AgentExample | Mapping[str, Any]]) -> list[AgentExample]:
    return [ex if isinstance(ex, AgentExample) else AgentExample.from_mapping(ex) for ex in examples]


def train_type_classifier(
    examples: Iterable[AgentExample | Mapping[str, Any]], *, c: float = DEFAULT_C, seed: int = 0
) -> TypeClassifier:
    """Fit a classifier on labelled examples (``AgentExample`` or mappings with the same keys).

    Deterministic for a given input and ``seed``. Needs at least two distinct labels (``ValueError``
    otherwise). Takes ~0.05-0.1 s on the packaged data set (~480 examples).
    """
    exs = _coerce(examples)
    if len({ex.label for ex in exs}) < 2:
        raise ValueError("need examples of at least two agent types")
    pipeline = _build_pipeline(c, seed)
    x = _feature_matrix([_feature_row(ex.name, ex.description, ex.capabilities) for ex in exs])
    pipeline.fit(x, np.array([ex.label for ex in exs], dtype=object))
    return TypeClassifier(pipeline, n_train=len(exs))


_default_lock = threading.Lock()
_default: TypeClassifier | None = None


def default_type_classifier() -> TypeClassifier:
    """The classifier trained on all packaged examples; trained on first use, then cached per process."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = train_type_classifier(load_training_examples())
    return _default


# -------------------------------------------------------------------------------------------- evaluation


@dataclass(frozen=True, slots=True)
class ClassScore:
    precision: float
    recall: float
    f1: float
    support: int


@dataclass(frozen=True, slots=True)
class HeldOutReport:
    """Scores of a model trained on one part of the examples and tested on the rest."""

    accuracy: float
    #: accuracy of always predicting the most frequent training label
    baseline_accuracy: float
    per_class: dict[str, ClassScore]
    #: rows = true label, columns = predicted label, both in ``labels`` order
    confusion: list[list[int]]
    labels: tuple[str, ...]
    n_train: int
    n_test: int
    grouped: bool


def evaluate_held_out(
    examples: Sequence[AgentExample | Mapping[str, Any]] | None = None,
    *,
    test_size: float = 0.25,
    seed: int = 0,
    grouped: bool = True,
    c: float = DEFAULT_C,
) -> HeldOutReport:
    """Train on a stratified split of ``examples`` (default: the packaged set) and score the held-out part.

    With ``grouped=True`` (default) whole groups are held out (``StratifiedGroupKFold``, ``n_splits =
    round(1 / test_size)``, first fold), so template expansions of one template never sit on both
    sides -- the honest number. ``grouped=False`` is a plain ``StratifiedShuffleSplit``.
    """
    exs = _coerce(examples) if examples is not None else load_training_examples()
    y = np.array([ex.label for ex in exs], dtype=object)
    idx = np.arange(len(exs))
    if grouped:
        groups = np.array([ex.group or f"row:{i}" for i, ex in enumerate(exs)], dtype=object)
        n_splits = max(2, round(1 / test_size))
        splitter = StratifiedGroupKFold(n_splits=n_splits, shuffle=True, random_state=seed)
        train_idx, test_idx = next(splitter.split(idx, y, groups))
    else:
        shuffle = StratifiedShuffleSplit(n_splits=1, test_size=test_size, random_state=seed)
        train_idx, test_idx = next(shuffle.split(idx, y))
    model = train_type_classifier([exs[i] for i in train_idx], c=c, seed=seed)
    preds = [
        lbl for lbl, _ in model.predict_many((exs[i].name, exs[i].description, exs[i].capabilities) for i in test_idx)
    ]
    truth = [exs[i].label for i in test_idx]
    labels = tuple(AGENT_TYPES)
    precision, recall, f1, support = precision_recall_fscore_support(truth, preds, labels=list(labels), zero_division=0)
    values, counts = np.unique(y[train_idx], return_counts=True)
    majority = values[int(np.argmax(counts))]
    return HeldOutReport(
        accuracy=float(accuracy_score(truth, preds)),
        baseline_accuracy=float(np.mean([t == majority for t in truth])),
        per_class={
            lbl: ClassScore(float(precision[i]), float(recall[i]), float(f1[i]), int(support[i]))
            for i, lbl in enumerate(labels)
        },
        confusion=confusion_matrix(truth, preds, labels=list(labels)).tolist(),
        labels=labels,
        n_train=len(train_idx),
        n_test=len(test_idx),
        grouped=grouped,
    )
