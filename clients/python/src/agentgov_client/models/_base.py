"""The base of every result type, and `Page`.

Results are frozen dataclasses built by ``from_json``: it reads the fields the class names, ignores any other
key (the service may add fields), and keeps the whole JSON object in ``raw``. A field the class requires
(no default) that is missing raises `UnexpectedResponseError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Self, TypeVar

from agentgov_client.errors import UnexpectedResponseError

M = TypeVar("M", bound="Model")
T = TypeVar("T")


@dataclass(frozen=True)
class Model:
    """A result of the service. `raw` is the JSON object it was read from (every field, known or not)."""

    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, kw_only=True)

    #: Converters of nested values, by field name (applied to non-null values).
    _nested: ClassVar[dict[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_json(cls, data: Any) -> Self:
        """Read an instance from the service's JSON object. Raises `UnexpectedResponseError` when `data` is
        not an object or lacks a required field; extra keys are kept in `raw` only."""
        if not isinstance(data, Mapping):
            raise UnexpectedResponseError(f"{cls.__name__}: expected a JSON object, got {type(data).__name__}")
        values: dict[str, Any] = {}
        for item in dataclasses.fields(cls):
            if item.name == "raw" or not item.init:
                continue
            if item.name in data:
                value = data[item.name]
                convert = cls._nested.get(item.name)
                values[item.name] = convert(value) if convert is not None and value is not None else value
            elif item.default is dataclasses.MISSING and item.default_factory is dataclasses.MISSING:
                raise UnexpectedResponseError(f"{cls.__name__}: the answer lacks the field {item.name!r}")
        return cls(**values, raw=dict(data))


def list_of(model: Callable[[Any], T]) -> Callable[[Any], list[T]]:
    """A converter of a JSON array of objects (for `Model._nested`)."""

    def convert(items: Any) -> list[T]:
        if not isinstance(items, list):
            raise UnexpectedResponseError(f"expected a JSON array, got {type(items).__name__}")
        return [model(item) for item in items]

    return convert


@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list: `items`, the `total` matching, and the `limit` and `offset` of this page.

    Routes that name their offset ``skip`` still report it as ``offset``; `skip` is the same number.
    """

    items: list[T]
    total: int
    limit: int
    offset: int
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    @property
    def skip(self) -> int:
        return self.offset

    @property
    def next_offset(self) -> int | None:
        """Where the next page starts; None on the last page (or an empty one)."""
        following = self.offset + len(self.items)
        if not self.items or following >= self.total:
            return None
        return following

    def __iter__(self) -> Iterator[T]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @classmethod
    def from_json(cls, data: Any, item: Callable[[Any], T]) -> Page[T]:
        """Read a list envelope ``{"items", "total", "limit", "offset"}``, each item read by `item`."""
        if not isinstance(data, Mapping) or not isinstance(data.get("items"), list):
            raise UnexpectedResponseError("expected a list envelope with items, total, limit and offset")
        items = [item(entry) for entry in data["items"]]
        return cls(
            items=items,
            total=int(data.get("total", len(items))),
            limit=int(data.get("limit", len(items))),
            offset=int(data.get("offset", data.get("skip", 0))),
            raw=dict(data),
        )
