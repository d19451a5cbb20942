"""The real service with SIEM forwarding configured, and a scenario that produces each kind of event."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from quart_trio import QuartTrio

from agentgov.server import bootstrap_superadmin
from agentgov.siem.settings import SiemSettings
from tests.policies.helpers import FORBID_DROP, PERMIT_ACTIVE, check, create_policy, register_agent
from tests.support.app import ADMIN_KEY, app_for, settings_for
from tests.support.ports import free_port

API = "/api/v1"
ADMIN = {"X-Admin-Key": ADMIN_KEY}
ROOT_EMAIL = "root@platform.example"
PASSWORD = "A-long-enough-passphrase-42"
FAST = {"flush_interval": 0.05, "retry_max": 0.3, "timeout": 3.0}


@asynccontextmanager
async def siem_app(database_url: str, **siem: Any) -> AsyncIterator[QuartTrio]:
    """The service on `database_url` forwarding with `siem` settings (quick flush and retries by default)."""
    settings = dataclasses.replace(
        settings_for(database_url),
        siem=SiemSettings(**{**FAST, **siem}) if siem else SiemSettings(),
        superadmin_email=ROOT_EMAIL,
        superadmin_password=PASSWORD,
    )
    async with app_for(settings) as app:
        await bootstrap_superadmin(app.extensions["agentgov"])
        yield app


async def root_token(client: Any) -> dict[str, str]:
    response = await client.post(f"{API}/auth/login", json={"email": ROOT_EMAIL, "password": PASSWORD})
    assert response.status_code == 200, await response.get_json()
    return {"Authorization": f"Bearer {(await response.get_json())['access_token']}"}


def closed_port() -> int:
    """A loopback TCP port nothing listens on (connecting is refused)."""
    return free_port()


async def drained(client: Any) -> bool:
    """Nothing is waiting for the SIEM (a predicate for `wait_until`)."""
    return (await status(client))["outbox_depth"] == 0


async def status(client: Any) -> dict[str, Any]:
    response = await client.get(f"{API}/siem/status", headers=ADMIN)
    assert response.status_code == 200, await response.get_json()
    return await response.get_json()


@dataclasses.dataclass
class Produced:
    tenant_id: str
    expected: dict[str, str]  # X-Request-ID sent -> the event name it must produce


async def produce(client: Any, tag: str) -> Produced:
    """A tenant, then a logged action, an allowed and a denied check, a failed login, a user change; each
    request carries an `X-Request-ID` derived from `tag`."""
    created = await client.post(f"{API}/tenants", json={"name": f"Acme {tag}"}, headers=ADMIN)
    tenant = await created.get_json()
    key = tenant["api_key"]
    await create_policy(client, key, PERMIT_ACTIVE, name="permit")
    await create_policy(client, key, FORBID_DROP, name="forbid")
    agent = await register_agent(client, key)
    expected = {f"{tag}-log": "audit.action", f"{tag}-db.read": "policy.allowed"}
    expected[f"{tag}-sql.drop_table"] = "policy.denied"
    logged = await client.post(
        f"{API}/audit/log",
        json={"agent_id": agent["id"], "action": "db.read", "resource": "db://orders"},
        headers={"X-API-Key": key, "X-Request-ID": f"{tag}-log"},
    )
    assert logged.status_code == 201
    for action in ("db.read", "sql.drop_table"):
        response = await client.post(
            f"{API}/policies/check",
            json={"agent_id": agent["id"], "action": action, "resource": "db://orders", "context": {}},
            headers={"X-API-Key": key, "X-Request-ID": f"{tag}-{action}"},
        )
        assert response.status_code == 200
    await check(client, key, agent["id"], "db.read")  # one more, without a request id of ours
    failed = await client.post(f"{API}/auth/login", json={"email": "nobody@example.com", "password": "wrong-password"})
    assert failed.status_code == 401
    return Produced(tenant["id"], expected)


_SYSLOG = re.compile(r'<(\d+)>1 (\S+) (\S+) agentgov (\d+) (\S+) \[agentgov@32473((?: \w+="(?:[^"\\]|\\.)*")*)\] (.*)')


def parse_syslog(line: str) -> dict[str, str]:
    """An RFC 5424 line as the forwarder writes it: pri, timestamp, msgid, the structured-data params, body."""
    match = _SYSLOG.fullmatch(line)
    assert match, f"not an RFC 5424 line of ours: {line!r}"
    params = {k: re.sub(r"\\(.)", r"\1", v) for k, v in re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', match[6])}
    return {"pri": match[1], "timestamp": match[2], "msgid": match[5], "body": match[7], **params}
