"""Structured data as the guard reads it: a JSON document's words, without its syntax.

An agent's tools answer in JSON (a customer record, search results, an order), and an agent passes that answer to
the guard as it got it. The words a model would read as instructions are in the document's strings; its braces,
quotes, keys and commas are syntax. Read as prose, a record of names, addresses and identifiers looks to the
style reading like nothing a person writes (it flagged a third of one benchmark's tool answers), so `normalise`
reads a JSON document as its strings: every string value, and every key that holds a space (a key written as a
sentence is read too), one per line, in document order, with JSON escapes decoded (`\\u0069gnore` is read as
"ignore"). A value split into single words across keys stays readable, one word per line.

`json_strings(text)` is `None` for anything that is not one JSON object or array (text with JSON inside it is
read as it is). Pure; linear in the text; never raises for any string.
"""

from __future__ import annotations

import json

_OPENERS = {"{": "}", "[": "]"}


def json_strings(text: str) -> str | None:
    """The strings of `text` when it is one JSON object or array, one per line with runs of whitespace made one
    space (empty strings dropped); `None` when it is not one (or is nested too deeply to parse)."""
    body = text.strip()
    if not body or _OPENERS.get(body[0]) != body[-1]:
        return None
    try:
        document = json.loads(body)
    except (ValueError, RecursionError):
        return None
    lines: list[str] = []
    stack: list[object] = [document]
    while stack:  # depth first, in document order, without recursion
        node = stack.pop()
        if isinstance(node, dict):
            for key, value in reversed(list(node.items())):
                stack.append(value)
                if len(key.split()) > 1:
                    stack.append(key)
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str):
            line = " ".join(node.split())
            if line:
                lines.append(line)
    return "\n".join(lines)
