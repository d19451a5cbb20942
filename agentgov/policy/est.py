"""Read facts out of a policy's EST, Cedar's JSON policy form (``cedarpy.policies_to_json_str``).

Pure functions over plain JSON data; they never raise on well-formed EST.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

_CONTEXT_VAR = {"Var": "context"}


def _walk(node: Any) -> Iterator[dict[str, Any]]:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def action_literals(est: Any) -> set[str]:
    """Ids of every ``Action::"..."`` entity literal in ``est`` (scope and conditions)."""
    return {node["id"] for node in _walk(est) if node.get("type") == "Action" and isinstance(node.get("id"), str)}


def context_attributes(est: Any) -> set[str]:
    """Names of top-level context attributes that ``est`` reads (``context.x``, ``context["x"]``) or tests
    (``context has x``)."""
    found: set[str] = set()
    for node in _walk(est):
        for op in (".", "has"):
            access = node.get(op)
            if isinstance(access, dict) and access.get("left") == _CONTEXT_VAR and isinstance(access.get("attr"), str):
                found.add(access["attr"])
    return found
