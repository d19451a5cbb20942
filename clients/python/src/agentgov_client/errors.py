"""Every error the client raises, and the mapping from an HTTP answer to one of them.

The service answers every error as JSON: ``{"detail": "...", "errors": [...]?}`` (``errors`` on validation
failures: ``{"field", "message", "type"}``), with an ``X-Request-ID`` header naming the request in its logs.

Hierarchy::

    AgentgovError
    ├── APIStatusError                 an answer with an error status (any status not listed below)
    │   ├── AuthenticationError        401
    │   ├── PermissionDeniedError      403
    │   ├── NotFoundError              404
    │   ├── ConflictError              409
    │   ├── ValidationError            400, 413, 415, 422 (``errors``: the field errors)
    │   ├── RateLimitError             429 (``retry_after``)
    │   └── ServiceUnavailableError    503 (``retry_after``)
    ├── APIConnectionError             no answer: connection refused or broken, DNS, TLS ...
    │   └── APITimeoutError            no answer in time
    ├── UnexpectedResponseError        a success answer whose body is not what the contract says
    ├── ApprovalTimeout                `wait_for_decision` ran out of time (also a ``TimeoutError``)
    └── ActionDenied                   `guarded` refused to run an action (``decision``, ``approval``)
        └── ServiceUnreachable         ... because the service could not be asked (fail-closed)
"""

from __future__ import annotations

import contextlib
import dataclasses
import email.utils
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

if TYPE_CHECKING:
    from agentgov_client.models import ApprovalRequest, PolicyDecision

REQUEST_ID_HEADER = "X-Request-ID"


class AgentgovError(Exception):
    """Base class of every error raised by this client.

    `status_code` is the HTTP status (None when no answer arrived), `detail` the service's message,
    `request_id` the answer's ``X-Request-ID`` (quote it when reporting a problem), `body` the parsed JSON
    error body (empty when there was none).
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        detail: str | None = None,
        request_id: str | None = None,
        body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.detail = detail if detail is not None else message
        self.request_id = request_id
        self.body: dict[str, Any] = dict(body or {})


class APIStatusError(AgentgovError):
    """The service answered with an error status. Raised as is for statuses without a subclass (5xx, 410 ...).

    `headers` are the answer's headers; `method` and `url` name the request.
    """

    status_code: int

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        detail: str | None = None,
        request_id: str | None = None,
        body: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        method: str = "",
        url: str = "",
    ) -> None:
        super().__init__(message, status_code=status_code, detail=detail, request_id=request_id, body=body)
        self.headers: dict[str, str] = dict(headers or {})
        self.method = method
        self.url = url


class AuthenticationError(APIStatusError):
    """401: credentials missing, unknown, expired or revoked (or a webhook signature that does not verify)."""


class PermissionDeniedError(APIStatusError):
    """403: the credentials are valid but their role lacks the route's permission."""


class NotFoundError(APIStatusError):
    """404: no such resource in the caller's tenant (another tenant's resources are 404 too)."""


class ConflictError(APIStatusError):
    """409: the resource's state forbids the change (already decided, duplicate, last admin, task running ...)."""


@dataclass(frozen=True)
class FieldError:
    """One field error of a validation failure: `field` (e.g. ``"name"`` or ``"payload.agent_id"``)."""

    field: str
    message: str
    type: str
    raw: dict[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Any) -> FieldError:
        if not isinstance(data, Mapping):
            return cls(field="", message=str(data), type="", raw={})
        return cls(
            field=str(data.get("field", "")),
            message=str(data.get("message", "")),
            type=str(data.get("type", "")),
            raw=dict(data),
        )


class ValidationError(APIStatusError):
    """400 (malformed JSON), 413 (body too large), 415 (not JSON) or 422 (invalid fields).

    `errors` lists the field errors the service named (possibly empty).
    """

    def __init__(self, message: str, *, errors: list[FieldError] | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.errors: list[FieldError] = list(errors or [])


class RateLimitError(APIStatusError):
    """429: too many requests (e.g. failed logins); `retry_after` is the wait in seconds the service asked for."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class ServiceUnavailableError(APIStatusError):
    """503: the service is busy or a dependency is down; `retry_after` is the wait it asked for, if any."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.retry_after = retry_after


class APIConnectionError(AgentgovError):
    """No answer arrived: the connection could not be made or broke (the request may or may not have run)."""


#: What "the service cannot be asked" means (no answer, or 503 after the retries): the errors that fail-open
#: and fail-closed choices are about.
UNREACHABLE_ERRORS: tuple[type[AgentgovError], ...] = (APIConnectionError, ServiceUnavailableError)


class APITimeoutError(APIConnectionError):
    """No answer arrived within the client's timeout."""


class UnexpectedResponseError(AgentgovError):
    """A success answer whose body is not the JSON the contract describes (e.g. a proxy's HTML page)."""


class ApprovalTimeout(AgentgovError, TimeoutError):
    """`wait_for_decision` ran out of time while the approval request was still pending (`approval`)."""

    def __init__(self, message: str, *, approval_id: str, approval: ApprovalRequest | None = None) -> None:
        super().__init__(message)
        self.approval_id = approval_id
        self.approval = approval


class ActionDenied(AgentgovError):
    """`guarded` did not run the action: the policy denied it, or its approval was rejected, expired or timed
    out. `decision` is the policy decision (None when none could be had), `approval` the approval request
    when one was involved, `reason` a human explanation."""

    def __init__(
        self,
        reason: str,
        *,
        decision: PolicyDecision | None = None,
        approval: ApprovalRequest | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.decision = decision
        self.approval = approval


class ServiceUnreachable(ActionDenied):
    """`guarded` (fail-closed) did not run the action because the service could not be asked: no connection
    or 503 after the retries. The underlying error is `__cause__`."""


_STATUS_CLASSES: dict[int, type[APIStatusError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: ValidationError,
    415: ValidationError,
    422: ValidationError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def retry_after_seconds(value: str | None) -> float | None:
    """The wait a ``Retry-After`` header asks for, in seconds (delta-seconds or an HTTP date); None if absent
    or unreadable."""
    if value is None:
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    with contextlib.suppress(TypeError, ValueError, IndexError, OverflowError):
        moment = email.utils.parsedate_to_datetime(text)
        return max(0.0, moment.timestamp() - time.time())
    return None


def _json_body(response: httpx.Response) -> dict[str, Any]:
    try:
        data = json.loads(response.content) if response.content else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def error_from_response(response: httpx.Response) -> APIStatusError:
    """The `APIStatusError` (subclass by status) describing an error answer. The body must have been read."""
    status = response.status_code
    body = _json_body(response)
    raw_detail = body.get("detail")
    detail = raw_detail if isinstance(raw_detail, str) else (response.reason_phrase or f"HTTP {status}")
    request_id = response.headers.get(REQUEST_ID_HEADER)
    method, url = response.request.method, str(response.request.url)
    message = f"{status} {detail} ({method} {response.request.url.path}"
    message += f"; request id {request_id})" if request_id else ")"
    kwargs: dict[str, Any] = {
        "status_code": status,
        "detail": detail,
        "request_id": request_id,
        "body": body,
        "headers": dict(response.headers),
        "method": method,
        "url": url,
    }
    cls = _STATUS_CLASSES.get(status, APIStatusError)
    if cls is ValidationError:
        errors = body.get("errors")
        kwargs["errors"] = [FieldError.from_json(e) for e in errors] if isinstance(errors, list) else []
    elif cls in (RateLimitError, ServiceUnavailableError):
        kwargs["retry_after"] = retry_after_seconds(response.headers.get("Retry-After"))
    return cls(message, **kwargs)


def error_from_transport(exc: httpx.TransportError) -> APIConnectionError:
    """The `APIConnectionError` (`APITimeoutError` for a timeout) for an httpx transport failure."""
    where = ""
    with contextlib.suppress(RuntimeError):  # httpx raises RuntimeError when the request is not attached
        where = f" ({exc.request.method} {exc.request.url})"
    cls = APITimeoutError if isinstance(exc, httpx.TimeoutException) else APIConnectionError
    reason = str(exc) or type(exc).__name__
    return cls(f"{'Timed out' if cls is APITimeoutError else 'Connection failed'}{where}: {reason}")
