"""Ids in requests: one parser, one 422 shape for every route."""

from __future__ import annotations

import uuid

from agentgov.http.errors import ApiError


def parse_uuid(raw: str, field: str, where: str = "path parameter") -> str:
    """The canonical (lower-case, hyphenated) form of the UUID `raw`.

    Raises `ApiError` 422 `"Invalid <where>: <field>: not a valid UUID"` with
    `errors=[{"field": field, "message": "not a valid UUID", "type": "uuid_parsing"}]`.
    """
    try:
        return str(uuid.UUID(raw))
    except (ValueError, TypeError, AttributeError):
        raise ApiError(
            422,
            f"Invalid {where}: {field}: not a valid UUID",
            errors=[{"field": field, "message": "not a valid UUID", "type": "uuid_parsing"}],
        ) from None
