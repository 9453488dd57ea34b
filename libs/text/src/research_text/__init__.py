"""The word lists the engine reads text with, one named list per purpose.

Each list is a data file, `words/<kind>_<purpose>.txt`: one word a line, `#` comments and blank
lines skipped. `word_list("stopwords.lexical")` reads `words/stopwords_lexical.txt` once and
returns it as a frozenset. This package imports nothing of the engine's, so every library can read
its lists from here.
"""

from research_text.wordlists import UnknownWordList, word_list, word_list_names

__all__ = ["UnknownWordList", "word_list", "word_list_names"]
