"""Structured data as the guard reads it: a JSON or markup document's words, without its syntax.

An agent's tools answer in JSON (a customer record, search results, an order), and an agent passes that answer to
the guard as it got it. The words a model would read as instructions are in the document's strings; its braces,
quotes, keys and commas are syntax. Read as prose, a record of names, addresses and identifiers looks to the
style reading like nothing a person writes (it flagged a third of one benchmark's tool answers), so `normalise`
reads a JSON document as its strings: every string value, and every key that holds a space (a key written as a
sentence is read too), one per line, in document order, with JSON escapes decoded (`\\u0069gnore` is read as
"ignore"). A value split into single words across keys stays readable, one word per line.

`json_strings(text)` is `None` for anything that is not one JSON object or array (text with JSON inside it is
read as it is). `markup_text(text)` is what an XML or HTML document says (its text, comments and spoken
attribute values), which the classifier reads instead of the markup (`normalise.without_links`); the rules read
the markup, where a script or an event handler is. Pure; linear in the text; never raises for any string.
"""

from __future__ import annotations

import html
import json
import re

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


#: A tag, a comment or a CDATA section of XML or HTML (bounded: a `<` with no `>` within 2,000 characters is text).
#: A comment or a CDATA section holds no opening of another (so an unclosed run of them is read in linear time).
_MARKUP = re.compile(
    r"<!--((?:(?!<!--).){0,4000}?)-->|<!\[CDATA\[((?:(?!<!\[CDATA\[).){0,4000}?)\]\]>|<[!?/]?[A-Za-z][^<>]{0,2000}>",
    re.DOTALL,
)
#: An attribute's quoted value inside a tag.
_ATTRIBUTE_VALUE = re.compile(r"""=\s*(?:"([^"]*)"|'([^']*)')""")
MIN_TAGS = 3
MIN_MARKUP_SHARE = 0.4


def markup_text(text: str) -> str | None:
    """What a document that is mostly markup says, for the classifier: its text between tags, its comments and
    CDATA sections, and each attribute value that holds a space (an image's alt text, a title), one stretch per
    line, HTML character references decoded. `None` unless `text` is one document, opening with a tag and closing
    with one, holds at least `MIN_TAGS` tags, and they make at least `MIN_MARKUP_SHARE` of its non-space
    characters (prose that shows a tag or a snippet is read as it is).
    Tag names and attribute names are syntax: a tool's XML answer of records read as prose looked like no text a
    person writes. The rules read the markup itself (a script tag is `script_injection`)."""
    body = text.strip()
    if not body.startswith("<") or not body.endswith(">"):
        return None
    found = list(_MARKUP.finditer(text))
    if len(found) < MIN_TAGS:
        return None
    markup = sum(len("".join(m.group(0).split())) for m in found)
    if markup < MIN_MARKUP_SHARE * len("".join(text.split())):
        return None
    parts: list[str] = []
    cursor = 0
    for tag in found:
        parts.append(text[cursor : tag.start()])
        inner = tag.group(1) or tag.group(2)
        if inner is not None:
            parts.append(inner)
        else:
            parts.extend(v for pair in _ATTRIBUTE_VALUE.findall(tag.group(0)) for v in pair if " " in v.strip())
        cursor = tag.end()
    parts.append(text[cursor:])
    lines = (" ".join(html.unescape(part).split()) for part in parts)
    return "\n".join(line for line in lines if line)
