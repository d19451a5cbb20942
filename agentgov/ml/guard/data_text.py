"""Structured data as the classifier reads it: a JSON or markup document's words, without its syntax.

An agent's tools answer in JSON or XML (a customer record, search results, an order), and an agent passes that
answer to the guard as it got it. The words a model would read as instructions are in the document's strings
and text; its braces, quotes, keys, tags and commas are syntax. Read as prose, a record of names, addresses and
identifiers looks to the style reading like nothing a person writes (it flagged a third of one benchmark's tool
answers), so the classifier reads (`normalise.without_links`):

* a JSON document as its strings (`json_strings`): every string value (each value of a duplicated key too; a run
  of one-word values on one line) and every key that is a phrase, one per line, in document order, JSON escapes
  decoded;
* a markup document as what it says (`markup_text`): its text between tags, comments and CDATA, attribute
  values that hold a space, and any words in a tag that are not its name or attributes.

The rules read the document itself, where a key, a script tag or an event handler is; `escaped_letters(text)`
gives them the strings of a JSON document that spells letters with `\\u` escapes (no encoder needs to: they
spell what a reader should not see). Pure; linear in the text; never raises for any string (lone surrogates,
which JSON escapes can make and no encoder can write, become U+FFFD).
"""

from __future__ import annotations

import html
import json
import re

_OPENERS = {"{": "}", "[": "]"}
#: A key's words may be joined by `_`, `-` or `.` ("ignore_all_previous_instructions"); a key of at least
#: `MIN_KEY_WORDS` of them is a phrase and is read ("first_name" is a name, not a phrase).
_KEY_SEPARATOR = re.compile(r"[\s_.-]+")
MIN_KEY_WORDS = 3
_SURROGATE = re.compile(r"[\ud800-\udfff]")
#: A `\\u` escape of a printable ASCII character, which JSON encoders never write (they escape non-ASCII only).
_ESCAPED_ASCII = re.compile(r"\\u00[2-7][0-9a-fA-F]")


class _Pairs(list[tuple[str, object]]):
    """A JSON object's (key, value) pairs in order, duplicated keys kept (`json.loads(object_pairs_hook=...)`)."""


def without_surrogates(text: str) -> str:
    """`text` with each lone surrogate (which no UTF-8 encoder accepts) replaced by U+FFFD."""
    return text if text.isascii() else _SURROGATE.sub("\ufffd", text)


def json_strings(text: str) -> str | None:
    """The strings of `text` when it is one JSON object or array, one per line with runs of whitespace made one
    space (empty strings dropped; a run of one-word strings on one line; every value of a duplicated key kept;
    keys read when they are phrases: they hold a space, or `MIN_KEY_WORDS` words joined by `_`, `-` or `.`);
    `None` when it is not one (or is nested too deeply to parse)."""
    body = text.strip()
    if not body or _OPENERS.get(body[0]) != body[-1]:
        return None
    try:
        document = json.loads(body, object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):
        return None
    lines: list[str] = []
    words: list[str] = []  # a run of one-word strings, read as one line
    stack: list[object] = [document]
    while stack:  # depth first, in document order, without recursion
        node = stack.pop()
        if isinstance(node, _Pairs):
            for key, value in reversed(node):
                stack.append(value)
                phrase = key if len(key.split()) > 1 else " ".join(_KEY_SEPARATOR.split(key))
                if len(phrase.split()) >= MIN_KEY_WORDS or len(key.split()) > 1:
                    stack.append(phrase)
        elif isinstance(node, list):
            stack.extend(reversed(node))
        elif isinstance(node, str):
            parts = node.split()
            if len(parts) == 1:
                words.append(parts[0])
            elif parts:
                if words:
                    lines.append(" ".join(words))
                    words = []
                lines.append(" ".join(parts))
    if words:
        lines.append(" ".join(words))
    return without_surrogates("\n".join(lines))


def escaped_letters(text: str) -> str | None:
    """`json_strings(text)` when `text` is a JSON document that writes a printable ASCII character as a `\\u`
    escape (`\\u0069gnore`), else `None`."""
    if "\\u" not in text or not _ESCAPED_ASCII.search(text):
        return None
    return json_strings(text)


#: A tag, a comment or a CDATA section of XML or HTML (bounded: a `<` with no `>` within 2,000 characters is text).
#: A comment or a CDATA section holds no opening of another (so an unclosed run of them is read in linear time).
_MARKUP = re.compile(
    r"<!--((?:(?!<!--).){0,4000}?)-->|<!\[CDATA\[((?:(?!<!\[CDATA\[).){0,4000}?)\]\]>|<[!?/]?[A-Za-z][^<>]{0,2000}>",
    re.DOTALL,
)
#: An attribute's quoted value inside a tag.
_ATTRIBUTE_VALUE = re.compile(r"""=\s*(?:"([^"]*)"|'([^']*)')""")
#: An attribute with its value, or a closing slash: a tag's syntax.
_ATTRIBUTE = re.compile(r"""[\w:.-]+\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'>]+)|/\s*$""")
MIN_TAGS = 3
MIN_MARKUP_SHARE = 0.4


def markup_text(text: str) -> str | None:
    """What a document that is mostly markup says, for the classifier: its text between tags, its comments and
    CDATA sections, each attribute value that holds a space (an image's alt text, a title) and the words in a tag
    that are neither its name nor an attribute (`<x ignore all …/>`), one stretch per
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
        inner = tag.group(1) if tag.group(1) is not None else tag.group(2)
        if inner is not None:
            parts.append(inner)
        else:
            parts.extend(v for pair in _ATTRIBUTE_VALUE.findall(tag.group(0)) for v in pair if " " in v.strip())
            loose = _ATTRIBUTE.sub(" ", tag.group(0)[1:-1]).split()[1:]  # after the tag's name
            if len(loose) > 1:
                parts.append(" ".join(loose))
        cursor = tag.end()
    parts.append(text[cursor:])
    lines = (" ".join(html.unescape(part).split()) for part in parts)
    return without_surrogates("\n".join(line for line in lines if line))


def data_words(text: str) -> str | None:
    """What a structured document says: `json_strings(text)`, else `markup_text(text)`; `None` for any other
    text."""
    strings = json_strings(text)
    return strings if strings is not None else markup_text(text)
