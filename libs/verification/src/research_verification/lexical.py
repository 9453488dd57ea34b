"""Word-level cues the embeddings miss: negation, direction of change, quantities and overlap.

MiniLM sentence embeddings place "X increases Y" and "X decreases Y" almost on top of each
other, yet that difference is exactly what separates SUPPORT from CONTRADICT (SciFact's
contradicted claims are mostly written by negating or reversing a supported one). These
features give the classifier the polarity signal explicitly. Everything here is pure.
"""

from __future__ import annotations

import math
import re

import numpy as np

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me most my myself of off on once only or other our ours ourselves out over own same she
    should so some such than that the their theirs them themselves then there these they this those
    through to too under until up very was we were what when where which while who whom why will with
    would you your yours yourself yourselves may might must shall whether within via per among upon
    use used using""".split()
)

NEGATIONS = frozenset(
    """no not never none nor neither without cannot can't don't doesn't didn't isn't aren't wasn't
    weren't won't fail fails failed lack lacks lacking absence absent unrelated unaffected unchanged
    insignificant nonsignificant non-significant""".split()
)

# Word stems of an upward / downward change; "reduced mortality" and "increased mortality" differ
# only here. Stems match the start of a token (reduc- matches reduce, reduced, reduction).
UP_STEMS = (
    "increas", "higher", "elevat", "rais", "enhanc", "promot", "induc", "activat", "upregulat",
    "up-regulat", "augment", "boost", "greater", "more", "improv", "accelerat", "stimulat",
    "potentiat", "exacerbat", "rise", "rises", "rising", "gain", "amplif", "facilitat", "prolong",
)
DOWN_STEMS = (
    "decreas", "lower", "reduc", "diminish", "inhibit", "suppress", "downregulat", "down-regulat",
    "attenuat", "block", "impair", "less", "fewer", "prevent", "declin", "loss", "lose", "shorten",
    "abolish", "abrogat", "depress", "slow", "worsen", "limit", "protect", "deplet", "low",
)
# "no significant difference", "was not associated": a null result contradicts a claimed effect.
NULL_RESULT = re.compile(
    r"\b(no|not|nor|without)\b[^.;]{0,40}\b(significant|signific|differ|associat|effect|change|"
    r"correlat|increase|decrease|improv|reduc|affect|benefit|impact|relationship|alter)",
    re.IGNORECASE,
)
NUMBER = re.compile(r"(?<![A-Za-z])\d+(?:[.,]\d+)?")
WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-']*")
RESULT_MARKERS = re.compile(
    r"\b(p\s*[<=>]|95%|confidence interval|odds ratio|hazard ratio|\bci\b|significantly|"
    r"we found|results|showed|demonstrat|reveal|conclu)",
    re.IGNORECASE,
)
BACKGROUND_MARKERS = re.compile(
    r"\b(aim|aims|aimed|objective|purpose|we (?:sought|investigated|examined|assessed|studied)|"
    r"to (?:assess|determine|investigate|examine|evaluate|explore|test)|background|little is known|"
    r"remains? (?:unclear|unknown|poorly)|further (?:work|research|studies|study|investigation)|"
    r"is needed|are needed|warrant)",
    re.IGNORECASE,
)


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens, hyphenated terms kept whole."""
    return [t.lower() for t in WORD.findall(text)]


def content_tokens(text: str) -> list[str]:
    """Tokens that carry topic: no stopwords, no negations, no one-letter tokens."""
    return [t for t in tokens(text) if t not in STOPWORDS and t not in NEGATIONS and len(t) > 1]


def _stem_hits(token: str, stems: tuple[str, ...]) -> bool:
    return any(token.startswith(s) for s in stems)


def direction(text: str) -> int:
    """+1 if the text states an upward change, -1 a downward one, 0 neither or both equally.

    A negation within the three preceding tokens flips a direction word ("did not increase").
    """
    words = tokens(text)
    score = 0
    for i, word in enumerate(words):
        sign = 1 if _stem_hits(word, UP_STEMS) else -1 if _stem_hits(word, DOWN_STEMS) else 0
        if sign and any(w in NEGATIONS for w in words[max(0, i - 3) : i]):
            sign = -sign
        score += sign
    return (score > 0) - (score < 0)


def negation_count(text: str) -> int:
    return sum(1 for t in tokens(text) if t in NEGATIONS)


def numbers(text: str) -> set[str]:
    return {n.replace(",", ".") for n in NUMBER.findall(text)}


def overlap(claim: str, sentence: str) -> tuple[float, float]:
    """(share of the claim's content tokens found in the sentence, Jaccard of content tokens)."""
    c, s = set(content_tokens(claim)), set(content_tokens(sentence))
    if not c or not s:
        return 0.0, 0.0
    # Prefix match of 5 letters lets "reduced" meet "reduction" and plural meet singular.
    s_prefixes = {t[:5] for t in s}
    covered = sum(1 for t in c if t in s or t[:5] in s_prefixes)
    return covered / len(c), len(c & s) / len(c | s)


FEATURE_NAMES = (
    "cover", "jaccard", "neg_claim", "neg_sent", "neg_parity_mismatch", "dir_claim", "dir_sent",
    "dir_product", "dir_mismatch", "dir_agree", "null_claim", "null_sent", "null_mismatch",
    "claim_numbers", "missing_numbers", "sent_numbers", "result_marker", "background_marker",
    "log_len",
)


def lexical_features(claim: str, sentence: str) -> np.ndarray:
    """One row of `FEATURE_NAMES` for a claim × sentence pair (float32)."""
    cover, jaccard = overlap(claim, sentence)
    neg_c, neg_s = negation_count(claim), negation_count(sentence)
    dir_c, dir_s = direction(claim), direction(sentence)
    null_c, null_s = bool(NULL_RESULT.search(claim)), bool(NULL_RESULT.search(sentence))
    num_c, num_s = numbers(claim), numbers(sentence)
    missing = len(num_c - num_s) / len(num_c) if num_c else 0.0
    row = (
        cover, jaccard, min(neg_c, 3), min(neg_s, 3), float((neg_c % 2) != (neg_s % 2)),
        dir_c, dir_s, dir_c * dir_s, float(dir_c * dir_s < 0), float(dir_c * dir_s > 0),
        float(null_c), float(null_s), float(null_c != null_s),
        float(bool(num_c)), missing, float(bool(num_s)),
        float(bool(RESULT_MARKERS.search(sentence))), float(bool(BACKGROUND_MARKERS.search(sentence))),
        math.log1p(len(tokens(sentence))) / 4.0,
    )
    return np.asarray(row, dtype=np.float32)
