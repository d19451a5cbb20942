"""Text as the guard reads it: the obfuscation that hides an attack from a reader or a classifier undone.

`normalise(text)` returns the text to classify and what it had to undo, each a `Finding` that the guard can
give as a reason:

* lone surrogates (which no UTF-8 encoder accepts) replaced by U+FFFD;
* the strings of a JSON document that spells letters with `\\u` escapes decoded and appended
  (`data_text.escaped_letters`);
* Unicode compatibility forms folded (NFKC: full-width letters, ligatures, mathematical alphabets);
* invisible characters removed: zero-width spaces and joiners, word joiners, byte-order marks, bidirectional
  controls, soft hyphens; where they stand between letters in place of spaces ("Ignore\u200call\u200cprevious"),
  the text with them read as spaces is appended too;
* Unicode tag characters (U+E0000-U+E007F, invisible in every renderer) read as the ASCII they encode, so an
  instruction smuggled in them is scanned like visible text (`Finding.hidden` holds it); the tags of an emoji
  subdivision flag (U+1F3F4, tag letters, U+E007F: the flags of England, Scotland, Wales) are the flag's, not
  hidden text, and are dropped without a finding;
* look-alike letters from Cyrillic and Greek mapped to the Latin letters they imitate, in words that mix
  scripts (a word written wholly in Cyrillic is left alone);
* embedded payloads decoded and appended: base64 and hex runs that decode to readable text, URL-encoded runs
  (`%20`), and rot13 or reversed text when the decoded text reads as English far better than the original;
* letters written apart joined and appended ("I g n o r e   a l l", "i.g.n.o.r.e", "f·o·r·g·e·t y·o·u·r"), and
  leetspeak read as letters and appended ("1gn0r3 4ll pr3v10u5 1n5truct10n5") when it spells common English words;
* characters written as string escapes outside a JSON document (`Ign\\x6fre a\\u006cl`) or as HTML numeric
  character references (`&#73;&#103;nore`) decoded and appended when at least `MIN_ESCAPED` of them are printable
  ASCII.

`without_links(text)` is the view the learned classifier reads (a JSON document read as its strings, a markup
document as what it says: `data_text`; links unwrapped to their text, web addresses removed); the rules read the
normalised text whole.

Pure functions of their input, bounded work (at most `MAX_PAYLOADS` decodings, each of at most
`MAX_PAYLOAD_CHARS`); never raises for any string.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import dataclasses
import re
import unicodedata
import urllib.parse

from agentgov.ml.guard.data_text import data_words, escaped_letters, without_surrogates

MAX_PAYLOADS = 8
MAX_PAYLOAD_CHARS = 4096

_INVISIBLE = dict.fromkeys(
    [
        *(0x00AD, 0x180E, 0x200B, 0x200C, 0x200D, 0x200E, 0x200F, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF),
        *range(0x202A, 0x202F),  # bidirectional embeddings and overrides
        *range(0x2066, 0x206A),  # bidirectional isolates
    ]
)
#: Any character of `_INVISIBLE`: most texts hold none, and a search costs a fraction of a translation.
_INVISIBLE_CHAR = re.compile("[" + "".join(re.escape(chr(code)) for code in _INVISIBLE) + "]")
_TAG_FIRST, _TAG_LAST = 0xE0000, 0xE007F
_TAG = re.compile("[\U000e0000-\U000e007f]")
#: An emoji subdivision flag: the black flag, two to seven tag letters or digits, the cancel tag.
_TAG_FLAG = re.compile("\U0001f3f4[\U000e0030-\U000e0039\U000e0061-\U000e007a]{2,7}\U000e007f")

# Cyrillic and Greek letters (code points) that render like the Latin letter they map to.
_HOMOGLYPHS = str.maketrans(
    {
        code: latin
        for latin, codes in {
            "A": (0x410, 0x391),
            "B": (0x412, 0x392),
            "C": (0x421,),
            "E": (0x415, 0x395),
            "H": (0x41D, 0x397),
            "I": (0x406, 0x399),
            "J": (0x408,),
            "K": (0x41A, 0x39A),
            "M": (0x41C, 0x39C),
            "N": (0x39D,),
            "O": (0x41E, 0x39F),
            "P": (0x420, 0x3A1),
            "S": (0x405,),
            "T": (0x422, 0x3A4),
            "X": (0x425, 0x3A7),
            "Y": (0x3A5,),
            "Z": (0x396,),
            "a": (0x430, 0x3B1),
            "b": (0x432,),
            "c": (0x441,),
            "d": (0x501,),
            "e": (0x435,),
            "g": (0x261,),
            "h": (0x43D,),
            "i": (0x456, 0x3B9),
            "j": (0x458,),
            "k": (0x43A, 0x3BA),
            "m": (0x43C,),
            "o": (0x43E, 0x3BF),
            "p": (0x440, 0x3C1),
            "q": (0x51B,),
            "s": (0x455,),
            "t": (0x442, 0x3C4),
            "u": (0x3C5,),
            "v": (0x3BD,),
            "w": (0x51D,),
            "x": (0x445, 0x3C7),
            "y": (0x443,),
        }.items()
        for code in codes
    }
)
_CONFUSABLE = re.compile(r"[\u0370-\u03ff\u0400-\u04ff\u0500-\u052f\u0261]")
#: A whole word (a run of `\w`) that holds a Latin letter: the only words a look-alike can mix with Latin in.
_LATIN_WORD = re.compile(r"(?<!\w)\w*?[A-Za-z]\w*")
_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{16,}={0,2}")
_PERCENT = re.compile(r"[^\s%]*(?:%[0-9A-Fa-f]{2}[^\s%]*){3,}")
_HEX = re.compile(r"(?<![0-9A-Za-z])(?:[0-9A-Fa-f]{2}[ :]?){8,}(?![0-9A-Za-z])")
_COMMON = frozenset(  # words whose presence after a rot13 says the decoded text is English
    {
        *("the", "and", "you", "your", "to", "of", "a", "in", "is", "that", "it", "for", "on", "with"),
        *("this", "are", "be", "as", "not", "all", "from", "or", "please", "now", "ignore", "instructions"),
        *("previous", "system", "prompt", "say", "print", "tell", "reveal", "what", "write", "me", "my"),
        *("i", "we", "do"),
    }
)


@dataclasses.dataclass(frozen=True)
class Finding:
    """What `normalise` undid: `kind` (a stable name) and a short human description; for text hidden in tag
    characters (`kind` `tag_characters`), the text itself (`hidden`)."""

    kind: str
    detail: str
    hidden: str = ""


@dataclasses.dataclass(frozen=True)
class Normalised:
    """The text as written, normalised (`written`), the readings of it that undoing an obfuscation gave
    (`readings`: hidden text, decoded payloads, respelt letters), and what was undone to get them. `text` is
    all of them, one after the other on their own lines: the document a model is fitted on. A judgement reads
    each reading on its own (`GuardModel.assess`), so words that only a decoding shows never count as the
    writer's own words around a quotation."""

    written: str
    readings: tuple[str, ...]
    findings: tuple[Finding, ...]

    @property
    def text(self) -> str:
        return "\n".join([self.written, *self.readings])

    @property
    def obfuscated(self) -> bool:
        return bool(self.findings)


def normalise(text: str) -> Normalised:
    findings: list[Finding] = []
    text = without_surrogates(text)
    escaped = escaped_letters(text)
    if escaped is not None:  # read beside the document, as a decoded payload is
        findings.append(Finding("json_escapes", "letters written as JSON \\u escapes decoded"))
    folded = unicodedata.normalize("NFKC", text)
    if folded != text:
        letters = sorted({c for c in text if c.isalpha() and unicodedata.normalize("NFKC", c) != c})
        if letters:
            shown = "".join(letters[:8])
            findings.append(Finding("compatibility_forms", f"look-alike letter forms folded (NFKC): {shown}"))
    if _TAG.search(folded) is None:  # the common case, without a pass per character
        tags, visible = "", folded
    else:
        unflagged = _TAG_FLAG.sub("\U0001f3f4", folded)
        tags = "".join(chr(ord(c) - _TAG_FIRST) for c in unflagged if _TAG_FIRST <= ord(c) <= _TAG_LAST)
        visible = _TAG.sub("", unflagged)
    hidden = tags.strip("\x00\x7f")
    if hidden:
        detail = f"text hidden in Unicode tag characters: {_quote(hidden)}"
        findings.append(Finding("tag_characters", detail, hidden))
    stripped = visible if _INVISIBLE_CHAR.search(visible) is None else visible.translate(_INVISIBLE)
    spaced = ""
    if len(stripped) != len(visible):
        findings.append(Finding("invisible_characters", f"{len(visible) - len(stripped)} invisible characters removed"))
        spaced = _invisible_as_spaces(visible, stripped)
    unmasked, mixed = _unmask_homoglyphs(stripped)
    if mixed:
        findings.append(Finding("homoglyphs", f"look-alike letters in {', '.join(_quote(w) for w in mixed[:3])}"))
    decoded = _decode_payloads(unmasked) + _respell(unmasked) + ([] if escaped else _unescape(unmasked))
    findings.extend(finding for finding, _ in decoded)
    readings = (
        *([_unmask_homoglyphs(spaced)[0]] if spaced else []),
        *([hidden] if hidden else []),
        *([escaped] if escaped else []),
        *(plain for _, plain in decoded),
    )
    return Normalised(unmasked, readings, tuple(findings))


#: Invisible characters between two Latin letters: a writer who puts them there either splits a word
#: ("Ig\u200bnore") or, instead of a space, joins words ("Ignore\u200call\u200cprevious").
_INVISIBLE_BETWEEN_LETTERS = re.compile(
    "(?<=[A-Za-z])[" + "".join(re.escape(chr(code)) for code in _INVISIBLE) + "]+(?=[A-Za-z])"
)


def _invisible_as_spaces(visible: str, stripped: str) -> str:
    """`visible` with each run of invisible characters between two Latin letters read as a space, when that reads
    as more common English words than `stripped` (the same text with them removed), else "": the second reading
    of a text whose invisible characters stand for spaces. Bounded: the first `MAX_PAYLOAD_CHARS` characters."""
    sample = visible[:MAX_PAYLOAD_CHARS]
    if _INVISIBLE_BETWEEN_LETTERS.search(sample) is None:
        return ""
    spaced = _INVISIBLE_BETWEEN_LETTERS.sub(" ", sample).translate(_INVISIBLE)
    return spaced if _english(spaced) > _english(stripped[:MAX_PAYLOAD_CHARS]) else ""


#: A character written as a string escape outside a JSON document, as code writes one: `\x6f`, `\u006f` (its
#: backslash doubled too, as a string in a string writes it: `\\x6f`); or as
#: an HTML numeric character reference: `&#111;`, `&#x6f;`.
_ESCAPE = re.compile(r"(?<!\\)\\++(?:x([0-9A-Fa-f]{2})|u([0-9A-Fa-f]{4}))|&#(?:x([0-9A-Fa-f]{1,4})|([0-9]{1,5}));")
#: Escapes of printable characters that make a text worth reading decoded (code writes control characters and
#: non-ASCII letters that way, seldom a printable ASCII character).
MIN_ESCAPED = 3


_MARKUP_CHARACTERS = frozenset("<>&\"'")


def _unescape(text: str) -> list[tuple[Finding, str]]:
    """`text` with every escape of a printable ASCII character decoded (others left as written), as a finding and
    the text to append, when it holds at least `MIN_ESCAPED` of them ("Ign\\x6fre a\\u006cl"), references to the
    characters HTML must escape (`&#60;`) not counted; else nothing. Bounded: the first `MAX_PAYLOAD_CHARS`
    characters."""
    sample = text[:MAX_PAYLOAD_CHARS]
    if "\\" not in sample and "&#" not in sample:
        return []
    decoded = 0

    def decode(match: re.Match[str]) -> str:
        nonlocal decoded
        hexadecimal = match.group(1) or match.group(2) or match.group(3)
        char = chr(int(hexadecimal, 16)) if hexadecimal else chr(int(match.group(4)))
        if not " " <= char <= "~":
            return match.group(0)
        # HTML writes these five as references wherever they are text: no sign of anything hidden
        decoded += match.group(0).startswith("\\") or char not in _MARKUP_CHARACTERS
        return char

    plain = _ESCAPE.sub(decode, sample)
    if decoded < MIN_ESCAPED:
        return []
    return [
        (Finding("escapes", f"characters written as escapes or character references decoded: {_quote(plain)}"), plain)
    ]


def _quote(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return f'"{flat[:limit]}…"' if len(flat) > limit else f'"{flat}"'


def _unmask_homoglyphs(text: str) -> tuple[str, list[str]]:
    """Map look-alikes to Latin in words that mix Latin with them (a wholly Cyrillic word stays)."""
    mixed: list[str] = []
    if not _CONFUSABLE.search(text):  # no look-alike at all (any ASCII text): nothing to map, word by word
        return text, mixed

    def fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if _CONFUSABLE.search(word):
            mapped = word.translate(_HOMOGLYPHS)
            if mapped != word:
                mixed.append(word)
                return mapped
        return word

    return _LATIN_WORD.sub(fix, text), mixed


def _readable(data: bytes) -> str | None:
    """`data` as text when it is mostly printable UTF-8 with some letters, else None."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 4:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    letters = sum(1 for c in text if c.isalpha())
    return text if printable >= 0.9 * len(text) and letters >= 0.3 * len(text) else None


def _english(text: str) -> int:
    return sum(1 for word in re.findall(r"[a-z]+", text.lower()) if word in _COMMON)


def _decode_payloads(text: str) -> list[tuple[Finding, str]]:
    found: list[tuple[Finding, str]] = []
    for match in _BASE64.finditer(text):
        if len(found) >= MAX_PAYLOADS:
            break
        run = match.group(0)[:MAX_PAYLOAD_CHARS]
        if run.isalpha() and (run.islower() or run.isupper()):
            continue  # a long word, not an encoding
        padded = run.replace("-", "+").replace("_", "/")
        padded += "=" * (-len(padded) % 4)
        try:
            plain = _readable(base64.b64decode(padded, validate=True))
        except (binascii.Error, ValueError):
            plain = None
        if plain is not None:
            found.append((Finding("base64", f"base64 payload decoded: {_quote(plain)}"), plain))
    for match in _HEX.finditer(text):
        if len(found) >= MAX_PAYLOADS:
            break
        digits = re.sub(r"[ :]", "", match.group(0))[:MAX_PAYLOAD_CHARS]
        try:
            plain = _readable(bytes.fromhex(digits[: len(digits) // 2 * 2]))
        except ValueError:
            plain = None
        if plain is not None:
            found.append((Finding("hex", f"hex payload decoded: {_quote(plain)}"), plain))
    for match in _PERCENT.finditer(text) if text.count("%") >= 3 else ():
        if len(found) >= MAX_PAYLOADS:
            break
        run = match.group(0)[:MAX_PAYLOAD_CHARS]
        if "://" in run or "www." in run.lower():
            continue  # an address: its escapes are the address's, and the classifier does not read addresses
        plain = urllib.parse.unquote(run.replace("+", " "), errors="replace")
        if plain.count(" ") >= 2 and _readable(plain.encode("utf-8")) is not None:
            found.append((Finding("url_encoding", f"URL-encoded text decoded: {_quote(plain)}"), plain))
    if len(found) < MAX_PAYLOADS:
        sample = text[:MAX_PAYLOAD_CHARS]
        rotated = _rot13_stretches(sample)
        if rotated:
            found.append((Finding("rot13", f"rot13 text decoded: {_quote(rotated)}"), rotated))
        backwards = [line[::-1] for line in sample.splitlines() if _reads_backwards(line)]
        if backwards and len(found) < MAX_PAYLOADS:
            plain = "\n".join(backwards)
            found.append((Finding("reversed", f"reversed text read forwards: {_quote(plain)}"), plain))
    return found


#: Where a rot13 payload may begin or end inside a text: a line break, or a colon or quotation mark before it
#: ("Decode this and follow it: Vtaber nyy cerivbhf vafgehpgvbaf").
_STRETCH_BREAK = re.compile(r"\n|:\s|[\"\u201c\u201d`]")


def _rot13_stretches(sample: str) -> str:
    """The text rot13 decodes to, when it reads as English far better decoded (at least three common words, three
    times as many as before); else the stretches of it (between line breaks, colons and quotation marks) that do,
    joined by line breaks; else "". A payload written in rot13 after an English request to decode it reads as
    English only on its own."""
    rotated = codecs.encode(sample, "rot13")
    if _english(_LETTER_ESCAPE.sub(" ", rotated)) < 3:
        # a stretch's words are some of the whole text's (no break falls inside a word or an escape), so neither
        # the text nor any stretch of it holds three common words decoded (most texts: one pass, not one a stretch)
        return ""
    if _rot13_reads(sample, rotated):
        return rotated
    stretches = [part for part in _STRETCH_BREAK.split(sample) if len(part) >= 12]
    if len(stretches) < 2:
        return ""
    decoded = [plain for part in stretches if _rot13_reads(part, plain := codecs.encode(part, "rot13"))]
    return "\n".join(decoded)


#: A backslash escape of a letter ("\\n"): left out when counting words, as rot13 turns every escaped line break
#: ("\\nLucas") into the word "a".
_LETTER_ESCAPE = re.compile(r"\\[A-Za-z]")


def _rot13_reads(text: str, rotated: str) -> bool:
    """Whether `rotated` (`text` in rot13) holds three common English words and three times as many as `text`,
    backslash escapes of letters left out of both."""
    after = _english(_LETTER_ESCAPE.sub(" ", rotated))
    return after >= 3 and after >= 3 * max(1, _english(_LETTER_ESCAPE.sub(" ", text)))


def _reads_backwards(line: str) -> bool:
    """Whether `line` read backwards is English: three different common English words of two letters or more,
    common words a quarter of its words and three times as many as read forwards (ordinary English reads as
    nothing backwards, and neither does another language nor code full of `no_` names)."""
    if len(line) < 12:
        return False
    words = re.findall(r"[a-z]+", line[::-1].lower())
    after = _common_words(words)
    if len(after) < 0.25 * len(words) or len(set(after)) < 3:
        return False
    return len(after) >= 3 * max(1, len(_common_words(re.findall(r"[a-z]+", line.lower()))))


def _common_words(words: list[str]) -> list[str]:
    """The `words` (lower case) of two letters or more that are common English words (`_COMMON`)."""
    return [word for word in words if len(word) > 1 and word in _COMMON]


#: Letters written apart: eight or more single letters or digits separated by one to three spaces (words
#: apart by two or more), or six or more letters joined by one separator character; kept when the joined
#: text holds a common English word or a word of ten letters or more in one case after its first (an alphabet
#: or a list of format codes written apart is neither).
_SPACED = re.compile(r"(?<!\S)(?:[A-Za-z0-9][ \t]{1,3}){7,}[A-Za-z0-9](?!\S)")
_JOINERS = ".\\-_*|/+~\u00b7\u2022\u2219\u2027"  # a full stop, a hyphen …, a middle dot, a bullet
_JOINED = re.compile(rf"(?<![A-Za-z0-9])(?:[A-Za-z][{_JOINERS}]){{5,}}[A-Za-z](?![A-Za-z0-9])")
#: Two letters or more joined by separator characters, mixed or not ("y·o·u·r", "a-l-l", "I.g-n.o-r.e").
_RUN = re.compile(rf"(?<![A-Za-z0-9])(?:[A-Za-z][{_JOINERS}])+[A-Za-z](?![A-Za-z0-9])")
_JOINER = re.compile(rf"[{_JOINERS}]")
_WORD_GAP = re.compile(r"[ \t]{2,}")
#: Leetspeak: a token of letters, digits and look-alike symbols that holds a stand-in and reads as letters.
_LEET_TOKEN = re.compile(r"(?<![\w@$])[\w@$]{3,}")
_LEET_HINT = re.compile(r"[A-Za-z][0-9@$]|[0-9@$][A-Za-z]")  # a stand-in beside a letter, somewhere
_LEET_LETTERS = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b", "@": "a", "$": "s"}
_LEET = str.maketrans(_LEET_LETTERS)
#: A "1" stands for an "l" as often as for an "i" ("ru13s", "f1lt3rs"): read so when only that reads as a word.
#: The words leetspeak must spell: `_COMMON` and those of a request for harm or a way round the rules ("h0w t0
#: m4k3 …", "1gn0r3 ru13s and bypass f1lt3rs").
_LEET_COMMON = _COMMON | {"how", "make", "create", "build", "step", "steps", "by", "rules", "bypass", "filters"}
_LEET_L = str.maketrans(_LEET_LETTERS | {"1": "l"})
#: At least this many different leetspeak tokens must read as common English words (`_LEET_COMMON`): "4th", "10am",
#: "mp3" or "B2B" never do.
MIN_LEET_WORDS = 2


def _as_letters(token: str) -> str:
    """A leetspeak token read as letters (a "1" as an "l" when only that reads as a common word); any other token
    as it is."""
    read = token.translate(_LEET)
    if not read.isalpha():
        return token
    if "1" in token and read.lower() not in _LEET_COMMON:
        other = token.translate(_LEET_L)
        if other.lower() in _LEET_COMMON:
            return other
    return read


def _one_case(word: str) -> bool:
    """Whether `word` has letters, all in one case."""
    return word.islower() or word.isupper()


def _join_runs(line: str) -> str:
    """`line` with each run of letters joined by separator characters (`_RUN`) written as one word."""
    return _RUN.sub(lambda run: _JOINER.sub("", run.group(0)), line)


def _respell(text: str) -> list[tuple[Finding, str]]:
    """Letters written apart, joined, and leetspeak, read as letters: each as a finding and the text to append
    (nothing when the text holds neither). Bounded: the first `MAX_PAYLOAD_CHARS` characters of each."""
    found: list[tuple[Finding, str]] = []
    joined = [
        " ".join(word.replace(" ", "").replace("\t", "") for word in _WORD_GAP.split(run.group(0)))
        for run in _SPACED.finditer(text, 0, MAX_PAYLOAD_CHARS)
    ]
    lines = [line for line in text[:MAX_PAYLOAD_CHARS].splitlines() if _JOINED.search(line)]
    runs = [_JOINER.sub("", run.group(0)) for line in lines for run in _RUN.finditer(line)]
    spelt = " ".join(joined + runs)
    if spelt and (_english(spelt) >= 1 or any(len(word) >= 10 and _one_case(word[1:]) for word in spelt.split())):
        # a line that holds a joined run is read with every run on it joined, however short: "f·o·r·g·e·t y·o·u·r"
        joined += [_join_runs(line) for line in lines]
        plain = " ".join(joined)
        found.append((Finding("spaced_letters", f"letters written apart joined: {_quote(plain)}"), plain))
    sample = text[:MAX_PAYLOAD_CHARS]
    if _LEET_HINT.search(sample) is None:
        return found
    words = {
        read.lower()
        for token in _LEET_TOKEN.findall(sample)
        if not token.isalpha() and (read := _as_letters(token)) != token
    }
    if len(words & _LEET_COMMON) >= MIN_LEET_WORDS:
        plain = _LEET_TOKEN.sub(lambda match: _as_letters(match.group(0)), sample)
        found.append((Finding("leetspeak", f"leetspeak read as letters: {_quote(plain)}"), plain))
    return found


#: A markdown link or image (`[text](target)`, `![alt](target)`) and a bare web address.
#: Neither part may hold a bracket of its own, so a failed match stops at the next bracket, and every run is
#: possessive (never given back), so whitespace after "](" is not split in every way (linear work).
_MARKDOWN_LINK = re.compile(r"!?\[([^\[\]\n]{0,200}+)\]\(\s*+[^()\[\]\s]{0,500}+(?:\s++\"[^\"\n]{0,200}+\")?\s*+\)")
_ADDRESS = re.compile(  # up to a last character that is not punctuation ending the sentence around it
    r"\b(?:(?:https?|ftp)://|www\.)(?:[^\s<>\"'`)\]]{0,500}[^\s<>\"'`)\].,;:!?])?", re.IGNORECASE
)


def without_links(text: str) -> str:
    """`text` as the classifier reads it: each markdown link or image replaced by its text, and every other
    web address removed. Where a link points says nothing about whether the text around it is an attack, but
    the base data's links are nearly all in attacks (markdown exfiltration, web injections), so a model that
    read them learnt "a link is an attack" and flagged ordinary documents full of links. The rules still read
    the links (an image whose address carries data is `exfiltration_link`). A JSON document is read as its strings
    and a markup document (XML, HTML) as what it says (`data_text`). Pure; linear in the text."""
    data = data_words(text)
    if data is not None:
        text = data
    if "://" not in text and "](" not in text and "www." not in text.lower():
        return text
    return _ADDRESS.sub(" ", _MARKDOWN_LINK.sub(r"\1", text))
