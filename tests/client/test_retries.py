"""Retries against the real service: requests safe to repeat are retried while the service is down or busy
(503 with Retry-After), others are sent exactly once."""

from __future__ import annotations

import dataclasses
import time

import httpx
import pytest
import trio
from agentgov_client import (
    APIConnectionError,
    AsyncClient,
    PolicyDecision,
    RetryPolicy,
    ServiceUnavailableError,
)

from tests.client.conftest import CEDAR, CountingTransport, new_tenant, running_service, service_on_port
from tests.support.app import settings_for
from tests.support.ports import free_port

QUICK = RetryPolicy(max_retries=100, base=0.05, cap=0.2)
CHECK = ("POST", "/api/v1/policies/check")
LOG = ("POST", "/api/v1/audit/log")
REGISTER = ("POST", "/api/v1/agents/register")


async def test_safe_requests_retried_until_the_service_is_back_and_others_sent_once(sqlite_url: str) -> None:
    port = free_port()
    settings = settings_for(sqlite_url)
    async with service_on_port(settings, port) as first:
        tenant = await new_tenant(first.url)
        async with AsyncClient(first.url, api_key=tenant.api_key) as setup:
            agent = await setup.register_agent("billing-bot", "workflow")
            await setup.create_policy("rules", CEDAR)
    # The service is stopped: nothing listens on the port until it is started again below.
    counting = CountingTransport()
    http = httpx.AsyncClient(transport=counting)
    async with AsyncClient(f"http://127.0.0.1:{port}", api_key=tenant.api_key, retry=QUICK, http_client=http) as c:
        started = time.monotonic()
        with pytest.raises(APIConnectionError):
            await c.register_agent("never-registered", "tool")
        assert counting.sent[REGISTER] == 1 and time.monotonic() - started < 1.0  # not retried

        results: dict[str, object] = {}
        done = trio.Event()

        async def act() -> None:
            results["check"] = await c.check(agent.id, "read", "db://orders")
            results["entry"] = await c.log_action(agent.id, "read", "db://orders", output={"rows": 1})
            results["listed"] = await c.list_agents()
            done.set()

        async with trio.open_nursery() as nursery:
            nursery.start_soon(act)
            await trio.sleep(0.8)
            assert not done.is_set() and counting.sent[CHECK] > 1  # retrying while nothing listens
            async with service_on_port(settings, port):
                with trio.fail_after(15):
                    await done.wait()
    await http.aclose()
    decision = results["check"]
    assert isinstance(decision, PolicyDecision) and decision.allowed
    assert counting.answers[(*CHECK, 200)] == 1 and counting.answers[(*LOG, 201)] == 1
    assert [a.name for a in results["listed"].items] == ["billing-bot"]  # type: ignore[attr-defined]


async def test_busy_service_503_retried_after_retry_after_and_writes_not_retried(sqlite_url: str) -> None:
    settings = dataclasses.replace(settings_for(sqlite_url), mailbox_capacity=1)  # every actor overflows at once
    async with running_service(settings) as service:
        tenant = await new_tenant(service.url)
        counting = CountingTransport()
        http = httpx.AsyncClient(transport=counting)
        policy = RetryPolicy(max_retries=8, base=0.05, cap=0.5)
        async with AsyncClient(service.url, api_key=tenant.api_key, retry=policy, http_client=http) as client:
            agent = await client.register_agent("busy-bot", "tool")
            decisions: list[PolicyDecision] = []
            keys = [f"key-{i}" for i in range(8)]
            register_errors: list[ServiceUnavailableError] = []

            async def check(i: int) -> None:
                decisions.append(await client.check(agent.id, f"act-{i}", "db://orders"))

            async def log(key: str) -> None:
                await client.log_action(agent.id, "write", "db://orders", idempotency_key=key)

            async def register(i: int) -> None:
                try:
                    await client.register_agent(f"extra-{i}", "tool")
                except ServiceUnavailableError as exc:
                    register_errors.append(exc)

            async with trio.open_nursery() as nursery:
                for i, key in enumerate(keys):
                    nursery.start_soon(check, i)
                    nursery.start_soon(log, key)
                    nursery.start_soon(register, i)
            busy = counting.answers[(*CHECK, 503)] + counting.answers[(*LOG, 503)]
            assert busy > 0, "the service was expected to be busy"
            assert len(decisions) == 8  # every check and log got through in the end
            assert counting.answers[(*LOG, 201)] == 8
            logged = [e async for e in client.iter_audit(action="write")]
            assert len(logged) == 8  # each action stored once, whatever the retries
            assert counting.sent[REGISTER] == 9  # one request per register call: never retried
            for error in register_errors:
                assert error.status_code == 503 and error.retry_after == 1.0
        await http.aclose()


def test_retry_policy_backoff_full_jitter_and_retry_after() -> None:
    policy = RetryPolicy()
    assert (policy.max_retries, policy.base, policy.cap) == (3, 0.5, 8.0)
    for attempt in range(8):
        for _ in range(50):
            wait = policy.delay(attempt)
            assert wait is not None and 0.0 <= wait <= min(8.0, 0.5 * 2**attempt)
    honoured = policy.delay(0, retry_after=2.0)
    assert honoured is not None and 2.0 <= honoured <= 2.5
    assert policy.delay(0, retry_after=900.0) is None  # a long Retry-After is raised, not slept through
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)
