"""Structured logging: key=value lines for people, JSON lines when LOG_FORMAT=json.

Every record is one line whatever its values hold: text from requests (paths, names, headers) may carry
control characters (ESC sequences that rewrite a terminal, NUL, CR/LF that forge a second line), so a
key=value value holding any of them, a space, a quote, `=` or a backslash is written as a JSON string
(control and non-ASCII characters escaped), and JSON lines escape them by construction. A traceback keeps
its line breaks, with every other control character escaped.

Log with fields: `log.info("tenant created", extra=fields(tenant_id=...))`. The current request id
(set by the HTTP layer in a context variable, so it follows the request's task) is added to every line.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
from datetime import UTC, datetime
from typing import Any

request_id_var: contextvars.ContextVar[str | None] = contextvars.ContextVar("request_id", default=None)

_RESERVED = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}


def fields(**values: Any) -> dict[str, Any]:
    """Wrap structured fields for the `extra=` argument of a logging call."""
    return {"fields": values}


def _record_fields(record: logging.LogRecord) -> dict[str, Any]:
    out: dict[str, Any] = {}
    request_id = request_id_var.get()
    if request_id:
        out["request_id"] = request_id
    out.update(getattr(record, "fields", {}) or {})
    for key, value in record.__dict__.items():
        if key not in _RESERVED and key != "fields":
            out[key] = value
    return out


def _timestamp(record: logging.LogRecord) -> str:
    return datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class KeyValueFormatter(logging.Formatter):
    """`ts=... level=info logger=agentgov.http msg="request" method=GET status=200`."""

    def format(self, record: logging.LogRecord) -> str:
        parts = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **_record_fields(record),
        }
        line = " ".join(f"{key}={_kv(value)}" for key, value in parts.items())
        if record.exc_info:
            line += "\n" + escape_controls(self.formatException(record.exc_info))
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line."""

    def format(self, record: logging.LogRecord) -> str:
        payload = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **_record_fields(record),
        }
        if record.exc_info:
            payload["exc"] = self.formatException(record.exc_info)
        return json.dumps(payload, default=str)


_NEEDS_QUOTING = re.compile(r'[\x00-\x20"=\\\x7f-\x9f\u2028\u2029]')
_CONTROL_BUT_NEWLINE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def _kv(value: Any) -> str:
    """`value` as a key=value value: bare when it is plain, else a JSON string (escapes every control)."""
    text = str(value)
    if text == "" or _NEEDS_QUOTING.search(text):
        return json.dumps(text)
    return text


def escape_controls(text: str) -> str:
    """`text` with every control character but the line feed written as a `\\xNN`/`\\uNNNN` escape."""
    return _CONTROL_BUT_NEWLINE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


def configure_logging(log_format: str = "text", level: str = "INFO") -> None:
    """Route the root logger to stderr in the chosen format (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if log_format == "json" else KeyValueFormatter())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(level)
    for noisy in ("hypercorn.access",):
        logging.getLogger(noisy).setLevel(logging.WARNING)
