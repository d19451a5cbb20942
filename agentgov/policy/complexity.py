"""Bounds on how deep a Cedar text's expressions nest, checked before the Cedar library reads them.

The library's parser and evaluator recurse over an expression's tree on the native stack. Measured on this
service's worker threads: about 700 nested brackets, 15,000 chained `||` or 10,000-25,000 chained `+` or member
accesses (also when the chain sits in nested groups, `((… + 1 + 1) + 1 …)`), or 10,000 nested `if`s overflow
it, and the whole process dies (no exception reaches Python), well within the 100,000 characters a document
may hold. So a document is refused (a `complexity` problem, answered 422) when, outside string literals and
comments,

- brackets (`(`, `[`, `{`) nest deeper than `MAX_NESTING`, or
- an expression's tree could be deeper than `MAX_DEPTH`. The depth is estimated from above, level by level:
  chained operators (`||`, `&&`, `+`, `-`, `*`, `if`) are left-associative, so each adds a level over the
  deepest operand before or after it (`a || b || c` is two deep over its operands); member accesses, `!`,
  comparisons, `in`, `has`, `like` and `is` add a level to their operand; a bracketed group is an operand one
  deeper than its contents; elements of a set or record (`,`) are siblings, and each policy (`;`) is its own
  tree. The estimate of every open level counts towards the total.

Both bounds sit far below what crashes. (Much shallower trees, from about 59 chained operators, are refused
too, by the Cedar library's JSON reader when the policies are compiled: `validate_document` compiles them and
refuses what it cannot build.) One linear pass with a regular expression; never raises.
"""

from __future__ import annotations

import dataclasses
import re

MAX_NESTING = 64
MAX_DEPTH = 200

_TOKEN = re.compile(
    r'"(?:[^"\\]|\\.)*"?|//[^\n\r]*|[(\[{]|[)\]}]|[;,]|\|\||&&|==|!=|<=|>=|[<>.+\-*!]'
    r"|\b(?:if|in|has|like|is)\b"
)
_CHAINED = frozenset(["||", "&&", "+", "-", "*", "if"])


@dataclasses.dataclass
class _Level:
    """One open bracket (or the top level): the depth of what it has read so far."""

    above: int = 0  # levels the open brackets around it add (fixed while it is open)
    done: int = 0  # deepest element before the last `,`
    chained: int = 0  # chained operators in the current element
    operands: int = 0  # deepest operand of the current element before its last chained operator
    operand: int = 0  # depth of the operand being read

    def depth(self) -> int:
        return max(self.done, self.chained + max(self.operands, self.operand))

    def chain(self) -> None:
        self.operands = max(self.operands, self.operand)
        self.operand = 0
        self.chained += 1

    def next_element(self) -> None:
        self.done = self.depth()
        self.chained = self.operands = self.operand = 0


def complexity_problem(cedar: str) -> str | None:
    """Why `cedar` nests too deep for the Cedar library to read safely, or None."""
    levels = [_Level()]
    for token in _TOKEN.finditer(cedar):
        text = token.group(0)
        first = text[0]
        if first == '"' or text.startswith("//"):
            continue
        level = levels[-1]
        if first in "([{":
            levels.append(_Level(above=level.above + level.depth() + 1))
            if len(levels) - 1 > MAX_NESTING:
                return f"brackets nest more than {MAX_NESTING} deep"
            continue
        if first in ")]}":
            if len(levels) > 1:
                inner = levels.pop().depth() + 1
                levels[-1].operand = max(levels[-1].operand, inner)
        elif text == ",":
            level.next_element()
        elif text == ";":
            if len(levels) == 1:
                levels = [_Level()]
            else:
                level.next_element()
        elif text in _CHAINED:
            level.chain()
        else:
            level.operand += 1
        level = levels[-1]
        if level.above + level.depth() > MAX_DEPTH:
            return (
                f"an expression nests more than {MAX_DEPTH} deep (each chained operator or member access is one "
                "level; write long alternatives as a set: action in [...])"
            )
    return None
