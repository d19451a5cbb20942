"""Helpers of the operation builders: reading answers, path segments, bodies and list queries."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, Literal, TypeVar
from urllib.parse import quote

import httpx

from agentgov_client._flow import Flow
from agentgov_client.errors import UnexpectedResponseError
from agentgov_client.models import Model, Page

M = TypeVar("M", bound=Model)
T = TypeVar("T")

PageStyle = Literal["offset", "skip"]
DEFAULT_PAGE_SIZE = 100


class _Unset:
    """The default of an optional update field: "leave it as it is" (None may mean "clear it")."""

    def __repr__(self) -> str:
        return "UNSET"

    def __bool__(self) -> bool:
        return False


UNSET: Any = _Unset()


def json_of(response: httpx.Response) -> Any:
    """The answer's JSON. Raises `UnexpectedResponseError` when it is not JSON."""
    try:
        return response.json()
    except ValueError:
        raise UnexpectedResponseError(
            f"expected JSON from {response.request.method} {response.request.url.path}, "
            f"got {response.headers.get('Content-Type', 'no content type')}"
        ) from None


def model(cls: type[M]) -> Callable[[httpx.Response], M]:
    """Parse an answer as one `cls`."""
    return lambda response: cls.from_json(json_of(response))


def page_of(cls: type[M]) -> Callable[[httpx.Response], Page[M]]:
    """Parse an answer as a `Page` of `cls`."""
    return lambda response: Page.from_json(json_of(response), cls.from_json)


def raw_object(response: httpx.Response) -> dict[str, Any]:
    """Parse an answer as a plain JSON object."""
    data = json_of(response)
    if not isinstance(data, dict):
        raise UnexpectedResponseError(f"expected a JSON object, got {type(data).__name__}")
    return data


def nothing(response: httpx.Response) -> None:
    """Parse a 204 (or any answer whose body does not matter)."""
    return None


def seg(value: Any) -> str:
    """A path segment: the value as text, percent-encoded (so an id can never change the path)."""
    return quote(str(value), safe="")


def body(**fields: Any) -> dict[str, Any]:
    """A JSON body of the fields that were given (None and `UNSET` are left out)."""
    return {name: value for name, value in fields.items() if value is not None and value is not UNSET}


def changes(**fields: Any) -> dict[str, Any]:
    """A JSON body of the fields to change (`UNSET` left out, None kept: it clears the field)."""
    return {name: value for name, value in fields.items() if value is not UNSET}


def iso_time(value: datetime | str | None) -> str | None:
    """An ISO 8601 text for the service; a naive `datetime` is taken as UTC."""
    if value is None or isinstance(value, str):
        return value
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.isoformat()


def page_query(style: PageStyle, offset: int, limit: int, **filters: Any) -> dict[str, Any]:
    """The query of a list request: the filters, `limit`, and the offset as ``offset`` or ``skip``."""
    return {**filters, "limit": limit, style: offset}


def as_list(values: Iterable[str] | None) -> list[str] | None:
    return None if values is None else [str(v) for v in values]


#: The longest JSON text of an ``input``, ``output`` or ``arguments`` value sent as is (the service keeps at
#: most 64 KiB of JSON per field); longer ones are cut and marked ``"truncated": true``.
MAX_JSON_CHARS = 48 * 1024


def error_output(error: BaseException | str) -> dict[str, Any]:
    """The audit ``output`` of a failed run: ``{"error": "<type>: <message>"}`` (or the error text given)."""
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return {"error": text[:MAX_JSON_CHARS]}


def json_object(value: Any) -> dict[str, Any]:
    """`value` as the JSON object an audit ``output`` must be: a dict that serialises stays as it is; anything
    else becomes ``{"result": value}`` (or its ``repr`` when it does not serialise to JSON)."""
    if isinstance(value, Mapping):
        candidate: dict[str, Any] = dict(value)
        if all(isinstance(k, str) for k in candidate) and _serialises(candidate):
            return candidate
        return {"result": repr(value)}
    return {"result": value if _serialises(value) else repr(value)}


def _serialises(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return True


@dataclass(frozen=True)
class Pager(Generic[T]):
    """How to fetch the pages of a list: `fetch(offset, limit)` is the flow of one page."""

    fetch: Callable[[int, int], Flow[Page[T]]]
    page_size: int = DEFAULT_PAGE_SIZE

    def __post_init__(self) -> None:
        if not 1 <= self.page_size <= 200:
            raise ValueError("page_size must be 1..200 (the service's largest page)")
