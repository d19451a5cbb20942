"""Behind `TRUSTED_PROXY_HOPS` reverse proxies the client's address, scheme and host come from the
`X-Forwarded-*` values those proxies appended, and nothing a client adds in front of them is trusted.
Without the setting the headers are ignored."""

from __future__ import annotations

from typing import Any

import pytest

from agentgov.config import ConfigError, Settings
from agentgov.http.forwarded import TrustedProxies, trusted_value
from agentgov.security.throttle import ADDRESS_LIMIT
from tests.support.app import live_server, settings_for


def test_trusted_value_takes_the_nth_value_from_the_right() -> None:
    headers = [(b"X-Forwarded-For", b"6.6.6.6, 10.0.0.7"), (b"x-forwarded-for", b"10.0.0.8")]
    assert trusted_value(headers, b"x-forwarded-for", 1) == "10.0.0.8"
    assert trusted_value(headers, b"x-forwarded-for", 2) == "10.0.0.7"
    assert trusted_value(headers, b"x-forwarded-for", 4) is None
    assert trusted_value([], b"x-forwarded-for", 1) is None


@pytest.mark.parametrize("raw", ["-1", "x", "11", "1.5"])
def test_the_setting_must_be_a_small_whole_number(raw: str) -> None:
    with pytest.raises(ConfigError, match="TRUSTED_PROXY_HOPS"):
        Settings.from_env({"TRUSTED_PROXY_HOPS": raw})
    assert Settings.from_env({"TRUSTED_PROXY_HOPS": "2"}).trusted_proxy_hops == 2
    assert Settings.from_env({}).trusted_proxy_hops == 0


async def test_scheme_host_and_client_come_from_the_proxy() -> None:
    seen: list[dict[str, Any]] = []

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.append(scope)

    original = {
        "type": "websocket",
        "scheme": "ws",
        "client": ("127.0.0.1", 5555),
        "headers": [
            (b"host", b"internal:8000"),
            (b"x-forwarded-for", b"6.6.6.6, 203.0.113.9"),
            (b"x-forwarded-proto", b"https"),
            (b"x-forwarded-host", b"agentgov.example.com"),
        ],
    }
    await TrustedProxies(app, 1)(original, None, None)
    (scope,) = seen
    assert scope["client"] == ("203.0.113.9", 0)
    assert scope["scheme"] == "wss"
    assert [v for k, v in scope["headers"] if k == b"host"] == [b"agentgov.example.com"]
    assert original["client"] == ("127.0.0.1", 5555)  # the server's scope is not changed

    seen.clear()
    await TrustedProxies(app, 1)(
        {"type": "http", "scheme": "http", "headers": [(b"x-forwarded-proto", b"gopher")]}, None, None
    )
    assert seen[0]["scheme"] == "http"  # not a scheme of this protocol: ignored


async def _fail_logins(client, addresses: list[str]) -> list[int]:
    statuses = []
    for n, address in enumerate(addresses):
        response = await client.post(
            "/api/v1/auth/login",
            json={"email": f"nobody{n}@example.com", "password": "wrong password here"},
            headers={"X-Forwarded-For": address},
        )
        statuses.append(response.status_code)
    return statuses


async def test_login_throttle_counts_each_forwarded_client_separately(sqlite_url: str) -> None:
    async with live_server(settings_for(sqlite_url, trusted_proxy_hops=1)) as (client, _):
        assert await _fail_logins(client, ["203.0.113.1"] * ADDRESS_LIMIT) == [401] * ADDRESS_LIMIT
        assert await _fail_logins(client, ["203.0.113.1", "203.0.113.2"]) == [429, 401]
        # a client cannot escape by adding its own value in front of the proxy's
        assert await _fail_logins(client, ["198.51.100.7, 203.0.113.1"]) == [429]


async def test_without_trusted_proxies_the_header_is_ignored(sqlite_url: str) -> None:
    async with live_server(settings_for(sqlite_url)) as (client, _):
        addresses = [f"203.0.113.{n}" for n in range(ADDRESS_LIMIT)]
        assert await _fail_logins(client, addresses) == [401] * ADDRESS_LIMIT
        assert await _fail_logins(client, ["192.0.2.50"]) == [429]
