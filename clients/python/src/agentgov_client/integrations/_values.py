"""JSON-safe values for the service: tool arguments, results and errors as plain, bounded JSON data."""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from typing import Any

from agentgov_client._ops._common import MAX_JSON_CHARS
from agentgov_client._ops._common import error_output as tool_error_output

__all__ = ["MAX_JSON_CHARS", "jsonable", "parse_arguments", "tool_error_output", "tool_output"]

_MAX_DEPTH = 32


# -- JSON-safe values ---------------------------------------------------------------------------------------


def jsonable(value: Any, _depth: int = 0) -> Any:
    """`value` as plain JSON data: mappings (keys as text), lists, text, finite numbers, booleans and null.
    Tuples and sets become lists, pydantic models and dataclasses their fields, anything else its ``str``."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if _depth >= _MAX_DEPTH:
        return str(value)
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [jsonable(v, _depth + 1) for v in value]
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):
        try:
            return jsonable(dump(mode="json"), _depth + 1)
        except Exception:  # a model that does not dump: fall back to its text
            return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return jsonable(dataclasses.asdict(value), _depth + 1)
    return str(value)


def _bounded(data: dict[str, Any], key: str) -> dict[str, Any]:
    text = json.dumps(data, ensure_ascii=False)
    if len(text) <= MAX_JSON_CHARS:
        return data
    return {key: text[:MAX_JSON_CHARS], "truncated": True}


def tool_output(result: Any) -> dict[str, Any]:
    """The audit ``output`` of a tool's result: ``{"result": <result as JSON data>}`` (cut when too long)."""
    return _bounded({"result": jsonable(result)}, "result")


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """A tool call's arguments as a JSON object: a mapping as is, a JSON object text parsed, anything else
    (a plain text input, a JSON array, text that is not JSON) as ``{"input": ...}``."""
    if isinstance(arguments, str):
        try:
            parsed = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return {"input": arguments}
        arguments = parsed
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return _bounded(jsonable(arguments), "arguments")
    return _bounded({"input": jsonable(arguments)}, "input")
