"""Waiting for state no trio event can signal (another process, a file, /proc)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable

import trio


async def wait_until(predicate: Callable[[], bool | Awaitable[bool]], *, within: float, every: float = 0.02) -> None:
    """Poll `predicate` (sync or async) until it is true. Raises `trio.TooSlowError` after `within` seconds."""
    with trio.fail_after(within):
        while True:
            result = predicate()
            if inspect.isawaitable(result):
                result = await result
            if result:
                return
            await trio.sleep(every)
