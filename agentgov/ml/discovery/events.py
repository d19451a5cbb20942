"""Unknown-agent events: their fields, normalisation to stable tokens, and the exact fingerprint."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlsplit

from agentgov.ml.discovery.params import (
    IDENTIFYING_METADATA_KEYS,
)

# ------------------------------------------------------------------------------------------------ events


@dataclass(frozen=True, slots=True)
class UnknownAgentEvent:
    """One observation of an unidentified agent. All fields but ``source`` are optional.

    ``endpoint`` is the URL (or ``host[:port]``) the agent called; ``client_address`` is an IP address,
    optionally with a port (``10.0.0.5:51234``, ``[2001:db8::1]:443``); ``observed_at`` is ISO 8601 and is
    not used for fingerprints or features.
    """

    source: str = ""
    host: str | None = None
    process: str | None = None
    user_agent: str | None = None
    endpoint: str | None = None
    model: str | None = None
    client_address: str | None = None
    observed_at: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> UnknownAgentEvent:
        """Build from a mapping with the same keys; unknown keys are ignored, empty strings become None."""

        def opt(key: str) -> str | None:
            value = data.get(key)
            return str(value) if value not in (None, "") else None

        meta = data.get("metadata")
        return cls(
            source=str(data.get("source") or ""),
            host=opt("host"),
            process=opt("process"),
            user_agent=opt("user_agent"),
            endpoint=opt("endpoint"),
            model=opt("model"),
            client_address=opt("client_address"),
            observed_at=opt("observed_at"),
            metadata=dict(meta) if isinstance(meta, Mapping) else {},
        )


EventLike = UnknownAgentEvent | Mapping[str, Any]


def _as_event(event: EventLike) -> UnknownAgentEvent:
    return event if isinstance(event, UnknownAgentEvent) else UnknownAgentEvent.from_mapping(event)


# --------------------------------------------------------------------------------------- normalisation

_WS_RE = re.compile(r"\s+")
_PID_RE = re.compile(r"\[\d+\]|\(pid[ =:]?\d+\)|\bpid[=:]\s*\d+|\bpid\s+\d+", re.IGNORECASE)
_EXE_VERSION_RE = re.compile(r"[\d.]+$")
_SCRIPT_RE = re.compile(r"\.(?:py|js|mjs|cjs|ts|sh|ps1|rb|pl|jar|php)$", re.IGNORECASE)
_UA_PRODUCT_RE = re.compile(r"([A-Za-z][A-Za-z0-9_.+\-]*)/v?(\d+)")
_UA_LOOSE_VERSION_RE = re.compile(r"\bv?(\d+)(?:\.\d+)+")
_ID_SEGMENT_RE = re.compile(
    r"^(?:\d+|[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
    r"|[a-z]+[_-](?=[a-z0-9]*\d)[a-z0-9]{6,})$",
    re.IGNORECASE,
)
_MODEL_DATE_RE = re.compile(r"(?:[-@](?:\d{4}-\d{2}-\d{2}|\d{8}|\d{4})|-latest|:latest|-preview)$")
_SECOND_LEVEL: Final = frozenset({"co", "com", "ac", "gov", "org", "net", "edu"})
_DEFAULT_PORTS: Final = frozenset({80, 443})


def _clean(value: str | None) -> str:
    return _WS_RE.sub(" ", value).strip() if value else ""


def _token(value: str) -> str:
    return _WS_RE.sub("_", value.strip().lower())


def _host_parts(host: str | None) -> tuple[str, str]:
    """(full lower-case host without port / trailing dot, first DNS label); IP literals give ('', '')."""
    h = _clean(host).lower().rstrip(".")
    if not h:
        return "", ""
    if h.startswith("[") or h.count(":") > 1:
        return "", ""  # IPv6 literal: not a host name
    h = h.split(":", 1)[0]
    try:
        ipaddress.ip_address(h)
    except ValueError:
        return h, h.split(".", 1)[0]
    return "", ""


def _process_parts(process: str | None) -> tuple[str, str]:
    """(executable, script) from a process string, dropping pids, paths, ``.exe`` and interpreter versions.

    ``"/usr/bin/python3.11 /opt/bots/summarizer.py --once [4411]"`` -> ``("python", "summarizer.py")``;
    ``"node (pid 77) dist/server.js"`` -> ``("node", "server.js")``; ``"java -jar agent-1.4.2.jar"`` ->
    ``("java", "agent.jar")``; ``"python -m my_agent.main"`` -> ``("python", "my_agent.main")``.
    """
    p = _clean(_PID_RE.sub(" ", _clean(process)))
    if not p:
        return "", ""
    args = p.split(" ")
    exe = re.split(r"[\\/]", args[0])[-1].lower()
    exe = re.sub(r"\.exe$", "", exe)
    exe = _EXE_VERSION_RE.sub("", exe) or exe
    script = ""
    for i, arg in enumerate(args[1:], start=1):
        if arg == "-m" and i + 1 < len(args):
            script = args[i + 1].lower()
            break
        if _SCRIPT_RE.search(arg):
            base = re.split(r"[\\/]", arg)[-1].lower()
            script = re.sub(r"[-_]v?\d+(?:\.\d+)+(?=\.)", "", base)  # agent-1.4.2.jar -> agent.jar
            break
    return exe, script


def _ua_products(user_agent: str | None) -> list[tuple[str, str]]:
    """Distinct (product, major version) pairs of a user agent, in order of appearance.

    ``product/1.2.3`` pairs are taken as they are. A UA without any (``OpenAI/Python 1.30.1``, ``Ruby``)
    becomes one product -- the text before the first version number -- with that number's major part
    (or ``''`` without a number).
    """
    ua = _clean(user_agent)
    if not ua:
        return []
    products = [(name.lower(), major) for name, major in _UA_PRODUCT_RE.findall(ua)]
    if products:
        return list(dict.fromkeys(products))
    version = _UA_LOOSE_VERSION_RE.search(ua)
    name = ua[: version.start()] if version else ua
    product = re.sub(r"[\s;()]+", "-", name.strip(" /;(").lower()).strip("-")
    if not product:
        return []
    return [(product, version.group(1) if version else "")]


def _endpoint_parts(endpoint: str | None) -> tuple[str, str]:
    """(host[:non-default port], path with id-like segments replaced by ``{id}``)."""
    e = _clean(endpoint)
    if not e:
        return "", ""
    parts = urlsplit(e if "://" in e else f"//{e}")
    host = (parts.hostname or "").lower().rstrip(".")
    try:
        port = parts.port
    except ValueError:
        port = None
    if port is not None and port not in _DEFAULT_PORTS:
        host = f"{host}:{port}"
    segments = [s for s in parts.path.split("/") if s]
    path = "/" + "/".join("{id}" if _ID_SEGMENT_RE.match(s) else s.lower() for s in segments)
    return host, path if segments else ""


def _site(host: str) -> str:
    bare = host.split(":", 1)[0]
    try:
        ipaddress.ip_address(bare)
    except ValueError:
        pass
    else:
        return ""
    labels = bare.split(".")
    if len(labels) < 2:
        return ""
    if len(labels) >= 3 and len(labels[-1]) == 2 and labels[-2] in _SECOND_LEVEL:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:])


def _model_parts(model: str | None) -> tuple[str, str]:
    m = _token(_clean(model))
    if not m:
        return "", ""
    m = m.rsplit("/", 1)[-1]  # "openai/gpt-4o" -> "gpt-4o"
    m = _MODEL_DATE_RE.sub("", m) or m
    family = re.split(r"[-_.:\d]", m, maxsplit=1)[0]
    return m, family


def _address_parts(address: str | None) -> tuple[str, str]:
    """(ip without port, network: /24 for IPv4, /64 for IPv6); ('', '') when unparseable."""
    a = _clean(address)
    if not a:
        return "", ""
    if a.startswith("["):
        a = a[1:].split("]", 1)[0]
    elif a.count(":") == 1:
        a = a.split(":", 1)[0]
    try:
        ip = ipaddress.ip_address(a)
    except ValueError:
        return "", ""
    prefix = 24 if ip.version == 4 else 64
    return str(ip), str(ipaddress.ip_network(f"{ip}/{prefix}", strict=False))


def _metadata_items(metadata: Mapping[str, Any]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for key in IDENTIFYING_METADATA_KEYS:
        value = metadata.get(key)
        if isinstance(value, str) and value.strip():
            v = _token(value)
            if "image" in key:
                v = re.sub(r"(@sha256:[0-9a-f]+|:[^/:]+)$", "", v)
            out.append((key, v))
    return out


# ------------------------------------------------------------------------------------------ fingerprint

FINGERPRINT_VERSION: Final = "fp1"


def fingerprint(event: EventLike) -> str:
    """Stable identifier of the agent behind ``event``: ``"fp1:" + 32 hex chars`` (128 bits of SHA-256).

    Hashed fields, after normalisation:

    * host -- lower-cased first DNS label (``Build-07.corp.example.com`` == ``build-07``); when absent,
      the client IP without port stands in for it;
    * process -- executable basename and script/module (pids, paths, ``.exe``, interpreter versions
      dropped);
    * user agent -- product names with *major* versions only (patch/minor upgrades keep the fingerprint);
    * endpoint -- host (and non-default port) only, not the path, so different calls to one API agree;
    * identifying metadata (:data:`IDENTIFYING_METADATA_KEYS`).

    Not hashed: ``source``, ``model`` (agents switch models), ``observed_at``, other metadata, the client
    IP when a host is known. A field that is missing in one event but present in another changes the
    fingerprint; reconciling those is the job of :func:`cluster_events` / :func:`merge_candidates`.
    Deterministic across processes and machines (no use of Python's ``hash``).
    """
    ev = _as_event(event)
    _, hostname = _host_parts(ev.host)
    ip, _ = _address_parts(ev.client_address)
    exe, script = _process_parts(ev.process)
    ephost, _ = _endpoint_parts(ev.endpoint)
    identity = {
        "host": hostname or (f"ip:{ip}" if ip else ""),
        "exe": exe,
        "script": script,
        "ua": sorted(f"{p}/{v}" for p, v in _ua_products(ev.user_agent)),
        "endpoint": ephost,
        "meta": sorted(f"{k}={v}" for k, v in _metadata_items(ev.metadata)),
    }
    digest = hashlib.sha256(json.dumps(identity, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    return f"{FINGERPRINT_VERSION}:{digest[:32]}"
