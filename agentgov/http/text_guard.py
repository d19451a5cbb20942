"""Limits on what a request may carry, checked once at the edge for every route.

A JSON body is refused, before any route sees it, when it

- nests deeper than `MAX_JSON_DEPTH` arrays and objects (400; JSON nested thousands deep would otherwise
  exhaust the interpreter's recursion limit somewhere downstream);
- holds a string (a value or a key) that no supported database can store as text: a NUL character or a lone
  UTF-16 surrogate (422 naming the field; `agentgov.storage.text`);
- holds an integer outside the signed 64-bit range (422 naming the field; neither SQLite nor PostgreSQL
  stores one, and most JSON consumers lose its precision).

Floating-point values (including the non-standard `NaN` and `Infinity` that Python's JSON reader accepts)
are left alone. A query string is refused under the same string rule, and query parameters parsed as
integers under the same range rule (`check_query_value`).

The checks cost nothing for ordinary bodies: each walks the parsed value only when the raw text could hold
what it looks for (a `\\u` escape, 19 digits in a row, more than `MAX_JSON_DEPTH` brackets).
"""

from __future__ import annotations

import re
from typing import Any

from agentgov.http.errors import ApiError
from agentgov.storage.text import unstorable_reason

MAX_JSON_DEPTH = 64
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

_LONG_NUMBER = re.compile(rb"\d{19}")


def check_json_value(raw: bytes | str, value: Any) -> None:
    """Refuse `value` (parsed from `raw`) per the module rules. Raises `ApiError` 400 or 422."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    deep = data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH
    escaped = b"\\u" in data
    long_number = _LONG_NUMBER.search(data) is not None
    if deep or escaped or long_number:
        _walk(value)


def check_query_value(name: str, value: Any) -> None:
    """Refuse a query parameter's raw text or parsed value per the module rules. Raises `ApiError` 422."""
    problem = _problem(value)
    if problem is not None:
        raise _unprocessable(name or "query string", problem, "query parameter")


def _walk(root: Any) -> None:
    stack: list[tuple[Any, str, int]] = [(root, "", 0)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, dict):
            if depth >= MAX_JSON_DEPTH:
                raise _too_deep()
            for key, item in value.items():
                field = f"{path}.{key}" if path else str(key)
                problem = _problem(key)
                if problem is not None:
                    raise _unprocessable(_printable(field), f"key {problem}", "request body")
                stack.append((item, field, depth + 1))
        elif isinstance(value, list):
            if depth >= MAX_JSON_DEPTH:
                raise _too_deep()
            for index, item in enumerate(value):
                stack.append((item, f"{path}.{index}" if path else str(index), depth + 1))
        else:
            problem = _problem(value)
            if problem is not None:
                raise _unprocessable(_printable(path) or "body", problem, "request body")


def _problem(value: Any) -> str | None:
    if isinstance(value, str):
        return unstorable_reason(value)
    if isinstance(value, int) and not isinstance(value, bool) and not INT64_MIN <= value <= INT64_MAX:
        return "is an integer outside the signed 64-bit range"
    return None


def _printable(field: str) -> str:
    """`field` with what cannot be shown as text escaped, so the error itself is valid JSON text."""
    if unstorable_reason(field) is None:
        return field
    return field.encode("utf-8", "backslashreplace").decode("utf-8").replace("\x00", "\\x00")


def _unprocessable(field: str, problem: str, where: str) -> ApiError:
    kind = "int_range" if "integer" in problem else "string_unstorable"
    return ApiError(
        422,
        f"Invalid {where}: {field}: {problem}",
        errors=[{"field": field, "message": problem, "type": kind}],
    )


def _too_deep() -> ApiError:
    return ApiError(400, f"Request body nests deeper than {MAX_JSON_DEPTH} levels")
