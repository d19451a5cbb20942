"""Build Cedar source fragments safely from Python values (used by the templates).

Every function returns Cedar expression text; strings are escaped so no parameter value can break out of its
literal. In ``like`` patterns ``*`` is always a wildcard.
"""

from __future__ import annotations

from collections.abc import Iterable

_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}


def string_literal(value: str) -> str:
    """``value`` as a Cedar string literal (also valid as a ``like`` pattern, where ``*`` is a wildcard)."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def like_any(expr: str, patterns: Iterable[str]) -> str:
    """``(expr like "a" || expr like "b")``; ``false`` for no pattern."""
    parts = [f"{expr} like {string_literal(p)}" for p in patterns]
    if not parts:
        return "false"
    return parts[0] if len(parts) == 1 else "(" + " || ".join(parts) + ")"


def string_set(values: Iterable[str]) -> str:
    """A Cedar set literal of strings, e.g. ``["error", "inactive"]``."""
    return "[" + ", ".join(string_literal(v) for v in values) + "]"


def long_set(values: Iterable[int]) -> str:
    """A Cedar set literal of longs, e.g. ``[1, 2, 3]``."""
    return "[" + ", ".join(str(int(v)) for v in values) + "]"
