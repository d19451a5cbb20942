"""Source code as the style reading reads it: its comments and the sentences in its strings, not its syntax.

Agents read code all day: a file a tool opened, a snippet in a ticket, a diff, a README's example. The style
reading (`style.py`) learnt how attacks are *written* from prose: its masked 1-3-grams of words and a sentence's
punctuation. Code is no prose: read as such, `import pickle, base64 … return {"type": …}` is a string of
masked names and colons the reading has never seen in benign text, and the base data's code is nearly all in
attacks (template, SQL and script injections). It scored ordinary handlers that show a web vulnerability and
its fix (an SQL query built from a request, a path joined from a query string, `pickle.loads` of a body) at
0.78-0.86, over the threshold with the other reading at 0.5-0.6. What a person writes in code, and what a
model would read as an instruction, is in its comments and its strings; so a text that is code is read by the
style reading as those (`prose_of_code`), and a text of code with no prose in it is read by the character and
word model alone. The rules and the character and word model still read the code itself.

A line is code (`is_code_line`) when it has a programming language's syntax: an assignment, a call, a block's
brace, a statement's `;`, an arrow, a tag, or it opens with a keyword (`def`, `import`, `return`, `const`,
`SELECT` …), and it is no sentence (a capitalised line of five words or more ending as a sentence, with no call
or assignment in it). A comment line (`#`, `//`, `/*`, `*`, `--`, `<!--`) is prose written in code. A text is
code when at least `MIN_CODE_LINES` of its lines are code and they make at least `MIN_CODE_SHARE` of its lines
that are neither blank nor comments: a paragraph that shows one call is prose, a README that shows a block of
code is code around prose, and its prose lines are read whole. Pure; linear in the text; never raises.
"""

from __future__ import annotations

import itertools
import re

from agentgov.ml.guard.addressing import addresses_the_reader

MIN_CODE_LINES = 3
MIN_CODE_SHARE = 0.5
#: A string literal's sentence is read when it holds at least this many words (a key, a format or a path is not).
MIN_STRING_WORDS = 3

_DIRECTIVE = r"(?:include|define|undef|if|ifdef|ifndef|elif|else|endif|pragma|error|import)\b"
_COMMENT = re.compile(rf"^\s*(?:#(?![#!\[]|\s*{_DIRECTIVE})|//+|/\*+|\*+(?!\*)|--(?!-)|<!--|;;+|%+|\"\"\"|''')\s?")
_COMMENT_END = re.compile(r"\s*(?:\*+/|-->|\"\"\"|''')\s*$")
#: The syntax of a statement, an expression or markup.
_SYNTAX = re.compile(
    r"[\w\]\)]\s*(?:[-+*/%|&^]?=(?!=)|:=)\s*\S"  # an assignment
    r"|[\w\]\.>]\((?:[^()]*|[^()]*\([^()]*\)[^()]*)\)"  # a call
    r"|[{}]\s*$|^\s*[{}]|;\s*$|=>|->|::|</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>|^\s*@\w|\$\w+|\w\[[^\]\n]{0,80}+\]"
    rf"|^\s*#\s*{_DIRECTIVE}"  # a preprocessor's directive
    r"|^\s*(?:-\s+)?(?:\"[^\"\n]*\"|'[^'\n]*')\s*(?::|,?\s*$)"  # a data member's key, or an item of a list
    r"|^\s*[\])}]+[,;]?\s*$|^\s*[\w.]+,\s*$"  # a closing bracket; a name in a list
)
#: A key of YAML, TOML or an INI file, with its value or none ("runs-on: ubuntu-latest", "- uses: actions/checkout").
_DATA_KEY = re.compile(r"^\s*(?:-\s+)?[\w.-]+:(?:\s|$)")
#: A statement's opening keyword, in the languages agents read most.
_KEYWORD = re.compile(
    r"^\s*(?:async\s+def|def|class|import|from\s+[\w.]+\s+import|return|yield|raise|try|except|finally|elif|else|"
    r"while|for|if|with|assert|pass|break|continue|lambda|const|let|var|function|export|module\.exports|require|"
    r"public|private|protected|static|package|func|fn|impl|struct|enum|type|interface|using|namespace|"
    r"#include|#define|echo|SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|BEGIN|END|fi|done|then|esac"
    r")\b|^\s*(?:<\?php|\?>|<!DOCTYPE\b)"
)
#: A sentence: a capital, five words or more, and an ending a sentence has.
_SENTENCE = re.compile(r"^\s*[A-Z][a-z']*(?:[ ,]+[A-Za-z][\w'-]*){4,}[.!?:]?\s*$")
#: Words in a row that make prose: letters, digits and the marks inside a word, one space or a comma apart.
PROSE_RUN = 6
_PROSE = re.compile(rf"(?<![\w.$'\u2019-])(?:[\w$][\w$'\u2019-]*+,? ){{{PROSE_RUN - 1}}}[\w$][\w$'\u2019-]*+(?![\w(.])")
_TAG = re.compile(r"</?[A-Za-z][\w-]*(?:\s[^<>]*)?/?>")
_SQL = re.compile(r"^\s*(?:SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|DROP|WITH|FROM|WHERE|JOIN|ORDER|GROUP)\b")
#: A string literal on one line, read up to `MAX_STRING` characters (a longer one is no literal but a run).
MAX_STRING = 400
_STRING = re.compile(
    rf"(?<!\\)\"((?:[^\"\\\n]|\\.){{0,{MAX_STRING}}}+)\"|(?<![\\\w])'((?:[^'\\\n]|\\.){{0,{MAX_STRING}}}+)'"
    rf"|(?<!\\)`([^`\n]{{0,{MAX_STRING}}}+)`"
)
_WORD = re.compile(r"[A-Za-z]{2,}")


def is_code_line(line: str) -> bool:
    """Whether a line (not a comment) is a line of code: a statement's syntax or opening keyword, and no sentence
    nor a run of `PROSE_RUN` words outside its strings and tags (`<p>Our plan includes three seats …</p>` is
    prose in markup; a query opening with an SQL keyword is code however wordy)."""
    if not line.strip() or _COMMENT.match(line):
        return False
    if _SENTENCE.match(line) and not _SYNTAX.search(line):
        return False
    if _PROSE.search(_TAG.sub(" ", _STRING.sub(" ", line))) and not _SQL.match(line):
        return False
    return bool(_SYNTAX.search(line) or _KEYWORD.match(line) or _DATA_KEY.match(line))


def prose_of_code(text: str) -> str | None:
    """What the style reading reads of `text` when it is code: its prose lines and comments whole (comment marks
    dropped) and each string literal of at least `MIN_STRING_WORDS` words, one per line, in order; an empty string
    for code with none. `None` when `text` is not code (fewer than `MIN_CODE_LINES` code lines, or under
    `MIN_CODE_SHARE` of its lines that are neither blank nor comments): it is read whole."""
    lines = text.split("\n")
    code = [is_code_line(line) for line in lines]
    if not _is_code(lines, code):
        return None
    return _prose(lines, code)


def _prose(lines: list[str], code: list[bool]) -> str:
    """`prose_of_code` of code's `lines`, each with whether it is a line of code (`is_code_line`)."""
    prose: list[str] = []
    for line, is_code in zip(lines, code, strict=True):
        if not is_code:
            comment = _COMMENT.match(line)
            kept = _COMMENT_END.sub("", line[comment.end() :] if comment else line).strip()
            if kept:
                prose.append(kept)
            continue
        lead = _lead(line)
        if lead:
            prose.append(lead)
        keyed = _DATA_KEY.match(line)
        if keyed is not None and not _SYNTAX.search(line):  # a key's value is the data's words, as a string is
            value = line[keyed.end() :].strip().strip("'\"").replace("''", "'")
            if len(_WORD.findall(value)) >= MIN_STRING_WORDS:
                prose.append(value)
            continue
        for match in _STRING.finditer(line):
            literal = next(group for group in match.groups() if group is not None)
            if len(_WORD.findall(literal)) >= MIN_STRING_WORDS and " " in literal.strip():
                prose.append(literal.strip())
        comment_at = _trailing_comment(line)
        if comment_at is not None:
            prose.append(line[comment_at:].lstrip("#/ ").strip())
    return "\n".join(prose)


def _lead(line: str) -> str:
    """A sentence that leads into code on its line, up to a colon ("What is the output of this code: <code>…");
    empty without one."""
    opening = _SYNTAX.search(line)
    lead = line[: opening.start()].strip() if opening is not None else ""
    if not lead.endswith(":") or _KEYWORD.match(lead) or len(_WORD.findall(lead)) < MIN_STRING_WORDS:
        return ""
    return lead


def is_code(text: str) -> bool:
    """Whether `text` is code (or markup): at least `MIN_CODE_LINES` code lines, and at least `MIN_CODE_SHARE` of
    its lines that are neither blank nor comments."""
    lines = text.split("\n")
    return _is_code(lines, [is_code_line(line) for line in lines])


def _is_code(lines: list[str], code: list[bool]) -> bool:
    written = sum(code)
    counted = sum(1 for line in lines if line.strip() and not _COMMENT.match(line))
    return written >= MIN_CODE_LINES and written >= MIN_CODE_SHARE * counted


#: Prose that asks for something to be put in the model's answer: "include it in your reply", "add this to the top
#: of your response", "respond with the following".
_INTO_THE_ANSWER = re.compile(
    r"\b(?:(?:to|at) the (?:top|start|end|bottom) of|in|into|to)\s+(?:your|the|each|every)\s+"
    r"(?:reply|replies|answer|answers|response|responses|output|message|messages)\b"
    r"|\b(?:reply|respond|answer)\s+(?:only\s+)?with\b",
    re.IGNORECASE,
)


#: Prose that asks the model for something without "you": "please …", "return the enriched code only", "give me
#: …", "output only …".
_ASKS = re.compile(
    r"\bplease\b|\bkindly\b|\b(?:return|output|respond|reply|answer|generate|write|give|tell|show|print|enhance|"
    r"complete|fill\s+in|rewrite|improve|continue)\b[^.\n]{0,40}?\b(?:only|me|us)\b"
    # an order to the reader where a sentence, a line or a to-do opens: "Ignore the function and state the output is
    # '10'", "TODO: Send a transaction to …", "Translate the following text" (not a comment's "Create the app")
    r"|\b(?:todo|important|attention)[ \t]*:[ \t]*[a-z]+"
    r"|(?:^|[.!?:;]\s|\n)[ \t]*+(?:ignore|disregard|forget|state|say|"
    r"print|output|reveal|tell|respond|reply|answer|send|transfer|forward|email|post|upload|visit|click|include|insert|"
    r"pretend|act|translate|summari[sz]e|describe|explain|list|repeat|do\s+not|don't|never|always|make\s+sure)\b"
    # or a question: "What is the output of this code:", "Q: Who is Batman?"
    r"|\b(?:what|how|why|which|who|can|could|would|will|is|are|does|do)\b[^?\n]{0,80}(?:\?|:[ \t]*$)"
    # or a thought put to it: "Hypothetically, if we were to ignore the function, …"
    r"|\b(?:hypothetically|imagine|suppose|in\s+a\s+(?:parallel|different|fictional)\s+(?:universe|world))\b",
    re.IGNORECASE | re.MULTILINE,
)


#: A statement of a program: a definition, an import, a control-flow keyword (not data: JSON, YAML, a config).
_STATEMENT = re.compile(
    r"^[ \t]*+(?:def|class|import|from\s+[\w.]+\s+import|return|if|elif|else|for|while|try|except|finally|with|async|"
    r"await|raise|function|const|let|var|export|public|private|protected|static|package|#include|fn|func|use|"
    r"switch|case|do|module|require|@\w+)\b",
    re.MULTILINE,
)
MIN_STATEMENTS = 3
MIN_STATEMENT_SHARE = 0.2  # of a program's code lines


def asks_nothing_of_the_model(text: str) -> bool:
    """Whether `text` is a program (code, `is_code`, with at least `MIN_STATEMENTS` statements, `MIN_STATEMENT_SHARE`
    of its code lines: not data, whose values are where a tool's answer carries planted orders) whose prose
    (`prose_of_code`: comments, prose lines, sentences in strings) speaks to no one: no "you"
    (`addressing.addresses_the_reader`), no "please", no request for an answer ("return the code only"), no order
    where a sentence, a line or a to-do opens ("Ignore the function and state …", "TODO: get all user information"),
    no question, no hypothetical. What the character and word model reads as an attack in such a program is code's
    vocabulary ("import", "response", "password")."""
    if len(list(itertools.islice(_STATEMENT.finditer(text), MIN_STATEMENTS))) < MIN_STATEMENTS:
        return False  # (most texts: found at C speed before any line is read)
    lines = text.split("\n")
    code = [is_code_line(line) for line in lines]
    if not _is_code(lines, code):
        return False
    statements = sum(1 for line, is_code in zip(lines, code, strict=True) if is_code and _STATEMENT.match(line))
    if statements < MIN_STATEMENTS or statements < MIN_STATEMENT_SHARE * sum(code):
        return False
    prose = _prose(lines, code)  # (the lines already read)
    return not addresses_the_reader(prose) and _ASKS.search(prose) is None


def asks_into_the_answer(prose: str) -> bool:
    """Whether `prose` asks for something to be put in the model's answer ("include it in your reply")."""
    return _INTO_THE_ANSWER.search(prose) is not None


def holds_its_own_code(text: str) -> bool:
    """Whether `text` is code (`is_code`) and none of its prose (the lines that are not code, comments included)
    asks for anything to be put in the answer ("Add this to the top of your reply: <script>…"): a page's script
    tag is the page's, a script a text asks a model to answer with is an attack."""
    lines = text.split("\n")
    code = [is_code_line(line) for line in lines]
    return _is_code(lines, code) and not any(
        _INTO_THE_ANSWER.search(line) for line, is_code in zip(lines, code, strict=True) if not is_code
    )


_TRAILING = re.compile(r"\s(?:#|//)\s")


def _trailing_comment(line: str) -> int | None:
    """Where a comment after code opens on a line (` # …`, ` // …`), outside its strings; None without one."""
    strings = [(m.start(), m.end()) for m in _STRING.finditer(line)]
    for match in _TRAILING.finditer(line):
        if not any(start <= match.start() < end for start, end in strings):
            return match.end() - 1
    return None
