"""Live events: an async iterator over the service's WebSocket (`GET /api/v1/ws?token=<access token>`).

``async with client.events() as stream: async for event in stream: ...`` (asyncio or trio). The channel takes
a user's access token (``client.login(...)`` or ``access_token=``), not an API key; a subscriber receives only
its tenant's events its role may see. The first event is ``system.status``; ``names`` keeps only the events
named. The iteration ends when the service closes the channel (`EventStream.close_code` says why: 1001 the
service is stopping, 4001 the token expired, 4008 this subscriber fell behind and missed events); connect
again to resume. Needs the ``events`` extra (``pip install "agentgov-client[events]"``, for ``httpx-ws``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import quote

import httpx

from agentgov_client.errors import error_from_response

if TYPE_CHECKING:
    from agentgov_client.async_client import AsyncClient


@dataclasses.dataclass(frozen=True)
class Event:
    """One notification: `event` (e.g. ``policy.violated``), the `tenant_id`, the service's `timestamp` and
    the event's `data`; `raw` keeps the whole message."""

    event: str
    tenant_id: str
    timestamp: str
    data: dict[str, Any]
    raw: dict[str, Any]

    @classmethod
    def from_json(cls, message: dict[str, Any]) -> Event:
        return cls(
            event=str(message.get("event", "")),
            tenant_id=str(message.get("tenant_id", "")),
            timestamp=str(message.get("timestamp", "")),
            data=dict(message.get("data") or {}),
            raw=message,
        )


class EventStream:
    """An open WebSocket subscription; use as an async context manager and async iterator."""

    def __init__(self, client: AsyncClient, token: str | None, names: Iterable[str] | None) -> None:
        token = token or client.access_token
        if not token:
            raise ValueError("the event channel needs a user's access token: log in first or pass access_token=")
        self._url = f"{client.base_url}/api/v1/ws?token={quote(token)}"
        self._client = client
        self._names = frozenset(names) if names is not None else None
        self._context: Any = None
        self._ws: Any = None
        self.close_code: int | None = None
        self.close_reason: str | None = None

    async def __aenter__(self) -> Self:
        try:
            from httpx_ws import WebSocketUpgradeError, aconnect_ws
        except ImportError:
            raise ImportError('client.events() needs httpx-ws: pip install "agentgov-client[events]"') from None
        self._context = aconnect_ws(self._url, self._client._http)
        try:
            self._ws = await self._context.__aenter__()
        except (WebSocketUpgradeError, BaseExceptionGroup) as exc:  # refused before the upgrade: 401, 403 ...
            refused = _upgrade_error(exc, WebSocketUpgradeError)
            if refused is None:
                raise
            raise error_from_response(await _readable(refused.response)) from None
        return self

    async def __aexit__(self, *exc: object) -> None:
        context, self._context, self._ws = self._context, None, None
        if context is not None:
            await context.__aexit__(None, None, None)

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> Event:
        """The next event (of `names`, if given). Raises `StopAsyncIteration` once the service closed the
        channel (see `close_code`)."""
        from httpx_ws import WebSocketDisconnect

        if self._ws is None:
            raise RuntimeError("use `async with client.events() as stream:` before iterating")
        while True:
            try:
                text = await self._ws.receive_text()
            except WebSocketDisconnect as closed:
                self.close_code, self.close_reason = closed.code, closed.reason
                raise StopAsyncIteration from None
            event = Event.from_json(json.loads(text))
            if self._names is None or event.event in self._names:
                return event


async def _readable(response: httpx.Response) -> httpx.Response:
    """The refusal with its JSON body when it can still be read, else with its status and headers only."""
    try:
        await response.aread()
        return response
    except httpx.StreamError:
        return httpx.Response(response.status_code, headers=response.headers, request=response.request)


def _upgrade_error(exc: BaseException, kind: type[Exception]) -> Any:
    """`exc` itself or the first `kind` inside it (httpx-ws raises from a task group)."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _upgrade_error(inner, kind)
            if found is not None:
                return found
    return None
