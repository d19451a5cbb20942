"""Agent-type classifier (agentgov.ml.agent_type): data set, held-out quality, contract, serialisation."""

from __future__ import annotations

import io
import json
import pickle
import struct
import time
from collections import Counter

import pytest
import sklearn

from agentgov.ml import agent_type as at
from agentgov.ml.agent_type import (
    AGENT_TYPES,
    AgentExample,
    TypeClassifier,
    default_type_classifier,
    evaluate_held_out,
    load_training_examples,
    train_type_classifier,
)

# ------------------------------------------------------------------------------------------- data set


def test_training_set_is_large_balanced_and_deterministic() -> None:
    examples = load_training_examples()
    assert len(examples) >= 450
    counts = Counter(ex.label for ex in examples)
    assert set(counts) == set(AGENT_TYPES)
    assert min(counts.values()) >= 100
    hand = [ex for ex in examples if ex.group.startswith("hand:")]
    assert len(hand) == 240
    assert load_training_examples() == examples  # seeded expansion: identical on every load
    assert len({(ex.name.lower(), ex.description, ex.capabilities) for ex in examples}) == len(examples)


def test_training_set_is_not_trivially_keyword_separable() -> None:
    examples = load_training_examples()
    # agents without a description occur in every class, both hand-written and generated
    for label in AGENT_TYPES:
        empty = [ex for ex in examples if ex.label == label and not ex.description]
        assert any(ex.group.startswith("hand:") for ex in empty)
        assert any(ex.group.startswith("tpl:") for ex in empty)
    # vocabulary that "sounds like" one class shows up in others
    llm_words = ("llm", "gpt", "model", "claude")
    non_llm_mentioning_llm = [
        ex
        for ex in examples
        if ex.label != "llm" and any(w in f"{ex.description} {' '.join(ex.capabilities)}".lower() for w in llm_words)
    ]
    assert len({ex.label for ex in non_llm_mentioning_llm}) == 3
    assert len(non_llm_mentioning_llm) >= 30
    agent_named = Counter(ex.label for ex in examples if "agent" in ex.name.lower())
    assert len(agent_named) == 4


def test_name_and_capability_normalisation() -> None:
    assert at.name_tokens("SupportBot-v2") == ["support", "bot"]
    assert at.name_tokens("support_bot_7f3a") == ["support", "bot"]
    assert at.name_tokens("HR Helpdesk Assistant") == ["hr", "helpdesk", "assistant"]
    same = [at.capability_tokens([c]) for c in ("email.send", "send_email", "EmailSend", "email:send")]
    assert all(set(t) == {"email", "send", "email_send"} for t in same)


# --------------------------------------------------------------------------------------- held-out scores


def test_grouped_held_out_accuracy_beats_threshold_and_majority_baseline() -> None:
    report = evaluate_held_out(seed=0, grouped=True)
    assert report.grouped
    assert report.n_test >= 100
    assert report.accuracy >= 0.85, report
    assert report.baseline_accuracy <= 0.3
    assert report.accuracy >= report.baseline_accuracy + 0.5
    for label, score in report.per_class.items():
        assert score.recall >= 0.7, (label, score)
        assert score.f1 >= 0.75, (label, score)
    assert sum(map(sum, report.confusion)) == report.n_test


def test_held_out_accuracy_is_stable_across_seeds_and_split_kinds() -> None:
    grouped = [evaluate_held_out(seed=s, grouped=True).accuracy for s in range(3)]
    plain = [evaluate_held_out(seed=s, grouped=False).accuracy for s in range(3)]
    assert min(grouped) >= 0.85, grouped
    assert sum(plain) / len(plain) >= 0.88, plain


def test_generalises_to_unseen_agents() -> None:
    clf = default_type_classifier()
    unseen = [
        ("returns-helper", "Answers shoppers' questions about returns in the web chat.", ["chat"], "llm"),
        ("Gardening Q&A", "", ["chat", "rag"], "llm"),
        ("pdf-table-extractor", "Extracts tables from a PDF and returns CSV.", ["pdf.parse"], "tool"),
        ("fn_lookup_vat_rate", "", ["tax.lookup", "http.request"], "tool"),
        (
            "crm-nightly-sync",
            "Nightly job that extracts contacts, dedupes and loads them.",
            ["extract", "load"],
            "workflow",
        ),
        ("travel-approval-flow", "", ["approval", "notify", "erp.write"], "workflow"),
        (
            "kiln-temperature-agent",
            "Keeps kiln temperature within limits from sensor readings.",
            ["sensor.read", "actuator.write"],
            "custom",
        ),
        ("oil-futures-trader", "", ["orders.place", "risk.limits"], "custom"),
    ]
    for name, description, caps, expected in unseen:
        label, confidence = clf.predict(name, description, caps)
        assert label == expected, (name, label, confidence)


# ------------------------------------------------------------------------------------------ contract


def test_predict_contract() -> None:
    clf = default_type_classifier()
    label, confidence = clf.predict("support-copilot", "Answers questions.", ["chat"])
    assert label in AGENT_TYPES
    assert 0.25 <= confidence <= 1.0
    proba = clf.predict_proba("support-copilot", "Answers questions.", ["chat"])
    assert set(proba) == set(AGENT_TYPES)
    assert sum(proba.values()) == pytest.approx(1.0)
    assert proba[label] == pytest.approx(confidence)
    # no description: "" and None are the same input; empty capabilities are fine
    assert clf.predict("etl-orders", None, None) == clf.predict("etl-orders", "", [])
    empty_label, empty_conf = clf.predict("", "", [])
    assert empty_label in AGENT_TYPES
    assert empty_conf < 0.6  # nothing to go on: low confidence
    triples = [("a-scraper", "", ["scrape"]), ("ask-hr", "HR questions", ["chat"]), ("x", None, None)]
    assert clf.predict_many(triples) == [clf.predict(*t) for t in triples]
    assert clf.predict_many([]) == []


def test_default_classifier_is_cached_and_training_is_fast() -> None:
    assert default_type_classifier() is default_type_classifier()
    examples = load_training_examples()
    start = time.perf_counter()
    clf = train_type_classifier(examples)
    elapsed = time.perf_counter() - start
    assert elapsed < 1.5, elapsed  # ~0.07 s locally; generous for slow CI
    assert clf.n_train == len(examples)
    assert set(clf.labels) == set(AGENT_TYPES)


def test_training_is_deterministic_and_accepts_mappings() -> None:
    rows = [
        {
            "name": ex.name,
            "description": ex.description,
            "capabilities": list(ex.capabilities),
            "label": ex.label,
        }
        for ex in load_training_examples()
    ]
    a = train_type_classifier(rows)
    b = train_type_classifier(load_training_examples())
    probe = ("billing-bot", "Answers billing questions", ["chat"])
    assert a.predict_proba(*probe) == pytest.approx(b.predict_proba(*probe))


def test_training_input_validation() -> None:
    with pytest.raises(ValueError, match="at least two"):
        train_type_classifier([AgentExample("a", "", (), "llm"), AgentExample("b", "", (), "llm")])
    with pytest.raises(ValueError, match="unknown agent type"):
        AgentExample.from_mapping({"name": "x", "label": "robot"})


# ------------------------------------------------------------------------------------- serialisation


def test_round_trip_unsigned_and_signed() -> None:
    clf = default_type_classifier()
    probe = ("pdf-to-text", "Extracts text from PDF files.", ["pdf.parse"])
    restored = TypeClassifier.from_bytes(clf.to_bytes())
    assert restored.predict(*probe) == clf.predict(*probe)
    key = b"k" * 32
    signed = clf.to_bytes(key=key)
    assert TypeClassifier.from_bytes(signed, key=key).predict(*probe) == clf.predict(*probe)


def test_from_bytes_refuses_untrusted_or_mismatched_blobs() -> None:
    clf = default_type_classifier()
    key = b"k" * 32
    signed = clf.to_bytes(key=key)
    unsigned = clf.to_bytes()
    with pytest.raises(ValueError, match="signature"):
        TypeClassifier.from_bytes(signed, key=b"other-key")
    tampered = bytearray(signed)
    tampered[len(tampered) // 2] ^= 0x01
    with pytest.raises(ValueError, match="signature"):
        TypeClassifier.from_bytes(bytes(tampered), key=key)
    with pytest.raises(ValueError, match="key is required"):
        TypeClassifier.from_bytes(signed)
    with pytest.raises(ValueError, match="not signed"):
        TypeClassifier.from_bytes(unsigned, key=key)
    with pytest.raises(ValueError, match="not an agent-type"):
        TypeClassifier.from_bytes(b"\x80\x04K\x01.")  # a bare pickle
    with pytest.raises(ValueError, match="not an agent-type"):
        TypeClassifier.from_bytes(b"")


def _blob(payload: bytes, **header: object) -> bytes:
    head = {"format": 1, "sklearn": sklearn.__version__, "signed": False} | header
    raw = json.dumps(head).encode()
    return b"AGTYPE\x00" + struct.pack(">I", len(raw)) + raw + payload


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        import os

        return (os.system, ("echo pwned",))


def test_from_bytes_rejects_version_mismatch_and_foreign_classes() -> None:
    payload = pickle.dumps(default_type_classifier())
    with pytest.raises(ValueError, match=r"scikit-learn 0\.1"):
        TypeClassifier.from_bytes(_blob(payload, sklearn="0.1"))
    with pytest.raises(ValueError, match="format"):
        TypeClassifier.from_bytes(_blob(payload, format=99))
    # the restricted unpickler refuses anything outside numpy / scipy / sklearn / this module
    with pytest.raises(ValueError, match="refusing to load"):
        TypeClassifier.from_bytes(_blob(pickle.dumps(_Evil())))
    with pytest.raises(ValueError, match="does not contain"):
        TypeClassifier.from_bytes(_blob(pickle.dumps({"a": 1})))
    buf = io.BytesIO()
    pickle.dump([1, 2], buf)
    with pytest.raises(ValueError, match="does not contain"):
        TypeClassifier.from_bytes(_blob(buf.getvalue()))
