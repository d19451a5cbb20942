"""Sending formatted events to the SIEM: syslog over UDP, TCP or TLS (RFC 5424; RFC 6587 octet counting on
streams), or Splunk's HTTP Event Collector.

`Transport.send(events)` returns once the destination took the whole batch, or raises `DeliveryError` with the
transport's error (nothing of the batch counts as delivered then; it is sent again). What "took" means:

- syslog-udp: the datagrams left this host. UDP has no acknowledgement; a receiver that is down loses them
  unless the host reports it (ICMP port unreachable surfaces as an error on the next send).
- syslog-tcp / syslog-tls: the bytes were written to an open connection. Before each batch the connection is
  checked (a receiver never writes to us, so readable means it closed) and reopened when the receiver went
  away, so a restart of the receiver loses nothing; syslog has no application acknowledgement, so only a
  receiver failing in the moment after a batch was written can lose it.
- splunk-hec: HTTP 200 with `{"code": 0}`; anything else is an error naming Splunk's code and text.

Every send is bounded by `SiemSettings.timeout`; cancellation closes the connection (the next send reopens it).
"""

from __future__ import annotations

import abc
import contextlib
import json
import socket
import ssl
from collections.abc import Sequence
from typing import Any

import httpx2
import trio

from agentgov.siem.events import SiemEvent
from agentgov.siem.formats import HOSTNAME, body, rfc5424
from agentgov.siem.settings import SiemSettings

MAX_DATAGRAM = 8192  # rsyslog's and most receivers' default maximum message size over UDP


class DeliveryError(Exception):
    """The destination did not take the batch; the message is the transport's error."""


class Transport(abc.ABC):
    def __init__(self, settings: SiemSettings) -> None:
        self.settings = settings

    @abc.abstractmethod
    async def send(self, events: Sequence[SiemEvent]) -> None:
        """Deliver `events` in order. Raises `DeliveryError`."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release connections (idempotent)."""


def _syslog_lines(settings: SiemSettings, events: Sequence[SiemEvent]) -> list[bytes]:
    return [rfc5424(e, body(e, settings.format), settings.facility).encode() for e in events]


class SyslogUdp(Transport):
    def __init__(self, settings: SiemSettings) -> None:
        super().__init__(settings)
        self._sock: trio.socket.SocketType | None = None

    async def send(self, events: Sequence[SiemEvent]) -> None:
        try:
            with trio.fail_after(self.settings.timeout):
                if self._sock is None:
                    infos = await trio.socket.getaddrinfo(
                        self.settings.host, self.settings.port, type=socket.SOCK_DGRAM
                    )
                    family, kind, proto, _, address = infos[0]
                    sock = trio.socket.socket(family, kind, proto)
                    await sock.connect(address)
                    self._sock = sock
                for line in _syslog_lines(self.settings, events):
                    await self._sock.send(line[:MAX_DATAGRAM])
        except (OSError, trio.TooSlowError) as exc:
            await self.aclose()
            raise DeliveryError(f"syslog-udp {self.settings.destination}: {_describe(exc)}") from None

    async def aclose(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


class SyslogStream(Transport):
    """syslog-tcp and syslog-tls: one long-lived connection, frames `<length> <message>` (RFC 6587 3.4.1)."""

    def __init__(self, settings: SiemSettings) -> None:
        super().__init__(settings)
        self._stream: trio.abc.Stream | None = None
        self._raw: trio.SocketStream | None = None

    def _tls_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.settings.tls_ca) if self.settings.tls_ca else None)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        return context

    async def _connect(self) -> trio.abc.Stream:
        raw = await trio.open_tcp_stream(self.settings.host, self.settings.port)
        self._raw = raw
        if self.settings.transport != "syslog-tls":
            return raw
        tls = trio.SSLStream(raw, self._tls_context(), server_hostname=self.settings.host)
        await tls.do_handshake()
        return tls

    def _peer_gone(self) -> bool:
        """True if the receiver closed or reset the connection (it never sends us anything)."""
        if self._raw is None:
            return True
        sock = self._raw.socket
        try:
            with socket.fromfd(sock.fileno(), sock.family, sock.type) as probe:  # a duplicate descriptor
                data = probe.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
        except BlockingIOError:
            return False
        except OSError:
            return True
        del data
        return True  # end of stream, or bytes (a TLS close_notify): the receiver is closing

    async def send(self, events: Sequence[SiemEvent]) -> None:
        frames = b"".join(b"%d %s" % (len(line), line) for line in _syslog_lines(self.settings, events))
        try:
            with trio.fail_after(self.settings.timeout):
                if self._stream is not None and self._peer_gone():
                    await self.aclose()
                if self._stream is None:
                    self._stream = await self._connect()
                await self._stream.send_all(frames)
        except (OSError, trio.TooSlowError, trio.BrokenResourceError, trio.ClosedResourceError, ssl.SSLError) as exc:
            await self.aclose()
            raise DeliveryError(f"{self.settings.transport} {self.settings.destination}: {_describe(exc)}") from None
        except BaseException:
            await self.aclose()
            raise

    async def aclose(self) -> None:
        stream, self._stream, self._raw = self._stream, None, None
        if stream is not None:
            quiet = contextlib.suppress(OSError, trio.BrokenResourceError, ssl.SSLError)
            with trio.CancelScope(shield=True), trio.move_on_after(1), quiet:
                await trio.aclose_forcefully(stream)


class SplunkHec(Transport):
    """POST `<url>/services/collector/event` with `Authorization: Splunk <token>`, the batch as concatenated
    JSON event objects (`cef` and `leef` bodies are sent as strings, `json` as objects)."""

    def __init__(self, settings: SiemSettings) -> None:
        super().__init__(settings)
        verify: Any = ssl.create_default_context(cafile=str(settings.tls_ca)) if settings.tls_ca else True
        self._client = httpx2.AsyncClient(timeout=settings.timeout, verify=verify)

    def _payload(self, events: Sequence[SiemEvent]) -> bytes:
        parts = []
        for event in events:
            text = body(event, self.settings.format)
            parts.append(
                json.dumps(
                    {
                        "time": _epoch(event.occurred_at),
                        "host": HOSTNAME,
                        "source": "agentgov",
                        "sourcetype": f"agentgov:{self.settings.format}",
                        "event": json.loads(text) if self.settings.format == "json" else text,
                        "fields": {"tenant_id": event.tenant_id, "event_name": event.name},
                    },
                    separators=(",", ":"),
                    ensure_ascii=False,
                )
            )
        return "\n".join(parts).encode()

    async def send(self, events: Sequence[SiemEvent]) -> None:
        url = f"{self.settings.url}/services/collector/event"
        try:
            with trio.fail_after(self.settings.timeout + 1):
                response = await self._client.post(
                    url,
                    content=self._payload(events),
                    headers={"Authorization": f"Splunk {self.settings.token}", "Content-Type": "application/json"},
                )
        except (httpx2.HTTPError, trio.TooSlowError, OSError) as exc:
            raise DeliveryError(f"splunk-hec {self.settings.destination}: {_describe(exc)}") from None
        try:
            answer = response.json()
        except ValueError:
            answer = {}
        code = answer.get("code") if isinstance(answer, dict) else None
        if response.status_code == 200 and code in (0, None):
            return
        text = answer.get("text") if isinstance(answer, dict) else None
        raise DeliveryError(
            f"splunk-hec {self.settings.destination}: HTTP {response.status_code}"
            + (f", code {code}" if code is not None else "")
            + (f": {text}" if text else "")
        )

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True), trio.move_on_after(1):
            await self._client.aclose()


def _epoch(iso: str) -> float:
    from datetime import datetime

    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp(), 3)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, trio.TooSlowError):
        return "timed out"
    text = str(exc) or type(exc).__name__
    cause = exc.__cause__  # trio's "all attempts to connect ... failed" keeps each attempt's error here
    attempts = cause.exceptions if isinstance(cause, BaseExceptionGroup) else (cause,)
    reasons = sorted({a.strerror for a in attempts if isinstance(a, OSError) and a.strerror})
    if reasons:
        text += f" ({'; '.join(reasons)})"
    return text if isinstance(exc, OSError | httpx2.HTTPError) else f"{type(exc).__name__}: {text}"


def open_transport(settings: SiemSettings) -> Transport:
    """The transport `settings.transport` names. Raises `ValueError` when forwarding is off."""
    if settings.transport == "syslog-udp":
        return SyslogUdp(settings)
    if settings.transport in ("syslog-tcp", "syslog-tls"):
        return SyslogStream(settings)
    if settings.transport == "splunk-hec":
        return SplunkHec(settings)
    raise ValueError("SIEM forwarding is not configured")
