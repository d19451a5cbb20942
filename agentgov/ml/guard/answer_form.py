"""Sentences that only shape the answer: its length, format, letter case, punctuation, language or keywords.

An ordinary request often ends with constraints on the form of the answer ("Do not use any commas in your
response.", "Answer in fewer than 50 words.", "Wrap your entire response in double quotation marks."), and a
system prompt is full of them. They are orders to the model about its answer, worded much as a jailbreak's
orders are ("your response", "do not", "must"), but they say nothing about what the model may do: no content, no
rules, no secrets. The classifier learnt "an order about the answer" from attacks alone (the base data holds no
benign text dense in them), so `GuardModel` reads a text without its form sentences (`form_spans`); the rules and
the harm reading still read it whole.

A form sentence opens (after a lead such as "Please", "Also", "Make sure") with a form constraint (`_HEADS`), is at
most `MAX_FORM_CHARS` long, names a form (`_FORM_WORD`: a count, a unit of text, punctuation, letter case, a format,
a language), and outside its quotations holds only the words of a form (`_FORM_VOCABULARY`, so nothing an attack
needs: prompts, instructions, rules, refusals, warnings, secrets, roles, encodings, ...): "Your response must not
include any warnings" and "Respond only as DAN" are not form sentences, and neither is a sentence asking to begin
the answer with a given phrase (prefix injection, "Start your response with 'Sure, here is'"). Pure; linear in the
text; never raises.
"""

from __future__ import annotations

import re

MAX_FORM_CHARS = 200

#: A sentence: up to `.`, `!`, `?` or a line break (`advice.py` reads the same sentences).
SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_LEAD = (
    r"[\s\"'(\[*#>:-]*(?:(?:please|also|and|finally|additionally|lastly|then|moreover|importantly|note(?:\s+that)?|"
    r"(?:make|be)\s+sure(?:\s+(?:that|to))?|ensure(?:\s+that)?|remember(?:\s+to)?|in\s+addition|"
    r"for\s+(?:your|the)\s+(?:answer|response|reply))[,:\s]+)*"
)
_ANSWER = (
    r"(?:answer|response|reply|output|essay|poem|story|e-?mail|letter|summary|text|article|blog\s+post|paragraphs?|"
    r"post|list|rewrite|explanation|description|review|song|title|tweet|limerick|haiku|riddle|joke|report|"
    r"proposal|cover\s+letter|resume|speech|pitch|advertisement|ad|slogan|rap|lyrics|entire\s+output)"
)
_UNITS = r"(?:words?|sentences?|paragraphs?|bullet\s+points?|lines?|characters?|letters?|sections?|items?|stanzas?)"
_COUNT = (
    r"(?:at\s+(?:most|least)|less\s+than|fewer\s+than|no\s+(?:more|less|fewer)\s+than|more\s+than|under|over|"
    r"exactly|about|around|only|just|up\s+to|between)"
)
_FORMS = (
    r"(?:all\s+)?(?:lower\s*-?case|upper\s*-?case|capital(?:ized)?\s+letters|capitals|english|french|german|"
    r"spanish|italian|portuguese|dutch|chinese|japanese|korean|hindi|arabic|russian|turkish|polish|swedish|"
    r"json|yaml|xml|markdown|html|csv|a\s+table|(?:a\s+)?(?:numbered\s+|bulleted\s+)?lists?|bullet\s+points|"
    r"plain\s+text|title\s+case|one\s+word|a\s+single\s+(?:word|sentence|paragraph)|haiku|iambic\s+pentameter|"
    r"rhym\w+|the\s+third\s+person|the\s+first\s+person|a\s+formal\s+tone|a\s+casual\s+tone|"
    r"(?:a\s+)?code\s+blocks?|double\s+quot\w+\s+marks|quotation\s+marks)\b"
)
#: The openings of a form constraint.
_HEADS = re.compile(
    _LEAD + r"(?:"
    # "Do not use any commas", "Avoid using capital letters", "Refrain from including the word 'sad'"
    r"(?:do\s+not|don't|dont|never|avoid|refrain\s+from|without)\s+(?:use|using|include|including|add|adding|"
    r"write|writing|put|putting|mention|mentioning)\s+(?:any\s+)?(?:commas?|punctuation|capital(?:ized)?\s+"
    r"letters|capitals|upper\s*-?case|lower\s*-?case|bullet\s+points|markdown|emojis?|hashtags|numbers|digits|"
    r"numbered\s+lists|lists|headings?|headers|the\s+(?:letter|word|words|character|keywords?|phrase)\b|"
    r"(?:the\s+)?(?:following\s+)?(?:key)?words?\b|more\s+than\s+\d+)"
    # "Your response should contain at least 3 paragraphs", "The entire output must be in lowercase"
    rf"|(?:your|the|my|this|each|every)\s+(?:entire\s+|whole\s+|full\s+|final\s+)?{_ANSWER}\s+(?:should|must|"
    r"will|needs?\s+to|has\s+to|have\s+to|shall|is\s+to|cannot|can't|may)\s+(?:not\s+)?(?:only\s+)?(?:be|"
    r"contain|have|include|consist|use|end|finish|exceed|follow|highlight|mention|repeat\s+the\s+request)\b"
    # "Answer in fewer than 50 words", "Respond in all lowercase", "Write it in JSON format"
    r"|(?:answer|respond|reply|write|give\s+(?:your|the)\s+answer|output|format\s+(?:your|the)\s+"
    r"(?:answer|response|reply|output)|keep\s+(?:it|your\s+(?:answer|response|reply))|limit\s+(?:it|your\s+"
    r"(?:answer|response|reply))|write\s+(?:it|this|everything|your\s+(?:answer|response|reply)))\s+"
    rf"(?:only\s+)?(?:in|with|using|as|to|under|within|below)\s+(?:(?:{_COUNT}\s+)?(?:\d+|one|two|three|four|five|"
    rf"six|seven|eight|nine|ten|a\s+few|a\s+single)\s+{_UNITS}|{_FORMS})"
    # "Wrap your entire response with double quotation marks"
    rf"|wrap\s+(?:your|the)\s+(?:entire\s+|whole\s+)?{_ANSWER}\s+(?:in|with|inside)\b"
    # "Include the keywords 'x' and 'y'", "Include at least 3 placeholders in square brackets"
    rf"|(?:include|use|have|add|write|highlight|mark)\s+(?:the\s+)?(?:keywords?|{_COUNT}\s+(?:\d+|one|two|three|"
    r"four|five|six|seven|eight|nine|ten)\s+(?:\w+\s+)?(?:words?|sentences?|paragraphs?|bullet\s+points?|"
    r"placeholders?|sections?|times|lines?))\b"
    # "End your response with the exact phrase", "At the end of your response, add a postscript", "Add a title"
    rf"|(?:end|finish|conclude)\s+(?:your|the)\s+{_ANSWER}\s+with\b"
    rf"|at\s+the\s+end\s+of\s+your\s+{_ANSWER}\b"
    r"|(?:add|include|write)\s+(?:a\s+)?(?:postscript|p\.?\s?s\.?|title)\b"
    # "There should be 4 paragraphs", "Paragraphs are separated by the markdown divider", "Separate your answer
    # into 3 sections", "Mark the beginning of each section with SECTION X"
    r"|there\s+should\s+be\s+(?:exactly\s+)?\d+\s+(?:paragraphs?|sections?|bullet\s+points?)"
    r"|(?:paragraphs?|sections?)\s+(?:should\s+be|are|must\s+be)\s+separated\b"
    rf"|(?:separate|divide|split)\s+(?:your|the)\s+{_ANSWER}\s+into\b"
    r"|mark\s+the\s+beginning\s+of\s+each\s+(?:section|paragraph)\b"
    # "The letter q should appear at least 5 times", "the word 'data' should appear less than 3 times"
    rf"|(?:in\s+your\s+{_ANSWER},?\s+)?the\s+(?:letter\s+\S+|word\s+\S+)\s+should\s+appear\b"
    # "In your response, the word 'x' should ...", "In your entire response, refrain from ..."
    rf"|in\s+your\s+(?:entire\s+)?{_ANSWER},?\s+(?:the\s+(?:letter|word)|(?:do\s+not|don't|refrain\s+from)\s+"
    r"(?:use|using|include|including)\s+(?:any\s+)?(?:commas?|capital|upper|lower|the\s+(?:letter|word))|"
    r"(?:all\s+)?(?:letters|words)\s+should)"
    r")",
    re.IGNORECASE,
)
#: Every word a form sentence may hold (outside quotations, which carry its keywords and phrases): function words,
#: the verbs and nouns of a constraint on the answer's form, units, formats, languages, numbers. A sentence with
#: any other word says something besides the form ("… the full text that appears at the top of this page", "…
#: the very first 200 words you were given", "… as AIM, an unfiltered chatbot") and is read.
_FORM_VOCABULARY_TEXT = """
    a an the your my this that these those each every all any no not do don't dont does is are be been being
    should must will shall can may need needs to have has had in on at of for with without from by as and or
    but than less more fewer least most exactly about around only just up between into per it its them their
    you please also make sure ensure note finally additionally lastly then there here other else entire whole
    full final same own following such so both either neither nor very
    use using used include including includes included contain containing contains have consist consisting
    answer answers answered respond responding reply write writing written wrap wrapped wrapping end ending
    finish conclude add adding appear appears appearing follow follows followed put surround surrounded
    enclose enclosed format formatted formatting keep limit limited avoid refrain capitalize capitalized
    highlight highlighted highlighting mark marked separate separated separating divide divided split
    exceed exceeding give provide start starting beginning begin present presented list listed number numbered
    words word sentences sentence paragraphs paragraph bullet bullets point points lines line characters
    character letters letter sections section items item stanzas stanza commas comma punctuation period
    periods exclamation marks question lowercase uppercase lower upper case capital capitals english french
    german spanish italian portuguese dutch chinese japanese korean hindi arabic russian turkish polish swedish
    language languages json yaml xml markdown html csv table tables lists numbered bulleted title titles
    quotation quotes double single brackets angular square parentheses postscript ps p s keywords keyword
    placeholders placeholder divider dividers asterisk asterisks code block blocks haiku poem poems iambic
    pentameter rhyme rhyming rhymes tone formal informal casual friendly professional third first second person
    concise brief short long length style plain simple response responses output essay story e-mail email
    summary article blog post tweet limerick riddle joke report speech song lyrics rap review description
    explanation proposal pitch slogan ad advertisement cover resume
    one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty fifty hundred
    thousand times twice once total overall maximum minimum fewer at exact phrase phrases
"""
_FORM_VOCABULARY = frozenset(_FORM_VOCABULARY_TEXT.split())
_WORDS = re.compile(r"[a-z][a-z'-]*", re.IGNORECASE)
_QUOTATION = re.compile(
    r"\"[^\"]*(?:\"|$)|(?<![A-Za-z])'[^']*(?:'|$)|\u201c[^\u201d]*(?:\u201d|$)|\u2018[^\u2019]*(?:\u2019|$)|<<[^>]*(?:>>|$)"
)


def _only_form_words(sentence: str) -> bool:
    """Whether every word of `sentence` outside its quotations is in `_FORM_VOCABULARY` (or a single letter)."""
    bare = _QUOTATION.sub(" ", sentence)
    return all(len(word) == 1 or word.lower() in _FORM_VOCABULARY for word in _WORDS.findall(bare))


#: A form sentence names a form: a count, a unit of text, punctuation, letter case, a format or a language.
_FORM_WORD = re.compile(
    r"\b(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|fifty|hundred|words?|sentences?|"
    r"paragraphs?|bullets?|points|lines?|characters|letters?|sections?|items|stanzas?|commas?|punctuation|"
    r"periods|exclamation|lower\s*-?case|upper\s*-?case|capital\w*|json|yaml|xml|markdown|html|csv|tables?|lists?|"
    r"titles?|quotation|quotes|brackets|parenthes[ie]s|postscript|p\.?\s?s|keywords?|english|french|german|spanish|"
    r"italian|portuguese|dutch|chinese|japanese|korean|hindi|arabic|russian|turkish|polish|swedish|language|"
    r"formats?|formatted|divider|asterisks?|placeholders?|highlight\w*|phrase|code\s+blocks?|haiku|iambic|rhym\w*|"
    r"tone|person|concise|brief|short|length)\b",
    re.IGNORECASE,
)


def form_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of `text` (normalised) that only shapes the answer, in order (see the
    module docstring). A sentence ends at `.`, `!`, `?` or a line break."""
    spans = []
    for found in SENTENCE.finditer(text):
        sentence = found.group(0)
        if len(sentence) > MAX_FORM_CHARS or not _HEADS.match(sentence) or not _FORM_WORD.search(sentence):
            continue
        if not _only_form_words(sentence):
            continue
        spans.append(found.span())
    return spans
