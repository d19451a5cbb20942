"""Retries with exponential backoff and full jitter, for requests that are safe to send again.

A request is retried only when it is safe to repeat (`Call.may_retry`): GET and HEAD, ``POST
/policies/check``, ``POST /guard/validate``, and ``POST /audit/log`` sent with an ``Idempotency-Key``. Other
POST, PUT and DELETE requests are never retried: their error is raised at once.

What is retried: no answer (`APIConnectionError`, `APITimeoutError`), 429 and 503. The wait before retry
*n* (0-based) is a random time between 0 and ``min(cap, base * 2**n)`` ("full jitter"), added to the
``Retry-After`` the answer asked for, if any (so clients told to wait the same time do not all come back at
once). A ``Retry-After`` longer than `RetryPolicy.max_retry_after` is not waited for: the error is raised.
"""

from __future__ import annotations

import logging
import random
from dataclasses import dataclass

import httpx

from agentgov_client._flow import Call, Flow, Send, Sleep, T
from agentgov_client.errors import (
    AgentgovError,
    APIConnectionError,
    RateLimitError,
    ServiceUnavailableError,
    error_from_response,
    error_from_transport,
)

log = logging.getLogger("agentgov_client")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry: `max_retries` retries after the first attempt (0: never retry),
    backoff `base` and `cap` in seconds, and the longest ``Retry-After`` honoured (`max_retry_after`)."""

    max_retries: int = 3
    base: float = 0.5
    cap: float = 8.0
    max_retry_after: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0 or self.base < 0 or self.cap < 0 or self.max_retry_after < 0:
            raise ValueError("RetryPolicy values must not be negative")

    def delay(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait before retry number `attempt` (0-based): full jitter, plus `retry_after` when the
        answer asked for it. None when the error should be raised instead (`retry_after` above
        `max_retry_after`)."""
        if retry_after is not None and retry_after > self.max_retry_after:
            return None
        return (retry_after or 0.0) + random.uniform(0.0, min(self.cap, self.base * (2**attempt)))


def is_retryable(error: AgentgovError) -> bool:
    """Whether `error` is worth retrying (for a request safe to repeat): no answer, 429 or 503."""
    return isinstance(error, APIConnectionError | RateLimitError | ServiceUnavailableError)


def execute(call: Call[T], policy: RetryPolicy) -> Flow[T]:
    """Send `call` and return its parsed result, retrying as described in this module.

    Raises the `APIStatusError` subclass of the last error answer, or `APIConnectionError`/`APITimeoutError`
    when the last attempt got no answer.
    """
    attempt = 0
    while True:
        error: AgentgovError
        try:
            response: httpx.Response = yield Send(call)
        except httpx.TransportError as exc:
            error = error_from_transport(exc)
        else:
            if response.status_code < 400 or response.status_code in call.accept:
                return call.parse(response)
            error = error_from_response(response)
        if not (call.may_retry and is_retryable(error) and attempt < policy.max_retries):
            raise error
        wait = policy.delay(attempt, getattr(error, "retry_after", None))
        if wait is None:
            raise error
        log.info(
            "retrying %s %s in %.2fs (retry %d of %d): %s",
            call.method,
            call.path,
            wait,
            attempt + 1,
            policy.max_retries,
            error.message,
        )
        attempt += 1
        yield Sleep(wait)
