"""The rules' cheap necessary tests: stems looked for in one pass, and every precheck passed by every text its
rule matches."""

from __future__ import annotations

import pytest

from agentgov.ml.guard.base import base_examples
from agentgov.ml.guard.casefold import fold
from agentgov.ml.guard.normalise import normalise
from agentgov.ml.guard.patterns import RULES
from agentgov.ml.guard.stems import Stems
from tests.guard.test_rules import rule_test_texts


def test_stems_are_folded_and_a_space_stands_for_white_space() -> None:
    stems = Stems("DAN|ya no", "\u0418\u0413\u041d\u041e\u0420")  # Cyrillic capitals, folded like the text
    assert stems.stems == ("dan", "ya no", "\u0438\u0433\u043d\u043e\u0440")
    assert (
        stems.any_in("you are dan now")
        and stems.any_in("ya no est\u00e1s")
        and stems.any_in("\u0438\u0433\u043d\u043e\u0440\u0438\u0440\u0443\u0439")
    )
    assert not stems.any_in("yano") and not stems.any_in("") and not stems.any_in("d a n")


@pytest.mark.parametrize("parts", [(), ("",), ("a||b",), ("a|",)])
def test_an_empty_stem_is_refused(parts: tuple[str, ...]) -> None:
    with pytest.raises(ValueError, match="non-empty"):
        Stems(*parts)


def test_every_precheck_passes_every_text_its_rule_matches() -> None:
    """On the base data and the rules' texts, with their white space as tabs, line breaks and ideographic spaces
    too: where a rule's pattern matches, its precheck passes the folded text with its white space as one space."""
    texts = [normalise(example.text).text for example in base_examples()] + rule_test_texts()
    texts += [text.replace(" ", spacing) for text in rule_test_texts() for spacing in ("\t", " \n ", "\u3000")]
    checked = 0
    for rule in RULES:
        if rule.precheck is None:
            continue
        for text in texts:
            if rule.pattern.search(text) is not None:
                checked += 1
                assert rule.precheck(" ".join(fold(text).split())), (rule.name, text)
    assert checked > 100
