"""Word-for-word dictionaries from other languages into English, one file per language, read by `gloss.py`.

Each file is `{"language": name, "words": {form: english}, "stems": {prefix: english}}`: the words people write
to an assistant in ordinary requests and in attacks, function words, and the words of harm, with their common
inflections (stems for Russian). They were written for the guard as general vocabulary of each language, not
drawn from any data set the guard is fitted or measured on.
"""
