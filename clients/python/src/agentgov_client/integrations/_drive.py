"""Running a flow of client calls (a generator of `_Use` steps) with the sync `Client` in a thread, or with
the `AsyncClient` of the running event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Generator
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio

from agentgov_client.async_client import AsyncClient
from agentgov_client.client import Client

T = TypeVar("T")


# -- flows ----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Use:
    """A step of a flow: call the client's method `method` with these arguments."""

    method: str
    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)


def _use(method: str, *args: Any, **kwargs: Any) -> _Use:
    return _Use(method, args, kwargs)


_Flow = Generator[_Use, Any, T]


def _drive(client: Client, flow: _Flow[T]) -> T:
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                step = flow.throw(error) if error is not None else flow.send(value)
            except StopIteration as stop:
                result: T = stop.value
                return result
            value, error = None, None
            try:
                value = getattr(client, step.method)(*step.args, **step.kwargs)
            except Exception as exc:
                error = exc
    finally:
        flow.close()


async def _adrive(client: AsyncClient, flow: _Flow[T]) -> T:
    value: Any = None
    error: Exception | None = None
    try:
        while True:
            try:
                step = flow.throw(error) if error is not None else flow.send(value)
            except StopIteration as stop:
                result: T = stop.value
                return result
            value, error = None, None
            try:
                value = await getattr(client, step.method)(*step.args, **step.kwargs)
            except Exception as exc:
                error = exc
    finally:
        flow.close()


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
