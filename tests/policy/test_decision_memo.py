"""Decisions remembered by a compiled policy set: equal inputs (including the evaluation hour) give the
same decision without evaluating again; anything that differs is evaluated; the memo is bounded."""

from __future__ import annotations

from datetime import UTC, datetime

from agentgov.policy import AgentAttributes, PolicyDocument, compile_policy_set
from agentgov.policy.engine import MEMO_MAX_INPUT_CHARS, MEMO_SIZE

BUSINESS_HOURS = """
@id("office-hours") @reason("Only during office hours")
permit (principal, action, resource) when { context.hour >= 9 && context.hour < 17 };
"""
NOON = datetime(2024, 6, 5, 12, 0, tzinfo=UTC)
NIGHT = datetime(2024, 6, 5, 23, 0, tzinfo=UTC)
BOT = AgentAttributes(id="a1", name="bot", type="llm", status="active")


def test_an_equal_request_gets_the_remembered_decision() -> None:
    policies = compile_policy_set([PolicyDocument("hours", BUSINESS_HOURS)])
    first = policies.evaluate(BOT, "files.read", "s3://b/k", {"environment": "prod"}, now=NOON)
    again = policies.evaluate(BOT, "files.read", "s3://b/k", {"environment": "prod"}, now=NOON)
    assert first.allowed and again is first


def test_anything_that_differs_is_evaluated() -> None:
    policies = compile_policy_set([PolicyDocument("hours", BUSINESS_HOURS)])
    noon = policies.evaluate(BOT, "files.read", "s3://b/k", {}, now=NOON)
    night = policies.evaluate(BOT, "files.read", "s3://b/k", {}, now=NIGHT)
    assert noon.allowed and not night.allowed  # the hour is part of what is remembered
    variants = [
        policies.evaluate(BOT, "files.write", "s3://b/k", {}, now=NOON),
        policies.evaluate(BOT, "files.read", "s3://b/other", {}, now=NOON),
        policies.evaluate(BOT, "files.read", "s3://b/k", {"environment": "prod"}, now=NOON),
        policies.evaluate(
            AgentAttributes(id="a1", name="bot", type="llm", status="error"), "files.read", "s3://b/k", {}, now=NOON
        ),
    ]
    assert all(v is not noon for v in variants)
    # undeclared context keys never reach Cedar, so they do not make a request different
    assert policies.evaluate(BOT, "files.read", "s3://b/k", {"ticket": "T-1"}, now=NOON) is noon


def test_a_new_policy_set_starts_empty() -> None:
    docs = [PolicyDocument("hours", BUSINESS_HOURS)]
    first = compile_policy_set(docs).evaluate(BOT, "files.read", "r", {}, now=NOON)
    assert compile_policy_set(docs).evaluate(BOT, "files.read", "r", {}, now=NOON) is not first


def test_the_memo_is_bounded_least_recently_used_first() -> None:
    policies = compile_policy_set([PolicyDocument("hours", BUSINESS_HOURS)])
    oldest = policies.evaluate(BOT, "files.read", "r-0", {}, now=NOON)
    kept = policies.evaluate(BOT, "files.read", "r-1", {}, now=NOON)
    for n in range(2, MEMO_SIZE + 1):
        if n == MEMO_SIZE // 2:
            assert policies.evaluate(BOT, "files.read", "r-1", {}, now=NOON) is kept  # used again: kept
        policies.evaluate(BOT, "files.read", f"r-{n}", {}, now=NOON)
    assert policies.evaluate(BOT, "files.read", "r-1", {}, now=NOON) is kept
    assert policies.evaluate(BOT, "files.read", "r-0", {}, now=NOON) is not oldest


def test_large_requests_are_not_remembered() -> None:
    policies = compile_policy_set([PolicyDocument("hours", BUSINESS_HOURS)])
    big = "r" * MEMO_MAX_INPUT_CHARS
    first = policies.evaluate(BOT, "files.read", big, {}, now=NOON)
    assert first.allowed and policies.evaluate(BOT, "files.read", big, {}, now=NOON) is not first
