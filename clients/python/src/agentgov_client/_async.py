"""The async transport: drives flows with ``httpx.AsyncClient`` and ``anyio.sleep`` (asyncio and trio).

`op`, `pager`, `streamer` and `downloader` turn an operation builder (`agentgov_client._ops`) into a
coroutine method of `AsyncClient` with the builder's parameters and docstring.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import anyio
import httpx

from agentgov_client._core import ClientCore
from agentgov_client._exports import ExportInfo, download_doc
from agentgov_client._flow import Flow, Invoke, Send, Sleep, Step
from agentgov_client._ops._common import DEFAULT_PAGE_SIZE, Pager
from agentgov_client.errors import error_from_transport
from agentgov_client.models import ExportFile, Page

P = ParamSpec("P")
T = TypeVar("T")


class AsyncTransport(ClientCore):
    """Runs flows asynchronously under any anyio backend (asyncio, trio). Close it (``aclose`` or
    ``async with``) when done."""

    _http: httpx.AsyncClient

    def _make_http(self, given: Any) -> httpx.AsyncClient:
        if given is None:
            return httpx.AsyncClient(timeout=self.timeout, follow_redirects=False)
        if not isinstance(given, httpx.AsyncClient):
            raise TypeError("http_client must be an httpx.AsyncClient (use Client for an httpx.Client)")
        return given

    async def aclose(self) -> None:
        """Close the connection pool (not an ``http_client`` given to the constructor)."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- driving flows --------------------------------------------------------------------------------

    async def _drive(self, flow: Flow[T]) -> T:
        """Run `flow` to its end: perform each step and send its result (or throw its error) back.
        Cancellation is not handed to the flow: it ends the flow where it is."""
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
                    value = await self._perform(step)
                except Exception as exc:  # handed to the flow, which decides (a user function's error too)
                    error = exc
        finally:
            flow.close()

    async def _perform(self, step: Step) -> Any:
        if isinstance(step, Send):
            call = step.call
            request = self._http.build_request(**self.request_args(call))
            response = await self._http.send(request, stream=call.stream)
            if call.stream and response.is_error:
                try:
                    await response.aread()
                finally:
                    await response.aclose()
            return response
        if isinstance(step, Sleep):
            await anyio.sleep(step.seconds)
            return None
        if isinstance(step, Invoke):
            result = step.fn()
            if inspect.isawaitable(result):
                result = await result
            return result
        raise TypeError(f"unknown step {step!r}")

    async def _iterate(self, pager: Pager[T]) -> AsyncIterator[T]:
        offset = 0
        while True:
            page: Page[T] = await self._drive(pager.fetch(offset, pager.page_size))
            for item in page.items:
                yield item
            following = page.next_offset
            if following is None:
                return
            offset = following

    async def paginate(
        self,
        list_method: Callable[..., Awaitable[Page[T]]],
        /,
        *args: Any,
        page_size: int = DEFAULT_PAGE_SIZE,
        **kwargs: Any,
    ) -> AsyncIterator[T]:
        """Every item of a list method (any ``list_*`` method of this client), page after page: awaits
        ``list_method(*args, **kwargs, limit=page_size, offset=...)`` until the last page. Raises as it does."""
        offset = 0
        while True:
            page = await list_method(*args, **kwargs, limit=page_size, offset=offset)
            for item in page.items:
                yield item
            following = page.next_offset
            if following is None:
                return
            offset = following


class AsyncExportStream:
    """A streamed export, sent when entered (``async with``) or first iterated; iterate its bytes once.

    `info` (after opening) has the `export_id`, `content_type` and `filename`. Closing it (leaving
    ``async with``, or the end of iteration) releases the connection. Raises as the operation that made it,
    and `APIConnectionError` when the connection breaks while reading.
    """

    def __init__(self, transport: AsyncTransport, flow: Flow[httpx.Response]) -> None:
        self._transport = transport
        self._flow: Flow[httpx.Response] | None = flow
        self._response: httpx.Response | None = None
        self.info: ExportInfo | None = None

    async def open(self) -> Self:
        if self._flow is not None:
            flow, self._flow = self._flow, None
            self._response = await self._transport._drive(flow)
            self.info = ExportInfo(self._response)
        return self

    async def aclose(self) -> None:
        if self._response is not None:
            await self._response.aclose()
        if self._flow is not None:
            self._flow.close()
            self._flow = None

    async def __aenter__(self) -> Self:
        return await self.open()

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def iter_bytes(self, chunk_size: int | None = None) -> AsyncIterator[bytes]:
        response = (await self.open())._response
        assert response is not None
        try:
            async for chunk in response.aiter_bytes(chunk_size):
                yield chunk
        except httpx.TransportError as exc:
            raise error_from_transport(exc) from exc
        finally:
            await self.aclose()

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.iter_bytes()

    async def read(self) -> bytes:
        """The whole export in memory (prefer iterating, or `export_audit_to_file`, for large trails)."""
        return b"".join([chunk async for chunk in self.iter_bytes()])


async def _write(stream: AsyncExportStream, path: str | os.PathLike[str]) -> ExportFile:
    digest, size = hashlib.sha256(), 0
    async with stream, await anyio.open_file(path, "wb") as target:
        async for chunk in stream.iter_bytes():
            await target.write(chunk)
            digest.update(chunk)
            size += len(chunk)
    info = stream.info
    return ExportFile(
        path=os.fspath(path),
        size=size,
        sha256=digest.hexdigest(),
        export_id=None if info is None else info.export_id,
        content_type=None if info is None else info.content_type,
    )


# -- method makers -------------------------------------------------------------------------------------


def op(
    build: Callable[Concatenate[ClientCore, P], Flow[T]],
) -> Callable[Concatenate[AsyncTransport, P], Coroutine[Any, Any, T]]:
    """A coroutine method running the flow `build` makes."""

    @functools.wraps(build)
    async def method(self: AsyncTransport, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self._drive(build(self, *args, **kwargs))

    return method


def pager(
    build: Callable[Concatenate[ClientCore, P], Pager[T]],
) -> Callable[Concatenate[AsyncTransport, P], AsyncIterator[T]]:
    """A method iterating (``async for``) over every item of a list, fetching each page when it is reached."""

    @functools.wraps(build)
    def method(self: AsyncTransport, /, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[T]:
        return self._iterate(build(self, *args, **kwargs))

    return method


def streamer(
    build: Callable[Concatenate[ClientCore, P], Flow[httpx.Response]],
) -> Callable[Concatenate[AsyncTransport, P], AsyncExportStream]:
    """A method returning the streamed answer as an `AsyncExportStream` (use ``async with``)."""

    @functools.wraps(build)
    def method(self: AsyncTransport, /, *args: P.args, **kwargs: P.kwargs) -> AsyncExportStream:
        return AsyncExportStream(self, build(self, *args, **kwargs))

    return method


def downloader(
    build: Callable[Concatenate[ClientCore, P], Flow[httpx.Response]],
) -> Callable[Concatenate[AsyncTransport, str | os.PathLike[str], P], Coroutine[Any, Any, ExportFile]]:
    """A coroutine method writing the streamed answer to the file at its first argument."""

    async def method(
        self: AsyncTransport, path: str | os.PathLike[str], /, *args: P.args, **kwargs: P.kwargs
    ) -> ExportFile:
        return await _write(AsyncExportStream(self, build(self, *args, **kwargs)), path)

    method.__doc__ = download_doc(build)
    return method
