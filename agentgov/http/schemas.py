"""Shared request/response building blocks."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Generic, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agentgov.audit_chain import canonical_json

T = TypeVar("T")

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


def _email(value: str) -> str:
    value = value.strip()
    if len(value) > 254 or not _EMAIL.match(value):
        raise ValueError("not a valid email address")
    return value


def _not_blank(value: str) -> str:
    """Stripped; refused when nothing visible is left (only spaces, control or format characters)."""
    value = value.strip()
    if not any(not ch.isspace() and unicodedata.category(ch) not in _INVISIBLE for ch in value):
        raise ValueError("must not be blank (it needs at least one visible character)")
    return value


_INVISIBLE = frozenset({"Cc", "Cf", "Cs"})


Email = Annotated[str, AfterValidator(_email)]


def bounded_name(max_length: int) -> Any:
    """A required, non-blank, stripped string of at most `max_length` characters."""
    return Annotated[str, Field(min_length=1, max_length=max_length), AfterValidator(_not_blank)]


Name = bounded_name(200)


def storable_json(value: Any, max_bytes: int, what: str) -> Any:
    """`value` if JSON holds it exactly (no NaN or infinity, which Python's reader accepts and JSON has not)
    within `max_bytes` of its stored form (`canonical_json`, UTF-8). Raises `ValueError` naming `what` (a 422
    for the field, in a model's validator)."""
    try:
        size = len(canonical_json(value).encode())
    except ValueError:
        raise ValueError(f"{what} must not contain NaN or infinite numbers") from None
    if size > max_bytes:
        raise ValueError(f"{what} must serialise to at most {max_bytes} bytes of JSON")
    return value


class RequestModel(BaseModel):
    """Base of every request body model: a field the model does not name is a 422 naming it, never ignored
    (a misspelt field silently doing nothing is worse than an error)."""

    model_config = ConfigDict(extra="forbid")


DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


class Page(BaseModel, Generic[T]):
    """The pagination envelope of every list: the items, the total matching, and the window asked for."""

    items: list[T]
    total: int
    limit: int
    offset: int


def page(items: list[Any], total: int, limit: int, offset: int) -> dict[str, Any]:
    return {"items": items, "total": total, "limit": limit, "offset": offset}


class UserOut(BaseModel):
    """A user profile as every route shows it."""

    id: str
    tenant_id: str | None
    email: str
    full_name: str
    role: str
    is_active: bool
    created_at: str
    updated_at: str
    last_login_at: str | None


class AnomalyOut(BaseModel):
    """The anomaly detector's verdict on one action (audit entries and policy decisions)."""

    score: float = Field(description="0.0 (usual for this agent) to 1.0 (never seen)")
    is_anomaly: bool = Field(description="score at or above the tenant's threshold")
    model_version: int = Field(description="the detector version that scored it")
    reasons: list[str] = Field(description="what was unusual, e.g. 'tool never used by this agent'")
    type: str | None = Field(default=None, description="the main kind: sequence, burst, off_hours, new_tool, ...")
