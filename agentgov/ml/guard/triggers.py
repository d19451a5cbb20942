"""What announces each of the guard's rules: the trigger strings of which every match holds one, and the cheaper
tests run for the rules no string can announce (`rule.Rule.triggers` and `precheck`). Pure; never raises.

A trigger is lower-case and read in folded text (`casefold.fold`) with its runs of white space written as one
space. `tests/guard/test_rules.py` holds the shortcut equal to running every pattern on every text.
"""

from __future__ import annotations

import operator

from agentgov.ml.guard import languages

FLOOD_TIMES = 25  # copies of a unit of up to FLOOD_UNIT tokens that make a `repeated_token_flood`
FLOOD_UNIT = 4


def repeats_a_unit(text: str) -> bool:
    """Whether, among the whitespace-separated words of `text`, some run of `FLOOD_TIMES` copies of a unit of at
    most `FLOOD_UNIT` words could lie: for some k, words equal to the word k places on for
    (`FLOOD_TIMES` - 1) * k positions in a row. Every `repeated_token_flood` match passes; the test runs at C
    speed (about a tenth of the pattern's cost on a text that has no flood)."""
    words = text.split()
    for k in range(1, FLOOD_UNIT + 1):
        need = (FLOOD_TIMES - 1) * k
        if len(words) - k < need:
            return False
        if b"\x01" * need in bytes(map(operator.eq, words, words[k:])):
            return True
    return False


def names_a_mode(words: str) -> bool:
    """A necessary test for `privileged_mode`, on folded text."""
    return "mode" in words


def _any_of(triggers: str) -> tuple[str, ...]:
    return tuple(triggers.split("|"))


TRIGGERS: dict[str, tuple[str, ...]] = {
    "ignore_previous_instructions": _any_of(
        "ignore|disregard|forget|override|bypass|pay no attention to|discard|set aside|abandon|drop|regardless|"
        "notwithstanding|in spite|despite"
    ),
    "spoofed_system_message": _any_of("system|im_start"),
    "ignore_the_above": _any_of("ignore|disregard|forget"),
    "role_override": _any_of("you are no longer|your new"),
    "new_instructions": _any_of("instruction|task|directive|order"),
    "instead_do": _any_of("instead|rather"),
    "script_injection": _any_of("script|onerror|onload"),
    "do_anything_now": _any_of("do anything now|dan mode|jailbr|developer mode|ethical|moral|content|dan"),
    "privileged_mode": _any_of("mode"),
    "repeat_forever": _any_of("repeat"),
    "ai_reader_address": _any_of("you|ai|llm|gpt|bot|language model|assistant|agent|automated|attn"),
    "unrestricted_persona": _any_of(
        "pretend|act as|act like|behave as|behave like|operate as|function as|roleplay as|role-play as|you are|you're|"
        "if you had|if you have|if you were|if you weren't|imagine|assume|without|simulat|emulat|portray|impersonat|"
        "the role of|the part of"
    ),
    "reveal_system_prompt": _any_of(
        "reveal|print|show|repeat|output|display|leak|tell me|give me|write out|spell out|spells out|translate|summar|"
        "paraphrase|rephrase|rewrite|what|complete|share"
    ),
    "reveal_instructions_received": _any_of(
        "so far|prior to|in your prompt|in your instructions|your directives|your guidelines|your configuration|"
        "been given|were given"  # "'ve been given" holds "been given"
    ),
    "describe_own_instructions": _any_of(
        "core|initial|original|underlying|hidden|internal|foundational|guiding|fundamental|secret|confidential|"
        "built-in|preset|pre-set|inner|guide|govern|shape|define|control|dictate|direct|determin|received|operate|"
        "bound|abide|adhere|obey|follow|programmed|configured|instructed|told|given|provided|assigned|creator|"
        "developer|maker|designer|operator|programmer|setup|starting|operating"
    ),
    "reveal_given_secret": _any_of(
        "print|tell|reveal|give|say|output|show|what|spell|repeat|share|list|dump|disclose|leak|write|display|first|"
        "last|st |nd |rd |th |recite|quote|protecting|guarding|keeping|hiding|holding"
    ),
    "exfiltration_link": _any_of("![|http|www."),
    "send_secrets": _any_of("send|forward|email|post|share|reveal|include"),
    "disguised_secret": _any_of("spell|write|say|give|tell|print|encode|reverse|output|show"),
    "disable_safety": _any_of(
        "disable|turn off|switch off|deactivate|bypass|remove|override|circumvent|suspend|lift|ignore|disregard|forget"
    ),
    "fake_delimiter": _any_of("end"),
    "fake_completion": _any_of("complete|done|finished"),
    "reveal_conversation": _any_of("conversation|dialogue|dialog|chat|discussion|exchange|session|the command"),
    "task_detour": _any_of("in order to"),
    "self_granted_privilege": _any_of("grant yourself|you have|you had|you possess"),
    "probe_configuration": _any_of(
        "how you|what|summar|convert|format|encode|serial|express|dump|rewrite|restate|render|quote|recite"
    ),
    "spoofed_turn": _any_of("human:|user:|human :|user :"),
    "repeated_token_flood": tuple(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"),  # every ASCII character `\s` matches
    **languages.TRIGGERS,
}
