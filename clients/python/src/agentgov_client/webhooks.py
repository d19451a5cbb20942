"""Signing of the inbound webhook ``POST /webhooks/agent`` (outside ``/api/v1``).

The service checks ``X-Webhook-Signature``: the hex HMAC-SHA256 of the raw request body bytes, keyed with its
``WEBHOOK_SECRET``. Sign exactly the bytes you send.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from typing import Any

SIGNATURE_HEADER = "X-Webhook-Signature"
DELIVERY_HEADER = "X-Webhook-Id"
WEBHOOK_PATH = "/webhooks/agent"
EVENTS = ("agent.action", "agent.heartbeat")


def sign_webhook(body: bytes, secret: str) -> str:
    """The ``X-Webhook-Signature`` value for `body`: hex HMAC-SHA256 of the bytes keyed with `secret`."""
    if not isinstance(body, bytes | bytearray | memoryview):
        raise TypeError("sign the raw body bytes exactly as they are sent")
    return hmac.new(secret.encode("utf-8"), bytes(body), hashlib.sha256).hexdigest()


def verify_webhook(body: bytes, secret: str, signature: str) -> bool:
    """Whether `signature` is `body`'s signature under `secret` (constant-time comparison)."""
    return hmac.compare_digest(sign_webhook(body, secret), signature.strip().lower())


def webhook_body(event: str, payload: Mapping[str, Any]) -> bytes:
    """The JSON body of a delivery: ``{"event": ..., "payload": {...}}`` as compact UTF-8 bytes."""
    return json.dumps({"event": event, "payload": dict(payload)}, separators=(",", ":"), default=str).encode()
