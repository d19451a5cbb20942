"""Word-for-word dictionaries from other languages into English, one file per language, read by `gloss.py`.

Each file is `{"language": name, "words": {form: english}, "stems": {prefix: english}}` (and, optionally,
`"min_stem_alone"`: a stem shorter than that reads a word only when it covers half of it; 4 unless given, 2 for
Korean, whose syllables hold what two or three Latin letters do): the words people write to an assistant in
ordinary requests and in attacks, function words, and the words of harm, with their common inflections (stems
for Russian and Korean: a noun before its particle, a verb before its ending). They were written for the guard
as general vocabulary of each language, not drawn from any data set the guard is fitted or measured on.
"""
