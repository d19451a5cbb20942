"""HTTP/1.1 over a raw trio TCP stream: exact bytes out, one parsed response or end-of-stream in.

Every read is bounded by `WAIT` seconds, so a stalled connection fails the test instead of hanging it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import urlsplit

import trio

WAIT = 5.0
"""Longest wait for an answer or for the server to close (a stall fails after this)."""


@dataclasses.dataclass
class RawResponse:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class RawConnection:
    """One client connection; `pending` holds bytes received past the last parsed response."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.pending = b""

    @classmethod
    async def open(cls, url: str) -> RawConnection:
        parts = urlsplit(url)
        return cls(await trio.open_tcp_stream(parts.hostname or "127.0.0.1", parts.port or 80))

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def _more(self) -> bytes:
        with trio.fail_after(WAIT):
            return await self.stream.receive_some(65536)

    async def response(self) -> RawResponse:
        """The next response; raises `EOFError` if the server closed first, `trio.TooSlowError` if it stalls."""
        while b"\r\n\r\n" not in self.pending:
            chunk = await self._more()
            if not chunk:
                raise EOFError(f"connection closed before a response (got {self.pending!r})")
            self.pending += chunk
        head, _, rest = self.pending.partition(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers: dict[str, str] = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = await self._more()
            if not chunk:
                raise EOFError("connection closed inside a response body")
            rest += chunk
        self.pending = rest[length:]
        return RawResponse(int(status_line.split()[1]), headers, rest[:length])

    async def closed_by_server(self) -> bool:
        """True when the server ends the stream (cleanly or by reset) within `WAIT` seconds, False if it
        sends more bytes instead; raises `trio.TooSlowError` when it neither closes nor sends."""
        if self.pending:
            return False
        try:
            return await self._more() == b""
        except trio.BrokenResourceError:
            return True

    async def aclose(self) -> None:
        await self.stream.aclose()


@asynccontextmanager
async def connect(url: str) -> AsyncIterator[RawConnection]:
    """A connection to the server at `url`, closed on exit."""
    conn = await RawConnection.open(url)
    try:
        yield conn
    finally:
        await conn.aclose()


def request_head(
    method: str,
    path: str,
    headers: dict[str, str] | None = None,
    *,
    version: str = "HTTP/1.1",
) -> bytes:
    lines = [f"{method} {path} {version}", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in (headers or {}).items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
