"""Which strings every supported database can store as text.

PostgreSQL refuses a NUL character (U+0000) in a text value, and neither backend can encode a lone UTF-16
surrogate (U+D800..U+DFFF on its own) as UTF-8. A value holding either is refused before it reaches a
statement, identically on both backends, so that one bad value never fails the transaction it shares with
valid ones.
"""

from __future__ import annotations


def unstorable_reason(value: str) -> str | None:
    """Why `value` cannot be stored as text (a short phrase), or None when it can. Never raises."""
    if "\x00" in value:
        return "contains a NUL character (U+0000)"
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return "contains a lone surrogate (U+D800..U+DFFF), which is not valid Unicode text"
    return None
