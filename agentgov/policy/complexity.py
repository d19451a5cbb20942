"""Bounds on how deep a Cedar text's expressions nest, checked before the Cedar library reads them.

The library's parser and evaluator recurse over an expression's tree on the native stack, and its JSON form
(the EST this service reads) nests as deep as the tree. Measured on this service's worker threads: about 700
nested brackets, 15,000 chained `||` or 10,000-25,000 chained `+` or member accesses overflow the native stack
and kill the whole process (no exception reaches Python); from about 500 chained operators the EST is too deep
for Python's JSON reader. All of these fit in the 100,000 characters a document may hold. So a document is
refused (a `complexity` problem, answered 422) when, outside string literals and comments,

- brackets (`(`, `[`, `{`) nest deeper than `MAX_NESTING`, or
- an expression's tree could be deeper than `MAX_DEPTH`: binary operators chain into a tree one level per
  operator (`a || b || c` is two deep), so the depth is estimated as the brackets open around a point plus
  the operators and member accesses before it at each of their levels (`.`, `+`, `-`, `*`, `||`, `&&`, `!`,
  `==`-like comparisons do not chain; `if` counts one), restarting after each `,` (elements of a set or record
  are siblings) and `;` (each policy is its own tree). Long alternatives belong in a set:
  `action in [Action::"a", Action::"b", ...]` is one level however long.

Both bounds sit far below what fails and far above what a hand-written or templated policy uses. One linear
pass with a regular expression; never raises.
"""

from __future__ import annotations

import re

MAX_NESTING = 64
MAX_DEPTH = 400

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|//[^\n]*|[(\[{]|[)\]}]|[;,]|\|\||&&|[.+\-*!]|\bif\b')


def complexity_problem(cedar: str) -> str | None:
    """Why `cedar` nests too deep for the Cedar library to read safely, or None."""
    chained = [0]  # per open bracket (and the top level): operators chained so far at that level
    depth = 0  # len(chained) - 1 + sum(chained), kept as it changes
    for token in _TOKEN.finditer(cedar):
        text = token.group(0)
        first = text[0]
        if first == '"' or text.startswith("//"):
            continue
        if first in "([{":
            chained.append(0)
            if len(chained) - 1 > MAX_NESTING:
                return f"brackets nest more than {MAX_NESTING} deep"
            depth += 1
        elif first in ")]}":
            if len(chained) > 1:
                depth -= 1 + chained.pop()
        elif first in ",;":
            if first == "," or len(chained) == 1:
                depth -= chained[-1]
                chained[-1] = 0
        else:
            chained[-1] += 1
            depth += 1
            if depth > MAX_DEPTH:
                return (
                    f"an expression nests more than {MAX_DEPTH} deep (a chain of operators or member accesses is "
                    "one level each; write long alternatives as a set: action in [...])"
                )
    return None
