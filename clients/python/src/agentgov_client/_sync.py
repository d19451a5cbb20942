"""The blocking transport: drives flows with ``httpx.Client`` and ``time.sleep``.

`op`, `pager`, `streamer` and `downloader` turn an operation builder (`agentgov_client._ops`) into a method
of `Client` with the builder's parameters and docstring.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import time
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

import httpx

from agentgov_client._core import ClientCore
from agentgov_client._exports import ExportInfo, download_doc
from agentgov_client._flow import Flow, Invoke, Send, Sleep, Step
from agentgov_client._ops._common import DEFAULT_PAGE_SIZE, Pager
from agentgov_client.errors import error_from_transport
from agentgov_client.models import ExportFile, Page

P = ParamSpec("P")
T = TypeVar("T")


class SyncTransport(ClientCore):
    """Runs flows synchronously. Thread-safe as ``httpx.Client`` is; close it (or use ``with``) when done."""

    _http: httpx.Client

    def _make_http(self, given: Any) -> httpx.Client:
        if given is None:
            return httpx.Client(timeout=self.timeout, follow_redirects=False)
        if not isinstance(given, httpx.Client):
            raise TypeError("http_client must be an httpx.Client (use AsyncClient for an httpx.AsyncClient)")
        return given

    def close(self) -> None:
        """Close the connection pool (not an ``http_client`` given to the constructor)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- driving flows --------------------------------------------------------------------------------

    def _drive(self, flow: Flow[T]) -> T:
        """Run `flow` to its end: perform each step and send its result (or throw its error) back."""
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
                    value = self._perform(step)
                except Exception as exc:  # handed to the flow, which decides (a user function's error too)
                    error = exc
        finally:
            flow.close()

    def _perform(self, step: Step) -> Any:
        if isinstance(step, Send):
            call = step.call
            response = self._http.send(self._http.build_request(**self.request_args(call)), stream=call.stream)
            if call.stream and response.is_error:
                try:
                    response.read()
                finally:
                    response.close()
            return response
        if isinstance(step, Sleep):
            time.sleep(step.seconds)
            return None
        if isinstance(step, Invoke):
            result = step.fn()
            if inspect.isawaitable(result):
                if inspect.iscoroutine(result):
                    result.close()
                raise TypeError("Client.guarded runs plain functions; use AsyncClient for async ones")
            return result
        raise TypeError(f"unknown step {step!r}")

    def _iterate(self, pager: Pager[T]) -> Iterator[T]:
        offset = 0
        while True:
            page: Page[T] = self._drive(pager.fetch(offset, pager.page_size))
            yield from page.items
            following = page.next_offset
            if following is None:
                return
            offset = following

    def paginate(
        self, list_method: Callable[..., Page[T]], /, *args: Any, page_size: int = DEFAULT_PAGE_SIZE, **kwargs: Any
    ) -> Iterator[T]:
        """Every item of a list method (any ``list_*`` method of this client), page after page: calls
        ``list_method(*args, **kwargs, limit=page_size, offset=...)`` until the last page. Raises as it does."""
        offset = 0
        while True:
            page = list_method(*args, **kwargs, limit=page_size, offset=offset)
            yield from page.items
            following = page.next_offset
            if following is None:
                return
            offset = following


class ExportStream:
    """A streamed export, sent when entered (``with``) or first iterated; iterate its bytes once.

    `info` (after opening) has the `export_id`, `content_type` and `filename`. Closing it (leaving ``with``,
    or the end of iteration) releases the connection. Raises as the operation that made it, and
    `APIConnectionError` when the connection breaks while reading.
    """

    def __init__(self, transport: SyncTransport, flow: Flow[httpx.Response]) -> None:
        self._transport = transport
        self._flow: Flow[httpx.Response] | None = flow
        self._response: httpx.Response | None = None
        self.info: ExportInfo | None = None

    def open(self) -> Self:
        if self._flow is not None:
            flow, self._flow = self._flow, None
            self._response = self._transport._drive(flow)
            self.info = ExportInfo(self._response)
        return self

    def close(self) -> None:
        if self._response is not None:
            self._response.close()
        if self._flow is not None:
            self._flow.close()
            self._flow = None

    def __enter__(self) -> Self:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def iter_bytes(self, chunk_size: int | None = None) -> Iterator[bytes]:
        response = self.open()._response
        assert response is not None
        try:
            yield from response.iter_bytes(chunk_size)
        except httpx.TransportError as exc:
            raise error_from_transport(exc) from exc
        finally:
            self.close()

    def __iter__(self) -> Iterator[bytes]:
        return self.iter_bytes()

    def read(self) -> bytes:
        """The whole export in memory (prefer iterating, or `export_audit_to_file`, for large trails)."""
        return b"".join(self.iter_bytes())


def _write(stream: ExportStream, path: str | os.PathLike[str]) -> ExportFile:
    digest, size = hashlib.sha256(), 0
    with stream, open(path, "wb") as target:
        for chunk in stream.iter_bytes():
            target.write(chunk)
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


def op(build: Callable[Concatenate[ClientCore, P], Flow[T]]) -> Callable[Concatenate[SyncTransport, P], T]:
    """A blocking method running the flow `build` makes."""

    @functools.wraps(build)
    def method(self: SyncTransport, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self._drive(build(self, *args, **kwargs))

    return method


def pager(
    build: Callable[Concatenate[ClientCore, P], Pager[T]],
) -> Callable[Concatenate[SyncTransport, P], Iterator[T]]:
    """A method iterating over every item of a list, fetching each page when it is reached."""

    @functools.wraps(build)
    def method(self: SyncTransport, /, *args: P.args, **kwargs: P.kwargs) -> Iterator[T]:
        return self._iterate(build(self, *args, **kwargs))

    return method


def streamer(
    build: Callable[Concatenate[ClientCore, P], Flow[httpx.Response]],
) -> Callable[Concatenate[SyncTransport, P], ExportStream]:
    """A method returning the streamed answer as an `ExportStream`."""

    @functools.wraps(build)
    def method(self: SyncTransport, /, *args: P.args, **kwargs: P.kwargs) -> ExportStream:
        return ExportStream(self, build(self, *args, **kwargs))

    return method


def downloader(
    build: Callable[Concatenate[ClientCore, P], Flow[httpx.Response]],
) -> Callable[Concatenate[SyncTransport, str | os.PathLike[str], P], ExportFile]:
    """A method writing the streamed answer to the file at its first argument (returns an `ExportFile`)."""

    def method(self: SyncTransport, path: str | os.PathLike[str], /, *args: P.args, **kwargs: P.kwargs) -> ExportFile:
        return _write(ExportStream(self, build(self, *args, **kwargs)), path)

    method.__doc__ = download_doc(build)
    return method
