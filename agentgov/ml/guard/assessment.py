"""The guard's judgement of one text (`GuardModel.assess`) and how it explains itself.

`Assessment` holds the score, each category's score, whether it blocks, and what was found: rule hits, the
classifier's probability with each reading's and the words weighing most, a harmful request in a jailbreak
frame (`HarmFinding`), the obfuscation undone. `Assessment.reasons(threshold)` lists what was found, in that
order, as the strings `POST /guard/validate` answers. Plain immutable data; pure.
"""

from __future__ import annotations

import dataclasses

from agentgov.ml.guard.normalise import Finding
from agentgov.ml.guard.rules import RuleHit
from agentgov.ml.guard.terms import TermsFinding

_NOT_BLOCKING_OPERATOR = "; does not block the operator's own text (source system)"
_NOT_BLOCKING_PROGRAM = "; does not block a program that asks the model nothing"


@dataclasses.dataclass(frozen=True)
class Assessment:
    """The guard's judgement of one text."""

    score: float
    categories: dict[str, float]
    block: bool
    classifier_score: float
    top_category: str
    hits: tuple[RuleHit, ...]
    findings: tuple[Finding, ...]
    chunks: int
    telling_words: tuple[str, ...] = ()  # the words weighing most towards "attack" (when the classifier blocks)
    readings: tuple[tuple[str, float], ...] = ()  # each reading's own attack probability (when it blocks)
    harm: HarmFinding | None = None  # the harm reading's finding (formats 4 and 5), whatever its score
    operator: bool = False  # the operator's own text: the classifier alone does not block it
    program: bool = False  # a program that asks the model nothing (`code_text`): the classifier alone does not block it
    language: str | None = None  # the language a gloss read the text as (`gloss.gloss`), when one did
    terms: TermsFinding | None = None  # the jailbreak concepts a Chinese, Japanese or Korean text names (`terms`)

    def reasons(self, threshold: float) -> list[str]:
        """What was found, in this order: rule hits (rule and fragment, strongest first), the classifier when it
        alone is over the threshold (with each reading's own probability and the words weighing most), a harmful
        request in a jailbreak frame when its score is over the threshold (for an operator's text, each of these two
        says that it does not block it; for a program that asks the model nothing, the classifier says so), the
        language a gloss read the text as, the concepts of jailbreaks a Chinese, Japanese or Korean text names (they
        rank it and never block), and the obfuscation undone."""
        reasons = [hit.reason() for hit in self.hits]
        if self.classifier_score >= threshold:
            words = ", ".join(f'"{word}"' for word in self.telling_words)
            readings = ", ".join(f"{name} {value:.2f}" for name, value in self.readings)
            reasons.append(
                f"classifier: attack probability {self.classifier_score:.2f} (threshold {threshold:.2f}), "
                f"most likely {self.top_category} ({self.categories[self.top_category]:.2f})"
                + (f"; readings: {readings}" if readings else "")
                + (f"; words weighing most: {words}" if words else "")
                + (_NOT_BLOCKING_OPERATOR if self.operator else "")
                + (_NOT_BLOCKING_PROGRAM if self.program else "")
            )
        if self.harm is not None and self.harm.score >= threshold:
            reasons.append(self.harm.reason() + (_NOT_BLOCKING_OPERATOR if self.operator else ""))
        if self.language is not None:
            reasons.append(f"language: read word for word in English from {self.language}")
        if self.terms is not None:
            reasons.append(self.terms.reason())
        reasons.extend(f"obfuscation: {finding.detail}" for finding in self.findings)
        return reasons


@dataclasses.dataclass(frozen=True)
class HarmFinding:
    """What the harm reading found: the stretch of the text most likely a harmful request, and the jailbreak
    frame the text speaks (`None` when it speaks none: then the finding only ranks, it never blocks)."""

    score: float  # on the guard's scale (`HarmModel.score`), unrounded: compared with the threshold as is
    probability: float
    cut: float
    frame: str | None
    request: str  # the stretch most likely harmful, as a short fragment

    def reason(self) -> str:
        if self.frame is None:
            return (
                f'harmful request without a jailbreak frame: request "{self.request}" '
                f"(harm probability {self.probability:.2f}; does not block on its own)"
            )
        return (
            f'harmful request in a jailbreak frame (jailbreak): frame "{self.frame}", request "{self.request}" '
            f"(harm probability {self.probability:.2f}, blocks from {self.cut:.2f})"
        )
