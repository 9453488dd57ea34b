"""The scientific vocabulary: the allow-list every outbound query is built from.

A token may leave the process only if it is known science: a word of the shipped vocabulary
(data/SOURCES.md: the SciFact corpus lexicon plus ICD-10-CM), a symbol (IL-6, p53), an eponym
used as one ("Parkinson's disease"), a drug or disease by its nomenclature stem (-mab, -itis),
or a number shaped like a year, a dose or a ratio. Everything else — a name from any culture or
script, a street, a record number — is unknown, and unknown is dropped. The multi-locale name
data (Faker's person lists, 80+ locales) only narrows the allow-list further: a capitalised
token that is a known given name or surname is never let through as a word ("Rose", "Young").
"""

from __future__ import annotations

import importlib
import re
import unicodedata
from functools import lru_cache
from importlib import resources

from research_privacy.greek import greek_notation
from research_text import word_list

# Word characters plus combining marks (Thai, Devanagari and Vietnamese vowels and tones).
_W = r"[\w\u0300-\u036F\u0900-\u0DFF\u0E00-\u0E7F\u1AB0-\u1AFF]"
TOKEN = re.compile(_W + r"+(?:[-'’._]" + _W + r"+)*")
_POSSESSIVE = re.compile(r"['’]s?$")

# International Nonproprietary Name stems and disease/procedure suffixes: a lowercase word with
# one of these is a drug or a condition even when the corpus never saw it (denosumab, tirzepatide).
_STEMS = word_list("stems.terms")
_STEM = re.compile(r"^[a-z]{3,}(?:" + "|".join(sorted(set(_STEMS), key=len, reverse=True)) + r")$")
# Words after which an eponym that is also a surname is used as an eponym ("Wilson disease").
EPONYM_HEADS = word_list("heads.eponym")
# Single capital letters that name something only after these words ("vitamin D", "type B").
LETTER_HEADS = word_list("heads.letter")


def _lines(name: str) -> frozenset[str]:
    text = resources.files("research_privacy").joinpath("data", name).read_text(encoding="utf-8")
    return frozenset(line for line in text.splitlines() if line)


@lru_cache(maxsize=1)
def words() -> frozenset[str]:
    """Lowercase scientific words."""
    return _lines("vocabulary_words.txt")


@lru_cache(maxsize=1)
def listed_symbols() -> frozenset[str]:
    """Every case-sensitive symbol of the shipped list, those that spell a person's name too (KIM)."""
    return _lines("vocabulary_symbols.txt")


@lru_cache(maxsize=1)
def symbols() -> frozenset[str]:
    """Case-sensitive symbols (IL-6, p53, HbA1c), minus all-letter ones that spell a person's name."""
    names = person_names()
    return frozenset(
        s for s in listed_symbols() if any(c.isdigit() for c in s) or s.casefold() not in names
    )


@lru_cache(maxsize=1)
def eponyms() -> frozenset[str]:
    """Eponyms and genera (Parkinson, Staphylococcus); surnames among them need an eponym context."""
    return _lines("vocabulary_proper.txt")


_GIVEN_LISTS = (
    "first_names",
    "first_names_male",
    "first_names_female",
    "first_names_nonbinary",
    "first_romanized_names",
)
_PERSON_LISTS = (
    *_GIVEN_LISTS,
    "last_names",
    "last_names_male",
    "last_names_female",
    "last_romanized_names",
)


@lru_cache(maxsize=1)
def person_names() -> frozenset[str]:
    """Given names and surnames of every Faker locale, casefolded (one token per entry)."""
    return _faker_names(_PERSON_LISTS)


@lru_cache(maxsize=1)
def given_names() -> frozenset[str]:
    """Given names of every Faker locale, casefolded (one token per entry)."""
    return _faker_names(_GIVEN_LISTS)


def _faker_names(lists: tuple[str, ...]) -> frozenset[str]:
    from faker.config import AVAILABLE_LOCALES

    found: set[str] = set()
    for locale in AVAILABLE_LOCALES:
        try:
            provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        except (ImportError, AttributeError):
            continue
        for attribute in lists:
            entries = getattr(provider, attribute, None)
            if isinstance(entries, dict):
                entries = list(entries)
            if isinstance(entries, (list, tuple, set, frozenset)):
                for entry in entries:
                    found.update(t.casefold() for t in TOKEN.findall(str(entry)))
    return frozenset(found)


def is_latin(token: str) -> bool:
    """True when every letter of `token` is Latin script (diacritics included)."""
    if token.isascii():
        return True
    return all(not c.isalpha() or "LATIN" in unicodedata.name(c, "") for c in token)


def is_greek_symbol(token: str) -> bool:
    """A lone Greek letter used as a symbol (α, κ, TNF-α is a symbol token already)."""
    return len(token) == 1 and "GREEK" in unicodedata.name(token, "")


# Lowercase particles of names ("van den Berg", "bin Salman"): words, but never worth the risk.
# Street words too: "home avenue de …" must not carry the street type out.
_NAME_PARTICLES = word_list("particles.never_known")


def known_word(lower: str) -> bool:
    """A lowercase word of the vocabulary, by its stem, or a plural of either."""
    if lower in _NAME_PARTICLES:
        return False
    if lower in words() or _STEM.match(lower):
        return True
    for suffix, replacement in (("ies", "y"), ("es", ""), ("s", "")):
        if lower.endswith(suffix) and len(lower) > len(suffix) + 2:
            base = lower[: -len(suffix)] + replacement
            if base in words() or _STEM.match(base):
                return True
    return False


_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
_SMALL_NUMBER = re.compile(r"^\d{1,2}(?:[.,]\d{1,3})?%?$")
_DECIMAL = re.compile(r"^\d{0,3}\.\d{1,4}$")
_RANGE = re.compile(
    r"^(?:\d{1,2}(?:\.\d{1,3})?)(?:[-–:]\d{1,2}(?:\.\d{1,3})?){1,2}$|^(?:1[89]|20)\d\d[-–](?:1[89]|20)\d\d$"
)
_SCIENTIFIC_ID = re.compile(
    r"^(?:rs\d{3,12}|NCT\d{8}|ISRCTN\d{8}|[cgmnrp]\.[\w>_*+\-]+|CD\d{1,3}[a-z]?|[A-Z]{2,6}\d{1,2}[A-Z]?\d?)$"
)


def number_allowed(token: str) -> bool:
    """Numbers that say something scientific: small counts, decimals, years, ranges, ratios."""
    if token.startswith("0") and len(token) >= 3 and token.isdigit():
        return False  # leading zeros are record numbers and phone parts, never quantities
    return bool(
        _YEAR.match(token)
        or _SMALL_NUMBER.match(token)
        or _DECIMAL.match(token)
        or _RANGE.match(token)
    )


def is_scientific(  # noqa: PLR0911, PLR0912 - one rule per kind of token, each answering at once, read in order
    token: str, previous: str = "", following: str = "", *, initial: bool = True
) -> bool:
    """May `token` leave the process? `previous` / `following` are its neighbours in the text.

    `initial=False` says the token is inside a sentence: a capitalised word there is a proper
    noun ("Suite 240", "Piano 5"), allowed only as an eponym or by a drug/disease stem.
    """
    base = _POSSESSIVE.sub("", token) if len(token) > 3 else token
    if not base:
        return False
    if not is_latin(base):
        return greek_notation(base)
    has_digit = any(c.isdigit() for c in base)
    has_alpha = any(c.isalpha() for c in base)
    if has_digit and not has_alpha:
        return number_allowed(base)
    if has_digit:
        return base in symbols() or bool(_SCIENTIFIC_ID.match(base))
    if len(base) == 1:
        return base.isupper() and previous.lower() in LETTER_HEADS
    if "-" in base and not has_digit and base not in symbols():
        parts = base.split("-")
        return all(p and is_scientific(p, following=following, initial=initial) for p in parts)
    lower = base.lower()
    if base.islower():
        return known_word(lower)
    name = lower.casefold() in person_names()
    if base in eponyms():  # used as one: "Crohn's", "Hodgkin lymphoma", "Staphylococcus aureus"
        if base != token or following.lower() in EPONYM_HEADS:
            return True
        if not name and following.islower() and known_word(following.lower()):
            return True
    if base[0].isupper() and base[1:].islower():  # Title case: a word at the start of a sentence
        if not initial:
            # Inside a sentence a capital marks a proper noun or an emphasised term. A known
            # term leaves when a lowercase word follows it ("Is Aspirin protective?") and it does
            # not spell a person's name. Before a capitalised word, a number or the end of the
            # text it reads as a place as often as a term ("Oak Street", "Piano 5", "lives in
            # Reading"), and without neighbours (the de-identifier's address runs) it stays unknown.
            if bool(_STEM.match(lower)) and not name:
                return True
            return following[:1].islower() and not name and known_word(lower)
        # A word that is also a name opens a sentence only before a lowercase word or a number
        # ("Type 2 diabetes", "Young adults"), never before another capitalised one ("Rose Young").
        phrase = bool(following) and (following[:1].islower() or following[:1].isdigit())
        return known_word(lower) and (not name or phrase)
    return base in symbols()  # ALL CAPS or mixed case: only as a listed symbol (DNA, HbA1c)
