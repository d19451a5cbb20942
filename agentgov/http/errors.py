"""Every error leaves the service as JSON with a `detail` string.

Handlers raise `ApiError(status, detail)`; validation errors (422) also carry `errors`, a list of
`{"field", "message", "type"}`. Known runtime conditions map to clear statuses: a full actor mailbox is a
503 with Retry-After, a stopping actor a 503, a storage outage a 503, a message an actor refused for what it
holds (`Rejected`, e.g. text the database cannot store) a 422, an audit chain that cannot be appended a 503.
Anything unexpected is logged with the request id and answered with a 500 whose detail carries that id
(never a stack trace).
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic import ValidationError
from quart import Quart, Response, jsonify
from werkzeug.exceptions import HTTPException

from agentgov.actors.audit import AuditUnavailable
from agentgov.actors.runtime import ActorCrashed, ActorStopped, MailboxFull, Rejected
from agentgov.logs import fields, request_id_var
from agentgov.storage.cache import CacheError
from agentgov.storage.database import DatabaseError

log = logging.getLogger("agentgov.http")

_SHORT_DETAIL = {
    400: "Bad request",
    404: "Not found",
    405: "Method not allowed",
    413: "Request body too large",
    415: "Unsupported media type",
}


class ApiError(Exception):
    """An error answer: `status`, a human `detail`, optional extra JSON fields and headers."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


def not_found(what: str) -> ApiError:
    return ApiError(404, f"{what} not found")


def validation_error(err: ValidationError, where: str) -> ApiError:
    """A 422 naming each wrong field and why."""
    errors = []
    for item in err.errors(include_url=False):
        loc = ".".join(str(part) for part in item["loc"]) or where
        errors.append({"field": loc, "message": item["msg"], "type": item["type"]})
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return ApiError(422, f"Invalid {where}: {summary}", errors=errors)


def error_response(status: int, detail: str, headers: dict[str, str] | None = None, **extra: Any) -> Response:
    """The JSON error answer. (A body left unread by an early answer is drained or the connection closed by
    the server layer: `agentgov.http.server_patches`.)"""
    response = jsonify({"detail": detail, **extra})
    response.status_code = status
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def install_error_handlers(app: Quart) -> None:
    @app.errorhandler(HTTPException)
    async def _http_error(exc: HTTPException) -> Response:
        status = exc.code or 500
        detail = _SHORT_DETAIL.get(status) or exc.description or exc.name
        headers = {}
        if status == 405 and exc.response is None:
            allowed = getattr(exc, "valid_methods", None)
            if allowed:
                headers["Allow"] = ", ".join(allowed)
        return error_response(status, detail, headers)

    @app.errorhandler(ApiError)
    @app.errorhandler(MailboxFull)
    @app.errorhandler(ActorStopped)
    @app.errorhandler(ActorCrashed)
    @app.errorhandler(DatabaseError)
    @app.errorhandler(CacheError)
    @app.errorhandler(Exception)
    async def _runtime(exc: Exception) -> Response:
        err = api_error_for(exc)
        return error_response(err.status, err.detail, err.headers, **err.extra)


def api_error_for(exc: Exception) -> ApiError:
    """The answer to an exception a handler let escape (logging the ones that need a look).

    `ApiError` as it is; a full mailbox or a stopping actor a 503 with Retry-After; a `Rejected` message a
    422; an audit chain that cannot be appended a 503; a database or cache that cannot serve the call now a
    503; anything else, a failed statement (`QueryError`) included, a 500 whose detail quotes the request
    id, logged with its traceback.
    """
    match exc:
        case ApiError():
            return exc
        case MailboxFull():
            return ApiError(503, f"Service busy: {exc}; retry shortly", headers={"Retry-After": "1"})
        case ActorStopped():
            return ApiError(
                503, f"Service unavailable: {exc} (shutting down or restarting)", headers={"Retry-After": "1"}
            )
        case Rejected():
            return ApiError(422, f"Invalid request: {exc}")
        case AuditUnavailable():
            log.error("audit trail unavailable", extra=fields(error=str(exc)))
            return ApiError(503, str(exc), headers={"Retry-After": "5"})
        case DatabaseError():
            log.error("database error", exc_info=exc)
            return ApiError(503, "Service unavailable: the database is not reachable", headers={"Retry-After": "5"})
        case CacheError():
            log.error("cache error", exc_info=exc)
            return ApiError(503, "Service unavailable: the cache is not reachable", headers={"Retry-After": "5"})
    request_id = request_id_var.get()
    log.error("unhandled error", exc_info=exc, extra=fields(error=type(exc).__name__))
    return ApiError(500, f"Internal error; quote request id {request_id} when reporting it")
