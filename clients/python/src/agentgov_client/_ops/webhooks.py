"""Sending signed events to the inbound webhook."""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from agentgov_client._core import ClientCore
from agentgov_client._flow import Call, Flow
from agentgov_client._ops._common import model
from agentgov_client.models import WebhookReceipt
from agentgov_client.webhooks import DELIVERY_HEADER, SIGNATURE_HEADER, WEBHOOK_PATH, sign_webhook, webhook_body


def send_webhook(
    core: ClientCore,
    event: str,
    payload: Mapping[str, Any],
    *,
    secret: str | None = None,
    delivery_id: str | None = None,
) -> Flow[WebhookReceipt]:
    """``POST /webhooks/agent``: a signed ``agent.action`` (creates an audit entry) or ``agent.heartbeat``
    (sets the agent's status) event, with the API key naming the tenant. The body is signed with `secret`
    (default: the client's ``webhook_secret``). Each call is its own delivery (``X-Webhook-Id``: `delivery_id`,
    else a fresh UUID); repeating a `delivery_id` stores nothing new (`WebhookReceipt.duplicate`).

    Raises `ValueError` without a secret; `AuthenticationError` for a signature the service does not accept
    (or a bad API key), `ValidationError` (400 unknown event, 422 invalid payload), `NotFoundError` for an
    unknown agent. Not retried."""
    key = secret if secret is not None else core.webhook_secret
    if not key:
        raise ValueError("send_webhook needs the webhook secret: pass secret= or set webhook_secret")
    content = webhook_body(event, payload)
    headers = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: sign_webhook(content, key),
        DELIVERY_HEADER: delivery_id or str(uuid.uuid4()),
    }
    return core.execute(Call("POST", WEBHOOK_PATH, model(WebhookReceipt), content=content, headers=headers, root=True))
