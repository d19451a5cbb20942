"""The vocabulary of jailbreaks in Chinese, Japanese and Korean text: a ranking signal that never blocks.

The classifier learnt from English and no dictionary glosses Chinese or Japanese (`gloss.py` says why; Korean is
glossed, and its terms are still counted), so outside the rules (`languages.py`) it ranks their attacks as it ranks
their ordinary text: near the bottom. A jailbreak in any language speaks of the same things, though: morality and
ethics, rules and limits, censorship and filters, being bound by none of them, refusing and warning, what is
illegal, a role to play, the model itself, orders set aside, "any question". `concepts(text)` names which of these
`CONCEPTS` a text in one of these languages speaks of (each written as the words of those languages, from no data
set); `ranking_score` turns their number into a score of `STEP` per concept from `MIN_CONCEPTS` on, at most
`MAX_SHARE` of the threshold. It ranks such a text above ordinary text and never blocks: an ordinary text about AI
ethics names several of them too. An operator's own text (a system prompt, full of rules and refusals) is not
scored this way (`GuardModel.assess`).

Pure functions, bounded work per text (one search per concept over its first `SAMPLE_CHARS` characters); never
raise for any string.
"""

from __future__ import annotations

import dataclasses
import re

from agentgov.ml.guard.gloss import CJK_LETTER, HANGUL_LETTER, LETTER, MIN_SCRIPT_SHARE

SAMPLE_CHARS = 20_000  # a text's first characters searched for the concepts
SCRIPT_SAMPLE_CHARS = 4_000  # and those its script is told from
MIN_CONCEPTS = 2  # concepts named, at least, for a score
STEP = 0.12  # the score per concept named
MAX_SHARE = 0.96  # of the threshold: the score never blocks

#: Each concept and its words in Chinese (simplified and traditional), Japanese and Korean.
CONCEPTS: dict[str, str] = {
    "ethics": "道德|伦理|倫理|道徳|윤리|도덕",
    "rules": "规则|規則|限制|约束|約束|准则|準則|制限|制約|ルール|ガイドライン|제한|제약|규칙|가이드라인|지침",
    "censorship": "审查|審查|过滤|過濾|検閲|フィルター|검열|필터",
    "unbound": (
        "不受|不再受|不需要遵守|不需要遵循|不需要去遵守|不必遵守|不用遵守|无需遵守|無需遵守|従う必要はない|守る必要はない"
        "|縛られない|따를 필요|지킬 필요|구애받지"
    ),
    "refusal": "拒绝|拒絕|警告|免责|免責|断らない|拒否|거절|거부|경고",
    "illegal": "非法|违法|違法|不法|黑客|駭客|ハッカー|해커|불법",
    "role": "扮演|假装|假裝|口吻|なりきり|ロールプレイ|演じ|역할극|연기해|척해|척하",
    "model": "ChatGPT|OpenAI|语言模型|語言模型|人工智能|言語モデル|인공지능|언어 ?모델",
    "override": "忽略|无视|無視|忘记|忘記|무시|잊어",
    "anything": "任何|无论|無論|いかなる|どんな質問|어떤 질문|무엇이든|모든 질문",
}
_CONCEPTS = tuple((name, re.compile(words, re.IGNORECASE)) for name, words in CONCEPTS.items())
_SCRIPTS = (  # the script that names the language, most specific first: kana is Japanese, Hangul Korean
    ("Korean", HANGUL_LETTER),
    ("Japanese", re.compile(r"[\u3040-\u30ff]")),
)


@dataclasses.dataclass(frozen=True)
class TermsFinding:
    """The concepts of jailbreaks a Chinese, Japanese or Korean text names, and the score they give it."""

    language: str
    concepts: tuple[str, ...]
    score: float

    def reason(self) -> str:
        return (
            f"terms: {self.language} text names {len(self.concepts)} concepts of jailbreaks "
            f"({', '.join(self.concepts)}), score {self.score:.2f}: ranks it, never blocks"
        )


def finding(text: str, threshold: float) -> TermsFinding | None:
    """The `TermsFinding` of a text when it is in Chinese, Japanese or Korean and names at least `MIN_CONCEPTS`
    concepts; None otherwise."""
    name = language(text)
    if name is None:
        return None
    named = concepts(text)
    score = ranking_score(named, threshold)
    return TermsFinding(name, named, score) if score > 0 else None


def language(text: str) -> str | None:
    """ "Chinese", "Japanese" or "Korean" when at least `gloss.MIN_SCRIPT_SHARE` of the letters of the text's first
    `SCRIPT_SAMPLE_CHARS` characters are in those scripts (Japanese when it holds kana, Korean when Hangul);
    None otherwise."""
    sample = text[:SCRIPT_SAMPLE_CHARS]
    if sample.isascii():
        return None
    cjk_letters = len(CJK_LETTER.findall(sample))  # most texts hold none: their letters are not counted
    if not cjk_letters:
        return None
    # a share of the characters is a share of the letters too: then the letters need no counting
    if cjk_letters < MIN_SCRIPT_SHARE * len(sample) and cjk_letters < MIN_SCRIPT_SHARE * len(LETTER.findall(sample)):
        return None
    for name, script in _SCRIPTS:
        if script.search(sample):
            return name
    return "Chinese"


def concepts(text: str) -> tuple[str, ...]:
    """The `CONCEPTS` a text names, in their order (whatever its language: `finding` asks `language` first)."""
    sample = text[:SAMPLE_CHARS]
    return tuple(name for name, words in _CONCEPTS if words.search(sample))


def ranking_score(named: tuple[str, ...], threshold: float) -> float:
    """The score of a text that names the concepts `named`: `STEP` per concept from `MIN_CONCEPTS` on, at most
    `MAX_SHARE` of `threshold`; 0 below `MIN_CONCEPTS`."""
    if len(named) < MIN_CONCEPTS:
        return 0.0
    return min(STEP * len(named), MAX_SHARE * threshold)
