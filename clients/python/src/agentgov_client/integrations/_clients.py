"""The clients a `ToolGate` uses: the settings that copy a client for the other mode, and one `AsyncClient` per
event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from agentgov_client.async_client import AsyncClient
from agentgov_client.client import Client

T = TypeVar("T")


def _settings_of(client: Client | AsyncClient) -> dict[str, Any]:
    """The constructor arguments of a client like `client` (its URL, credentials, timeout, retries and
    integration; headers given to its constructor are not readable)."""
    return {
        "base_url": client.base_url,
        "api_key": client.api_key,
        "access_token": client.access_token,
        "timeout": client.timeout,
        "retry": client.retry,
        "user_agent": client.user_agent,
        "integration": client.integration,
    }


class _NoLoop:
    """The key of the async state outside asyncio (trio)."""


_NO_LOOP = _NoLoop()


def _loop_key() -> object:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return _NO_LOOP


@dataclass
class _AsyncState:
    client: AsyncClient
    owned: bool
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    closer: AsyncGenerator[None, None] | None = None
