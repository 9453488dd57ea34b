"""Which way a claim and a sentence point: a curated lexicon of biomedical direction words.

SciFact's contradicting claims are mostly a real finding with its direction turned —
stabilise / destabilise, increase / decrease, promote / inhibit, higher / lower, gain / loss.
The evidence model reads both sides of such a pair as the same topic and often calls the turned
claim supported ("Pyridostatin destabilizes the G-quadruplex" against "the G4-stabilizing
compound pyridostatin"). This module names the direction words of a text, family by family, so
the verdict can see when a claim and the sentence quoted for it point opposite ways.

    directions(text) -> {family: {+1 | -1}}      the direction words a text uses, per family
    conflict(claim, sentence) -> str | None      the family where they point opposite ways only
    flip(claim) -> str | None                    the claim with its first direction word turned

A family's two poles are word stems matched at the start of a word (lower case); a stem with a
prefix that turns it ("destabiliz", "downregulat", "non-significant") is listed before the stem
it contains and wins. A conflict needs the claim to use only one pole of a family and the
sentence only the other: a sentence that says both ("increased A but decreased B") says nothing
clear about the claim's direction.
"""

from __future__ import annotations

import re

# family: (stems of the "up" pole, stems of the "down" pole); a stem ending in a space is a whole word
FAMILIES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "stability": (
        ("stabiliz", "stabilis", "stabilit", "stable "),
        ("destabiliz", "destabilis", "instabilit", "unstable "),
    ),
    "amount": (
        ("increas", "elevat", "rais", "augment", "upregulat", "up-regulat", "accumulat", "gain"),
        ("decreas", "reduc", "lower", "diminish", "downregulat", "down-regulat", "deplet", "loss"),
    ),
    "activity": (
        ("activat", "stimulat", "enhanc", "potentiat", "amplif", "induc", "trigger"),
        ("inhibit", "suppress", "attenuat", "impair", "block", "abolish", "repress", "inactivat"),
    ),
    "promotion": (
        ("promot", "facilitat", "accelerat", "favor", "favour"),
        ("prevent", "hinder", "imped", "delay", "slow", "protect"),
    ),
    "comparison": (
        ("higher ", "greater ", "more ", "larger ", "longer ", "faster ", "stronger "),
        ("lower ", "smaller ", "less ", "shorter ", "slower ", "weaker ", "fewer "),
    ),
    "outcome": (
        ("improv", "benefi", "better "),
        ("worsen", "harm", "deteriorat", "worse ", "detriment"),
    ),
    "regulation": (("positive", "positively"), ("negative", "negatively")),
}
# Verbs `flip` turns (lemma, its opposite), in every inflection; then words turned as they stand.
VERB_FLIPS: tuple[tuple[str, str], ...] = (
    ("destabilize", "stabilize"),
    ("stabilize", "destabilize"),
    ("increase", "decrease"),
    ("decrease", "increase"),
    ("reduce", "increase"),
    ("upregulate", "downregulate"),
    ("downregulate", "upregulate"),
    ("activate", "inhibit"),
    ("inhibit", "activate"),
    ("enhance", "reduce"),
    ("promote", "inhibit"),
    ("induce", "suppress"),
    ("suppress", "induce"),
    ("prevent", "promote"),
    ("improve", "worsen"),
    ("worsen", "improve"),
)
WORD_FLIPS: tuple[tuple[str, str], ...] = (
    ("higher", "lower"),
    ("lower", "higher"),
    ("greater", "smaller"),
    ("more", "less"),
    ("less", "more"),
    ("positive", "negative"),
    ("negative", "positive"),
    ("positively", "negatively"),
    ("negatively", "positively"),
)


def _inflections(lemma: str) -> dict[str, str]:
    """suffix kind → the form: base, third person, past, gerund."""
    stem = lemma.removesuffix("e")
    return {
        "base": lemma,
        "s": lemma + ("es" if lemma.endswith(("s", "sh")) else "s"),
        "ed": stem + "ed",
        "ing": stem + "ing",
    }


FLIPS: dict[str, str] = {}
for _lemma, _other in VERB_FLIPS:
    _mine, _theirs = _inflections(_lemma), _inflections(_other)
    for _kind, _form in _mine.items():
        FLIPS.setdefault(_form, _theirs[_kind])
for _word, _other in WORD_FLIPS:
    FLIPS.setdefault(_word, _other)
_FLIPPABLE = re.compile(
    r"\b(" + "|".join(sorted(FLIPS, key=len, reverse=True)) + r")\b", re.IGNORECASE
)
# Phrases that hold a direction stem without being a direction ("lower limb", "gain of function").
_NOT_DIRECTION = re.compile(
    r"\b(?:lower (?:limb|extremit|back|airway|urinary|respiratory|tract|bound)\w*|gain[- ]of[- ]function"
    r"|loss[- ]of[- ]function|more (?:than|or less)|less than|tumou?r suppressor\w*)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[a-z][a-z\-]*")
# Outcomes a patient wants more of: an amount of one that goes up or down is the outcome getting
# better or worse ("decreases quality of life" is "worsens" it), so such a text also points in the
# outcome family and meets a quote that says "improved" or "worse" in its own words.
_DESIRABLE_OUTCOME = re.compile(
    r"\b(?:quality of life|survival|life expectancy|well-?being|health status|functional capacity"
    r"|physical function\w*|exercise capacity|exercise tolerance)\b",
    re.IGNORECASE,
)


def directions(text: str) -> dict[str, set[int]]:
    """The poles (+1 up, -1 down) of each direction family `text` uses."""
    plain = _NOT_DIRECTION.sub(" ", text.lower())
    found: dict[str, set[int]] = {}
    for match in _WORD.finditer(plain):
        word = match.group(0) + " "
        for family, (up, down) in FAMILIES.items():
            if any(word.startswith(stem) for stem in down):
                found.setdefault(family, set()).add(-1)
            elif any(word.startswith(stem) for stem in up):
                found.setdefault(family, set()).add(1)
    if "amount" in found and _DESIRABLE_OUTCOME.search(plain):
        found.setdefault("outcome", set()).update(found["amount"])
    return found


def conflict(claim: str, sentence: str) -> str | None:
    """The first family the claim uses one pole of and the sentence only the other; None when
    they agree, share no family, or either says both ways."""
    said, found = directions(claim), directions(sentence)
    for family, poles in said.items():
        other = found.get(family)
        if len(poles) == 1 and other is not None and len(other) == 1 and other != poles:
            return family
    return None


def flip(claim: str) -> str | None:
    """`claim` with its first direction word turned, in the same inflection ("reduced" ->
    "increased", "activates" -> "inhibits"); None when it has none."""
    match = _FLIPPABLE.search(claim)
    if match is None:
        return None
    word = match.group(0)
    other = FLIPS[word.lower()]
    if word[0].isupper():
        other = other[0].upper() + other[1:]
    return claim[: match.start()] + other + claim[match.end() :]
