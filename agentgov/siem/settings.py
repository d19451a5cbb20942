"""SIEM forwarding settings, read from `SIEM_*` environment variables (see docs/siem.md)."""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path

from agentgov.env import ConfigError, number

TRANSPORTS = ("syslog-udp", "syslog-tcp", "syslog-tls", "splunk-hec")
FORMATS = ("cef", "leef", "json")


_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")  # "_" too: container and compose service names


def _is_host(host: str) -> bool:
    """Whether `host` is an IP address (v4 or v6) or a host name (labels of letters, digits, underscores and inner
    hyphens, at most 253 characters)."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    name = host.removesuffix(".")
    return 0 < len(name) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in name.split("."))


@dataclasses.dataclass(frozen=True)
class SiemSettings:
    """Where and how events are forwarded. Forwarding is off while `transport` is empty.

    transport (`SIEM_TRANSPORT`): `syslog-udp`, `syslog-tcp`, `syslog-tls` or `splunk-hec`; unset: off.
    format (`SIEM_FORMAT`, default `cef`): `cef`, `leef` or `json` (the message body).
    host, port (`SIEM_HOST`, `SIEM_PORT`, default 514 for UDP/TCP and 6514 for TLS): the syslog receiver.
    url, token (`SIEM_URL`, `SIEM_TOKEN`): the HTTP Event Collector's base URL (e.g. `https://splunk:8088`)
        and its token (sent as `Authorization: Splunk <token>`).
    tls_ca (`SIEM_TLS_CA`): a PEM file of CA certificates to verify the receiver with (syslog-tls and an
        https HEC URL); unset: the system's trust store.
    batch_size (`SIEM_BATCH_SIZE`, 100): events per send. flush_interval (`SIEM_FLUSH_INTERVAL`, 2 s): how
        often the outbox is read. outbox_max (`SIEM_OUTBOX_MAX`, 100000): queued events at most (see the
        overflow policy in docs/siem.md). retry_max (`SIEM_RETRY_MAX_SECONDS`, 60): the longest pause between
        retries while the destination fails. timeout (`SIEM_TIMEOUT`, 10 s): connect and send time limit.
    facility (`SIEM_SYSLOG_FACILITY`, 13 "log audit"): the syslog facility code (0-23).
    """

    transport: str = ""
    format: str = "cef"
    host: str = ""
    port: int = 0
    url: str = ""
    token: str = ""
    tls_ca: Path | None = None
    batch_size: int = 100
    flush_interval: float = 2.0
    outbox_max: int = 100_000
    retry_max: float = 60.0
    timeout: float = 10.0
    facility: int = 13

    @property
    def enabled(self) -> bool:
        return bool(self.transport)

    @property
    def destination(self) -> str:
        """Where events go, without secrets (a URL's user info and query are dropped)."""
        if self.transport == "splunk-hec":
            from urllib.parse import urlsplit

            parts = urlsplit(self.url)
            return f"{parts.scheme}://{parts.hostname}{f':{parts.port}' if parts.port else ''}{parts.path}"
        return f"{self.host}:{self.port}" if self.transport else ""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SiemSettings:
        """Raises `ConfigError` naming the first bad or missing setting."""
        transport = env.get("SIEM_TRANSPORT", "").strip().lower()
        if transport in ("", "off", "none"):
            return cls()
        if transport not in TRANSPORTS:
            raise ConfigError(f"SIEM_TRANSPORT must be one of {', '.join(TRANSPORTS)} (or unset), not {transport!r}")
        fmt = env.get("SIEM_FORMAT", "cef").strip().lower()
        if fmt not in FORMATS:
            raise ConfigError(f"SIEM_FORMAT must be one of {', '.join(FORMATS)}, not {fmt!r}")
        host = env.get("SIEM_HOST", "").strip()
        if host.startswith("[") and host.endswith("]"):  # an IPv6 address as written in a URL
            host = host[1:-1]
        url = env.get("SIEM_URL", "").strip().rstrip("/")
        token = env.get("SIEM_TOKEN", "").strip()
        if transport == "splunk-hec":
            if not url.startswith(("https://", "http://")):
                raise ConfigError("SIEM_URL must be the collector's http:// or https:// URL for splunk-hec")
            if not token:
                raise ConfigError("SIEM_TOKEN is required for splunk-hec")
        elif not host:
            raise ConfigError(f"SIEM_HOST is required for {transport}")
        elif not _is_host(host):
            raise ConfigError(f"SIEM_HOST must be a host name or an IP address, not {host!r}")
        default_port = 6514 if transport == "syslog-tls" else 514
        port = int(number(env, "SIEM_PORT", default_port))
        if not 0 < port < 65536:
            raise ConfigError("SIEM_PORT must be from 1 to 65535")
        ca = env.get("SIEM_TLS_CA", "").strip()
        if ca and not Path(ca).is_file():
            raise ConfigError(f"SIEM_TLS_CA names no readable file: {ca}")
        facility = int(number(env, "SIEM_SYSLOG_FACILITY", 13, minimum=0))
        if facility > 23:
            raise ConfigError("SIEM_SYSLOG_FACILITY must be from 0 to 23")
        return cls(
            transport=transport,
            format=fmt,
            host=host,
            port=port,
            url=url,
            token=token,
            tls_ca=Path(ca) if ca else None,
            batch_size=max(1, min(int(number(env, "SIEM_BATCH_SIZE", 100)), 5000)),
            flush_interval=number(env, "SIEM_FLUSH_INTERVAL", 2.0),
            outbox_max=int(number(env, "SIEM_OUTBOX_MAX", 100_000)),
            retry_max=number(env, "SIEM_RETRY_MAX_SECONDS", 60.0),
            timeout=number(env, "SIEM_TIMEOUT", 10.0),
            facility=facility,
        )
