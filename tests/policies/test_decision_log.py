"""The decision log: with DECISION_LOG=sync (the default) a check answers only once its audit entry is
committed; with async once it is queued. A decision that cannot be recorded is never answered as one."""

from __future__ import annotations

import dataclasses
import json

import pytest
import trio

from agentgov.config import ConfigError, Settings
from agentgov.storage.audit import AuditRepo
from tests.policies.helpers import API, PERMIT_ACTIVE, check, create_policy, flush_audit, key, register_agent


def use_mode(app, mode: str) -> None:
    svc = app.extensions["agentgov"]
    svc.settings = dataclasses.replace(svc.settings, decision_log=mode)


async def stored_decision_ids(app, tenant_id: str) -> set[str]:
    entries, _ = await AuditRepo(app.extensions["agentgov"].db).list_entries(tenant_id, limit=1000)
    return {json.loads(e.decision)["decision_id"] for e in entries if e.kind == "policy_check" and e.decision}


def test_decision_log_setting() -> None:
    assert Settings.from_env({}).decision_log == "sync"
    assert Settings.from_env({"DECISION_LOG": " Async "}).decision_log == "async"
    with pytest.raises(ConfigError, match="DECISION_LOG"):
        Settings.from_env({"DECISION_LOG": "later"})
    assert Settings.from_env({}).gil_switch_interval == 0.0005
    assert Settings.from_env({"GIL_SWITCH_INTERVAL": "0.005"}).gil_switch_interval == 0.005


async def test_sync_check_is_answered_after_its_entry_is_committed(app, client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE)
    body = await check(client, api_key, agent["id"], "files.read")
    # no flush: the answer itself means the entry is durable
    assert body["decision_id"] in await stored_decision_ids(app, tenant["id"])


async def test_concurrent_sync_checks_are_all_committed_when_answered(app, client, tenant) -> None:
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE)
    answered: list[str] = []

    async def one(n: int) -> None:
        answered.append((await check(client, api_key, agent["id"], "files.read", f"r:{n}"))["decision_id"])

    async with trio.open_nursery() as nursery:
        for n in range(30):
            nursery.start_soon(one, n)
    assert set(answered) <= await stored_decision_ids(app, tenant["id"])
    verify = await client.get(f"{API}/audit/verify", headers=key(api_key))
    assert (await verify.get_json())["intact"] is True


async def test_async_check_is_answered_once_queued(app, client, tenant) -> None:
    use_mode(app, "async")
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    body = await check(client, api_key, agent["id"], "files.read")
    # queued, not yet committed: the audit actor lingers for more told entries
    assert body["decision_id"] not in await stored_decision_ids(app, tenant["id"])
    await flush_audit(app.extensions["agentgov"], tenant["id"])
    assert body["decision_id"] in await stored_decision_ids(app, tenant["id"])


UNSTORABLE = {
    "lone surrogate in action": ('"action": "files.read\\ud800"', "action"),
    "lone surrogate in resource": ('"resource": "r:\\udc00"', "resource"),
    "lone surrogate in context": ('"context": {"note": "\\ud800"}', "input"),
    "NUL in action": ('"action": "files.read\\u0000x"', "action"),
}


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_unrecordable_checks_never_take_valid_decisions_down(app, client, tenant, mode) -> None:
    """Valid and unstorable checks at once: every valid decision answered is recorded, the chain verifies,
    the audit actor never restarts; in sync mode an unstorable check is answered with an error, not a
    decision (the HTTP edge may refuse it earlier, also with a 422)."""
    use_mode(app, mode)
    api_key = tenant["api_key"]
    agent = await register_agent(client, api_key)
    await create_policy(client, api_key, PERMIT_ACTIVE)
    valid: list[str] = []
    refused: list[tuple[int, dict, str]] = []

    async def post(n: int, poison: tuple[str, str] | None) -> None:
        fields = {"action": '"files.read"', "resource": f'"r:{n}"', "context": '{"n": 1}'}
        if poison is not None:
            name = poison[0].split(":", 1)[0].strip('"')
            fields[name] = poison[0].split(":", 1)[1].strip()
        raw = "{" + f'"agent_id": "{agent["id"]}", ' + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"
        response = await client.post(
            f"{API}/policies/check", data=raw, headers={**key(api_key), "Content-Type": "application/json"}
        )
        body = await response.get_json()
        if poison is None:
            assert response.status_code == 200, body
            valid.append(body["decision_id"])
        elif response.status_code != 200:
            refused.append((response.status_code, body, poison[1]))

    cases = list(UNSTORABLE.values())
    async with trio.open_nursery() as nursery:
        for n in range(40):
            nursery.start_soon(post, n, cases[n % len(cases)] if n % 4 == 1 else None)
    await flush_audit(app.extensions["agentgov"], tenant["id"])

    assert set(valid) <= await stored_decision_ids(app, tenant["id"]) and len(valid) == 30
    stats = next(s for s in app.extensions["agentgov"].actors.stats() if s["name"] == f"audit:{tenant['id']}")
    assert stats["restarts"] == 0
    if mode == "sync":
        assert len(refused) == 10  # each refused by the HTTP edge or by the audit actor
    else:
        assert len(refused) + stats["rejected"] == 10  # refused at the edge, or logged and counted below it
    status_body = await (await client.get(f"{API}/status", headers=key(api_key))).get_json()
    assert status_body["actors"]["audit_rejected"] >= stats["rejected"]  # process-wide count
    for status, body, field in refused:
        assert status == 422 and field in body["detail"], body
    verify = await client.get(f"{API}/audit/verify", headers=key(api_key))
    assert (await verify.get_json())["intact"] is True
