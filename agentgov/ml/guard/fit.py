"""Fitting the guard's classifier, choosing its threshold and measuring it on text it did not learn from.

`fit(examples, params)` learns from labelled texts (`Example`: the base data set and, for a tenant's model,
its feedback, weighted `feedback_weight` times). Honest figures need text from sources the model has not
seen: every example belongs to a `group` (its source family), and the attack probability of each example is
taken from a model fitted without its whole group (leave-one-source-out; feedback rows are spread over the
folds). Those out-of-fold scores choose the threshold (`choose_threshold`: the benign base rows, pooled, are
flagged at most at `target_fpr`, and no benign source family of `MIN_FAMILY_BENIGN` rows or more above
`max_family_fpr`; never below 0.5) and give the metrics, judged as the guard judges (an unquoted rule hit blocks
whatever the classifier says; a harmful request scores by the harm reading): precision, recall, F1,
false-positive rate, ROC-AUC and per-category recall on the base data, and the same on the feedback; and per
source family (`held_out_by_family`: its attacks ranked against every benign base text, its benign texts'
false-positive rate), which shows where the model is weak. The shipped model is then fitted on everything.

The harm reading (`harm.py`) is fitted alongside, in the same folds: on the requests the jailbreak templates of
the fold's examples carry (`template_requests`) against its benign texts (feedback marked false positive among
them, weighted like all feedback). Its `cut` is the lowest probability (never below 0.5) at which framed benign
base rows, held out by family, flag at most `harm_fpr` of all benign base rows. A family whose own attacks hold
every template request is scored without a harm reading when it is held out (there is none left to learn from).
Texts without a frame are scored by it too (`HarmModel.score`: ranked, never blocked), so the held-out figures
rank them as the guard does.

Deterministic: the same examples and parameters give the same model, bit for bit, on the same BLAS and NumPy kernels and
threads (liblinear with a fixed seed, multinomial L-BFGS, arrays stored as float16; `train.PINNED_KERNELS` pins
them for the shipped model). Raises `ValueError` when the examples cannot make a model
(no benign or no attack rows).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from agentgov.ml.guard.encoding import as_stored, inverse_document_frequency
from agentgov.ml.guard.features import RULE_NAMES, Counts, count_features, weigh
from agentgov.ml.guard.harm import HarmModel, fit_harm, frame, template_requests
from agentgov.ml.guard.model import GuardModel
from agentgov.ml.guard.normalise import normalise
from agentgov.ml.guard.rules import CATEGORIES, scan
from agentgov.ml.guard.speech import spoken
from agentgov.ml.guard.style import fit_style

BENIGN = "benign"
LABELS = (BENIGN, *CATEGORIES)


@dataclasses.dataclass(frozen=True)
class Example:
    text: str
    label: str  # benign, injection, jailbreak or leakage
    group: str  # the source family: folds keep a family together
    feedback: bool = False


@dataclasses.dataclass(frozen=True)
class GuardParams:
    """Training parameters (all optional in a training request)."""

    target_fpr: float = 0.02  # the benign base rows, pooled, flagged at most (held out by family)
    max_family_fpr: float = 0.025  # and any one benign source family's rows at most
    feedback_weight: float = 5.0
    regularisation: float = 8.0  # liblinear's C: higher fits the training text more closely
    style_weight: float = 0.7  # the style model's share of the attack log-odds (0: no style model)
    style_words: float = 500  # tokens the style model keeps (the commonest in the training texts)
    style_regularisation: float = 1.0  # the style model's C
    harm_fpr: float = 0.005  # benign base rows a framed harmful request may flag, pooled (0: no harm reading)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GuardParams:
        """Raises `ValueError` for an unknown name or a value out of range."""
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise ValueError(f"unknown guard parameter(s): {', '.join(unknown)}; allowed: {sorted(names)}")
        params = cls(**{name: float(value) for name, value in data.items()})
        if not 0.001 <= params.target_fpr <= 0.2:
            raise ValueError("target_fpr must be between 0.001 and 0.2")
        if not 0.001 <= params.max_family_fpr <= 0.2:
            raise ValueError("max_family_fpr must be between 0.001 and 0.2")
        if not 1.0 <= params.feedback_weight <= 100.0:
            raise ValueError("feedback_weight must be between 1 and 100")
        if not 0.01 <= params.regularisation <= 1000.0:
            raise ValueError("regularisation must be between 0.01 and 1000")
        if not 0.0 <= params.style_weight <= 0.9:
            raise ValueError("style_weight must be between 0 and 0.9")
        if not 50 <= params.style_words <= 5000 or params.style_words != int(params.style_words):
            raise ValueError("style_words must be a whole number between 50 and 5000")
        if not 0.01 <= params.style_regularisation <= 1000.0:
            raise ValueError("style_regularisation must be between 0.01 and 1000")
        if not 0.0 <= params.harm_fpr <= 0.05:
            raise ValueError("harm_fpr must be between 0 and 0.05")
        return params

    def to_dict(self) -> dict[str, float]:
        return dataclasses.asdict(self)


def fit(
    examples: Sequence[Example],
    params: GuardParams,
    progress: Callable[[float], None] | None = None,
) -> tuple[GuardModel, dict[str, Any]]:
    """The model of `examples` and its out-of-fold metrics (see the module docstring)."""
    labels = np.array([LABELS.index(e.label) for e in examples])
    if not (labels == 0).any() or not (labels > 0).any():
        raise ValueError("the guard needs both benign and attack examples")
    texts = [normalise(e.text).text for e in examples]
    scans = [scan(text) for text in texts]  # each text's rule hits and reported stretches, read once
    counts = count_features(texts, [scanned.hits for scanned in scans])
    weights = np.array([params.feedback_weight if e.feedback else 1.0 for e in examples])
    folds = _folds(examples)
    reported = [scanned.reported for scanned in scans]
    framed = np.array([params.harm_fpr > 0 and frame(t, r) is not None for t, r in zip(texts, reported, strict=True)])
    out_of_fold = np.zeros(len(examples))
    harm_out_of_fold = np.zeros(len(examples))  # each text's held-out harm probability (0 without a reading)
    for number, fold in enumerate(np.unique(folds)):
        held = folds == fold
        model = _fit_once(counts.rows(~held), labels[~held], weights[~held], params, with_categories=False)
        out_of_fold[held] = model.probabilities(counts.rows(held))[0]
        harm = _fit_harm(texts, labels, weights, ~held) if framed.any() else None
        if harm is not None:
            for k in np.flatnonzero(held if harm.unframed_share else held & framed):
                harm_out_of_fold[k] = harm.probability(spoken(texts[k], reported[k]))[0]
        if progress is not None:
            progress((number + 1) / (len(np.unique(folds)) + 1))
    feedback = np.array([e.feedback for e in examples])
    groups = np.array([e.group for e in examples])
    base_benign = (labels == 0) & ~feedback
    threshold = choose_threshold(out_of_fold[base_benign], groups[base_benign], params)
    # As judged: an unquoted rule hit blocks on its own (GuardModel.rule_score), a quoted one never does.
    decision = np.where((counts.rules >= 1.0).any(axis=1), np.maximum(out_of_fold, threshold), out_of_fold)
    model = _fit_once(counts, labels, weights, params, with_categories=True).with_threshold(round(threshold, 6))
    harm = _fit_harm(texts, labels, weights, np.ones(len(examples), dtype=bool)) if framed.any() else None
    if harm is not None:
        framed_benign = np.where(framed, harm_out_of_fold, 0.0)[base_benign]
        harm = harm.with_cut(round(choose_cut(framed_benign, params.harm_fpr), 6))
        harm_scores = [harm.score(p, threshold, bool(f)) for p, f in zip(harm_out_of_fold, framed, strict=True)]
        decision = np.maximum(decision, harm_scores)
        model = dataclasses.replace(model, harm=harm)
    metrics = {
        "evaluation": "leave-one-source-out: each text scored by a model fitted without its source family",
        "held_out": _figures(decision[~feedback], labels[~feedback], threshold),
        "held_out_by_family": _family_figures(
            decision[~feedback], labels[~feedback], [e.group for e in examples if not e.feedback], threshold
        ),
        "feedback": _figures(decision[feedback], labels[feedback], threshold) if feedback.any() else None,
        "examples": len(examples),
        "feedback_examples": int(feedback.sum()),
    }
    return model, metrics


#: A benign source family with fewer rows does not bound the threshold on its own (its quantile is too coarse).
MIN_FAMILY_BENIGN = 100


def choose_threshold(benign_scores: np.ndarray, families: np.ndarray, params: GuardParams) -> float:
    """The lowest threshold (within 0.5..0.99) at which the benign scores, pooled, are flagged at most at
    `params.target_fpr` and each family's with `MIN_FAMILY_BENIGN` rows or more at most at
    `params.max_family_fpr`: a model tuned to the average benign text may still flag one kind of ordinary text
    (code tasks, say) several times as often, and a new source is as likely to look like that kind."""
    bounds = [np.quantile(benign_scores, 1.0 - params.target_fpr)]
    for family in np.unique(families):
        own = benign_scores[families == family]
        if len(own) >= MIN_FAMILY_BENIGN:
            bounds.append(np.quantile(own, 1.0 - params.max_family_fpr))
    return float(np.clip(max(bounds), 0.5, 0.99))


def choose_cut(benign_probabilities: np.ndarray, harm_fpr: float) -> float:
    """The lowest cut (within 0.5..0.99) that at most `harm_fpr` of the benign rows reach
    (`benign_probabilities`: a framed row's held-out harm probability, 0 for a row without a frame): just above
    the probability of the row ranked `floor(harm_fpr * rows)` from the top (counting from 0)."""
    ranked = np.sort(np.asarray(benign_probabilities, dtype=np.float64))[::-1]
    allowed = int(np.floor(harm_fpr * len(ranked) + 1e-9))
    if allowed >= len(ranked):
        return 0.5
    return float(np.clip(np.nextafter(ranked[allowed], 1.0), 0.5, 0.99))


def _fit_harm(texts: Sequence[str], labels: np.ndarray, weights: np.ndarray, rows: np.ndarray) -> HarmModel | None:
    """The harm model of the selected `rows`: their attacks' template requests against their benign texts."""
    attacks = [texts[int(k)] for k in np.flatnonzero(rows & (labels > 0))]
    benign = np.flatnonzero(rows & (labels == 0))
    return fit_harm(template_requests(attacks), [texts[int(k)] for k in benign], weights[benign])


def _folds(examples: Sequence[Example]) -> np.ndarray:
    """A fold number per example: one fold per base source family; feedback rows dealt round-robin."""
    families = sorted({e.group for e in examples if not e.feedback})
    fold_of = {family: number for number, family in enumerate(families)}
    spread = max(1, len(families))
    folds = []
    dealt = 0
    for example in examples:
        if example.feedback or example.group not in fold_of:
            folds.append(dealt % spread)
            dealt += 1
        else:
            folds.append(fold_of[example.group])
    return np.array(folds)


def _fit_once(
    counts: Counts, labels: np.ndarray, weights: np.ndarray, params: GuardParams, *, with_categories: bool
) -> GuardModel:
    char_idf = inverse_document_frequency(counts.chars)
    word_idf = inverse_document_frequency(counts.words)
    features = weigh(counts, char_idf, word_idf)
    attack = LogisticRegression(
        C=params.regularisation, solver="liblinear", class_weight="balanced", random_state=0, max_iter=1000
    )
    attack.fit(features, (labels > 0).astype(int), sample_weight=weights)
    width = features.shape[1]
    category_coef = np.zeros((len(CATEGORIES), width))
    category_intercept = np.full(len(CATEGORIES), -20.0)
    attacks = labels > 0
    present = np.unique(labels[attacks]) if with_categories else np.array([])
    if len(present) == 1:
        category_intercept[present[0] - 1] = 0.0
    elif len(present) > 1:
        category = LogisticRegression(C=params.regularisation, class_weight="balanced", max_iter=2000)
        category.fit(features[attacks], labels[attacks], sample_weight=weights[attacks])
        if len(present) == 2:  # one row of log-odds for the second class against the first: softmax of (0, it)
            first, second = category.classes_
            category_coef[first - 1], category_intercept[first - 1] = 0.0, 0.0
            category_coef[second - 1], category_intercept[second - 1] = category.coef_[0], category.intercept_[0]
        else:
            for row, label in enumerate(category.classes_):
                category_coef[label - 1] = category.coef_[row]
                category_intercept[label - 1] = category.intercept_[row]
    style = None
    if params.style_weight > 0:
        style = fit_style(
            counts.tokens,
            labels > 0,
            weights,
            words=int(params.style_words),
            regularisation=params.style_regularisation,
            weight=params.style_weight,
        )
    return GuardModel(
        char_idf=as_stored(char_idf),
        word_idf=as_stored(word_idf),
        attack_coef=as_stored(attack.coef_[0]),
        attack_intercept=float(round(attack.intercept_[0], 6)),
        category_coef=as_stored(category_coef),
        category_intercept=np.round(category_intercept, 6),
        threshold=0.5,
        rule_names=RULE_NAMES,
        style=style,
    )


def _figures(scores: np.ndarray, labels: np.ndarray, threshold: float) -> dict[str, Any]:
    flagged = scores >= threshold
    attacks = labels > 0
    true_positive = int((flagged & attacks).sum())
    precision = true_positive / int(flagged.sum()) if flagged.any() else None
    recall = true_positive / int(attacks.sum()) if attacks.any() else None
    f1 = None if not precision or not recall else 2 * precision * recall / (precision + recall)
    benign = ~attacks
    figures: dict[str, Any] = {
        "rows": len(labels),
        "attacks": int(attacks.sum()),
        "benign": int(benign.sum()),
        "threshold": round(threshold, 4),
        "precision": _round(precision),
        "recall": _round(recall),
        "f1": _round(f1),
        "false_positive_rate": _round(float(flagged[benign].mean()) if benign.any() else None),
        "roc_auc": _round(float(roc_auc_score(attacks, scores))) if attacks.any() and benign.any() else None,
        "recall_by_category": {
            name: _round(float(flagged[labels == k].mean()))
            for k, name in enumerate(CATEGORIES, start=1)
            if (labels == k).any()
        },
    }
    return figures


def _family_figures(
    scores: np.ndarray, labels: np.ndarray, groups: Sequence[str], threshold: float
) -> dict[str, dict[str, Any]]:
    """Per source family: its rows, attacks and benign texts; the recall on its attacks and their ROC-AUC
    against every benign text (of all families); the false-positive rate on its benign texts."""
    family = np.array(groups)
    attacks, flagged = labels > 0, scores >= threshold
    figures: dict[str, dict[str, Any]] = {}
    for name in sorted(set(groups)):
        own = family == name
        rows: dict[str, Any] = {
            "rows": int(own.sum()),
            "attacks": int((own & attacks).sum()),
            "benign": int((own & ~attacks).sum()),
        }
        if (own & attacks).any():
            ranked = (own & attacks) | ~attacks
            rows["recall"] = _round(float(flagged[own & attacks].mean()))
            if (~attacks).any():
                rows["roc_auc"] = _round(float(roc_auc_score(attacks[ranked], scores[ranked])))
        if (own & ~attacks).any():
            rows["false_positive_rate"] = _round(float(flagged[own & ~attacks].mean()))
        figures[name] = rows
    return figures


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
