"""Request body and query-string parsing with pydantic models, documented in the OpenAPI schema.

`@json_body(Model)` passes the parsed model as `data=`: a non-JSON content type is a 415, malformed JSON a
400, a body that does not fit the model a 422 naming each field. `@query(Model)` passes `query=`: a
query string that does not fit is a 422 naming each parameter. Both apply the edge limits of
`agentgov.http.text_guard` (nesting depth, storable text, 64-bit integers). Both also register the model with
quart-schema so `/openapi.json` and `/docs` show it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from quart import request
from quart_schema import document_querystring, document_request

from agentgov.http.errors import ApiError, validation_error
from agentgov.http.text_guard import MAX_JSON_DEPTH, check_json_value, check_query_value

M = TypeVar("M", bound=BaseModel)
F = TypeVar("F", bound=Callable[..., Any])


async def read_json() -> Any:
    """The request body parsed as JSON. Raises `ApiError` 415, 413 or 400."""
    require_json(request.mimetype)
    return parse_json(await request.get_data(as_text=False))


def require_json(mimetype: str) -> None:
    """Raise `ApiError` 415 unless the body's media type (lower-case, no parameters) is JSON."""
    if mimetype != "application/json":
        raise ApiError(415, "Content-Type must be application/json")


def parse_json(raw: bytes | str) -> Any:
    """`raw` parsed as JSON and checked against the edge limits (`agentgov.http.text_guard`).

    Raises `ApiError` 400 for an empty body, text that is not JSON or JSON nested too deep, and 422 naming
    the field for text no database can store or an integer out of the 64-bit range.
    """
    if not raw:
        raise ApiError(400, "Request body is empty; expected a JSON object")
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ApiError(400, f"Request body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"Request body is not valid JSON: {exc}") from None
    check_json_value(raw, value)
    return value


def parse_model(model: type[M], data: Any, where: str = "request body") -> M:
    """Validate `data` against `model`. Raises `ApiError` 422 naming the fields."""
    if where == "request body" and not isinstance(data, dict):
        raise ApiError(422, "Invalid request body: expected a JSON object", errors=[])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_error(exc, where) from None


def parse_query(model: type[M]) -> M:
    """The request's query string validated against `model`. Raises `ApiError` 422 naming the parameter:
    for a value that does not fit, for text no database can store (in any parameter, known or not), and for
    an integer outside the signed 64-bit range."""
    raw: dict[str, Any] = {}
    for key in request.args:
        values = request.args.getlist(key)
        check_query_value(key, key)
        for value in values:
            check_query_value(key, value)
        raw[key] = values if len(values) > 1 else values[0]
    parsed = parse_model(model, raw, "query parameters")
    for name in type(parsed).model_fields:
        check_query_value(name, getattr(parsed, name))
    return parsed


def json_body(model: type[M]) -> Callable[[F], F]:
    def decorator(func: F) -> F:
        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            data = parse_model(model, await read_json())
            return await func(*args, data=data, **kwargs)

        return document_request(model)(wrapper)  # type: ignore[return-value]

    return decorator


def query(model: type[M]) -> Callable[[F], F]:
    def decorator(func: F) -> F:
        @functools.wraps(func)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            return await func(*args, query=parse_query(model), **kwargs)

        return document_querystring(model)(wrapper)  # type: ignore[return-value]

    return decorator
