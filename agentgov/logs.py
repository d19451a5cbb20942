"""Structured logging: key=value lines for people, JSON lines when LOG_FORMAT=json.

Log with fields: `log.info("tenant created", extra=fields(tenant_id=...))`. The current request id
(set by the HTTP layer in a context variable, so it follows the request's task) is added to every line.
"""

from __future__ import annotations

import contextvars
import json
import logging
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
    return (
        datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    )


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
            line += "\n" + self.formatException(record.exc_info)
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


def _kv(value: Any) -> str:
    text = str(value)
    if text == "" or any(c in text for c in ' "=\n'):
        return json.dumps(text)
    return text


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
