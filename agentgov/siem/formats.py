"""Message bodies for the SIEM (`cef`, `leef`, `json`) and the RFC 5424 syslog envelope around them.

CEF (ArcSight Common Event Format, version 0) and LEEF (IBM QRadar Log Event Extended Format, version 2.0
with a tab delimiter) carry the event's fields as key=value pairs, escaped as each format requires; `json`
is the event object itself. Every body fits on one line (line breaks in values are escaped), so a receiver
that splits on newlines never cuts an event in two.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime
from typing import Any

from agentgov import __version__
from agentgov.siem.events import SiemEvent

VENDOR = "agentgov"
PRODUCT = "agentgov"
# The private enterprise number RFC 5612 reserves for documentation examples: a structured-data id needs one.
SD_ID = "agentgov@32473"
MAX_CUSTOM = 4000  # CEF's cs fields hold up to 4,000 characters


def _epoch_ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def _details_json(event: SiemEvent) -> str:
    text = json.dumps(event.details, separators=(",", ":"), ensure_ascii=False, sort_keys=True, default=str)
    return text if len(text) <= MAX_CUSTOM else text[: MAX_CUSTOM - 1] + "…"


# ---- CEF -------------------------------------------------------------------------------------------------


def _cef_header(value: str) -> str:
    return value.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def _cef_value(value: Any) -> str:
    text = str(value)
    return (
        text.replace("\\", "\\\\").replace("=", "\\=").replace("\r\n", "\\n").replace("\n", "\\n").replace("\r", "\\r")
    )


def cef(event: SiemEvent) -> str:
    """`CEF:0|agentgov|agentgov|<version>|<name>|<summary>|<severity>|<extension>`."""
    custom = (  # fixed slots, so a SIEM's field mapping holds for every event
        ("tenantId", event.tenant_id),
        ("requestId", event.request_id),
        ("agentId", event.agent_id),
        ("resource", event.resource),
        ("details", _details_json(event) if event.details else None),
    )
    pairs: list[tuple[str, Any]] = [("rt", _epoch_ms(event.occurred_at)), ("externalId", event.event_id)]
    for slot, (label, value) in enumerate(custom, start=1):
        if value not in (None, ""):
            pairs += [(f"cs{slot}Label", label), (f"cs{slot}", value)]
    pairs += [("suser", event.actor), ("act", event.action), ("outcome", event.outcome), ("msg", event.summary)]
    extension = " ".join(f"{key}={_cef_value(value)}" for key, value in pairs if value not in (None, ""))
    header = "|".join(
        _cef_header(part)
        for part in ("CEF:0", VENDOR, PRODUCT, __version__, event.name, event.summary, str(event.severity))
    )
    return f"{header}|{extension}"


# ---- LEEF ------------------------------------------------------------------------------------------------


def _leef_value(value: Any) -> str:
    return str(value).replace("\t", " ").replace("\r", "\\r").replace("\n", "\\n")


def leef(event: SiemEvent) -> str:
    """`LEEF:2.0|agentgov|agentgov|<version>|<name>|x09|<tab-separated key=value>`; `devTime` is in epoch
    milliseconds (LEEF's default without `devTimeFormat`), `sev` is 1-10."""
    pairs: list[tuple[str, Any]] = [
        ("devTime", _epoch_ms(event.occurred_at)),
        ("sev", max(1, event.severity)),
        ("cat", event.name.split(".", 1)[0]),
        ("eventId", event.event_id),
        ("tenantId", event.tenant_id),
        ("requestId", event.request_id),
        ("usrName", event.actor),
        ("agentId", event.agent_id),
        ("action", event.action),
        ("resource", event.resource),
        ("outcome", event.outcome),
        ("msg", event.summary),
        ("details", _details_json(event) if event.details else None),
    ]
    attributes = "\t".join(f"{key}={_leef_value(value)}" for key, value in pairs if value not in (None, ""))
    header = "|".join(_cef_header(part) for part in ("LEEF:2.0", VENDOR, PRODUCT, __version__, event.name, "x09"))
    return f"{header}|{attributes}"


# ---- JSON ------------------------------------------------------------------------------------------------


def json_body(event: SiemEvent) -> str:
    return json.dumps(
        {"vendor": VENDOR, "product": PRODUCT, "version": __version__, **event.to_dict()},
        separators=(",", ":"),
        ensure_ascii=False,
        sort_keys=True,
        default=str,
    )


FORMATTERS = {"cef": cef, "leef": leef, "json": json_body}


def body(event: SiemEvent, fmt: str) -> str:
    """The event in `fmt` (`cef`, `leef` or `json`). Raises `KeyError` for another format."""
    return FORMATTERS[fmt](event)


# ---- RFC 5424 --------------------------------------------------------------------------------------------


def syslog_severity(severity: int) -> int:
    """CEF's 0-10 scale to a syslog severity: 9-10 critical, 7-8 error, 5-6 warning, 3-4 notice, 0-2 info."""
    if severity >= 9:
        return 2
    if severity >= 7:
        return 3
    if severity >= 5:
        return 4
    if severity >= 3:
        return 5
    return 6


def _sd_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("]", "\\]")


def _header_token(value: str, limit: int) -> str:
    """An RFC 5424 header field: printable US-ASCII without spaces, at most `limit` characters, `-` if empty."""
    text = "".join(ch for ch in value if 33 <= ord(ch) <= 126)[:limit]
    return text or "-"


HOSTNAME = _header_token(socket.gethostname(), 255)


def rfc5424(event: SiemEvent, message: str, facility: int) -> str:
    """`<PRI>1 TIMESTAMP HOSTNAME agentgov PROCID MSGID [agentgov@32473 ...] MSG`: the event's name is the
    MSGID; its tenant, event id and request id are structured data; `message` (a formatted body) is MSG."""
    pri = facility * 8 + syslog_severity(event.severity)
    params = [("tenantId", event.tenant_id), ("eventId", event.event_id), ("requestId", event.request_id or "")]
    sd = "[" + SD_ID + "".join(f' {key}="{_sd_value(value)}"' for key, value in params if value) + "]"
    return (
        f"<{pri}>1 {event.occurred_at} {HOSTNAME} agentgov {os.getpid()} {_header_token(event.name, 32)} {sd} {message}"
    )
