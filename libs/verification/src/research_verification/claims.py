"""Step 1 of verification: a claim split into testable statements, each with varied queries.

"Aspirin reduces stroke risk and increases bleeding" is two findings that the evidence may
settle differently, so each is verified on its own (and `verdict.decide_verdict` measures how
many are covered). A conjunction splits the claim only when what follows it has its own verb
("... and increases bleeding"); "reduces stroke and heart attack risk" stays one statement.
Each statement gets at least three searches worded differently — as stated, as keywords, with
the verb reworded, and its contrary — so that retrieval can find evidence against it too.
Rule-based and deterministic: no model, no network.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research_judgement.coverage import stem
from research_text import word_list
from research_verification.errors import ClaimParseError

MAX_CLAIM_CHARS = 2000
STOPWORDS = word_list("stopwords.lexical")  # what claim parsing skips
AUXILIARIES = word_list("verbs.auxiliary")
# Verb stems with their inflections; the third-person forms are the surest sign of a predicate.
VERB_STEMS = (
    "increas",
    "decreas",
    "reduc",
    "lower",
    "rais",
    "improv",
    "worsen",
    "caus",
    "lead",
    "prevent",
    "inhibit",
    "promot",
    "induc",
    "enhanc",
    "impair",
    "affect",
    "correlat",
    "predict",
    "protect",
    "suppress",
    "activat",
    "block",
    "regulat",
    "mediat",
    "contribut",
    "elevat",
    "diminish",
    "boost",
    "trigger",
    "requir",
    "alter",
    "modulat",
    "restor",
    "attenuat",
    "exacerbat",
    "accelerat",
    "delay",
    "shorten",
    "extend",
    "prolong",
    "cure",
    "treat",
    "driv",
    "depend",
    "result",
    "produc",
    "stimulat",
    "confer",
    "lack",
    "express",
    "bind",
    "target",
    "control",
    "limit",
    "help",
    "benefit",
    "harm",
    "kill",
    "slow",
    "revers",
    "associat",
    "link",
    "outperform",
    "exceed",
    "decline",
    "ris",
    "fall",
)
_VERB = re.compile(rf"^(?:{'|'.join(VERB_STEMS)})(?:e|es|s|ed|d|ing|ies|ied)?$")
_FINITE = re.compile(rf"^(?:{'|'.join(VERB_STEMS)})(?:es|s|ies)$|^led$")
_DETERMINERS = frozenset(["a", "an", "the", "this", "that", "these", "those", "its", "their"])
_SPLITTERS = re.compile(r",?\s+(?:and|while|whereas|but)\s+|;\s*", re.IGNORECASE)
_WORD = re.compile(r"\S+")
SYNONYMS = {
    "reduce": ("lower", "decrease"),
    "lower": ("reduce", "decrease"),
    "decrease": ("reduce", "lower"),
    "increase": ("raise", "elevate"),
    "raise": ("increase", "elevate"),
    "elevate": ("increase", "raise"),
    "improve": ("benefit", "enhance"),
    "cause": ("lead to", "induce"),
    "lead": ("cause", "result in"),
    "prevent": ("protect against", "reduce the risk of"),
    "inhibit": ("suppress", "block"),
    "promote": ("enhance", "induce"),
    "induce": ("trigger", "promote"),
    "worsen": ("impair", "aggravate"),
}
CONTRARIES = {
    "reduce": "increase",
    "lower": "raise",
    "decrease": "increase",
    "increase": "decrease",
    "raise": "lower",
    "elevate": "lower",
    "improve": "worsen",
    "worsen": "improve",
    "inhibit": "promote",
    "promote": "inhibit",
    "induce": "suppress",
    "prevent": "cause",
    "enhance": "impair",
    "impair": "enhance",
    "activate": "inhibit",
    "suppress": "promote",
}


@dataclass(frozen=True, slots=True)
class Statement:
    """One testable finding: who/what (subject), what is asserted (predicate), and how to search."""

    text: str
    subject: str
    predicate: str
    verb: str
    search_terms: tuple[str, ...]
    queries: tuple[str, ...]


_WORDS = re.compile(r"[a-z0-9]+")


def _stems(text: str) -> set[str]:
    return {stem(w) for w in _WORDS.findall(text.lower())}


def names_subject(subject: str, text: str) -> bool:
    """Whether `text` (a paper's title and abstract) names any content word of a statement's
    subject — the intervention or exposure the statement is about. A study that never names it
    ("collaborative care" for "exercise training improves …") is evidence on something else,
    however close its outcome. A subject without a content word ("There", "It") names nothing to
    look for: every text passes."""
    wanted = {stem(w) for w in _WORDS.findall(subject.lower()) if w not in STOPWORDS and len(w) > 2}
    return not wanted or bool(wanted & _stems(text))


def _verb_index(words: list[str], allow_first: bool) -> int | None:
    """Index of the predicate's verb: an auxiliary or finite form first, any verb form second."""
    lowered = [w.lower().strip(",.()") for w in words]
    start = 0 if allow_first else 1
    for i in range(start, len(lowered)):
        if (lowered[i] in AUXILIARIES or _FINITE.match(lowered[i])) and (
            i == 0 or lowered[i - 1] not in _DETERMINERS
        ):
            return i
    for i in range(start, len(lowered)):
        if _VERB.match(lowered[i]) and (i == 0 or lowered[i - 1] not in _DETERMINERS):
            return i
    return None


def _clauses(sentence: str) -> list[tuple[str, bool]]:
    """Pieces of a sentence with whether each needs the previous piece's subject."""
    pieces = _SPLITTERS.split(sentence)
    out: list[tuple[str, bool]] = []
    for raw in pieces:
        piece = raw.strip(" ,")
        if not piece:
            continue
        words = _WORD.findall(piece)
        starts_with_verb = _verb_index(words[:2], allow_first=True) is not None if words else False
        has_own_clause = _verb_index(words, allow_first=False) is not None
        if out and not (starts_with_verb or has_own_clause):
            out[-1] = (f"{out[-1][0]} and {piece}", out[-1][1])  # a noun conjunction: keep together
        else:
            out.append((piece, bool(out) and starts_with_verb and not has_own_clause))
    return out


def _inflections(base: str) -> set[str]:
    stem = base.removesuffix("e")
    return {base, base + "s", base + "es", base + "d", stem + "ed", stem + "ing", base + "ing"}


def _base(verb: str) -> str:
    """Base form of a verb the synonym tables know ("reduces" → "reduce", "led" → "lead")."""
    v = verb.lower()
    if v == "led":
        return "lead"
    for known in (*SYNONYMS, *CONTRARIES):
        if v in _inflections(known):
            return known
    return v


def _terms(text: str) -> tuple[str, ...]:
    words = [w.strip(",.;:()").lower() for w in _WORD.findall(text)]
    kept = [
        w for w in words if w and w not in STOPWORDS and w not in AUXILIARIES and not _VERB.match(w)
    ]
    return tuple(dict.fromkeys(kept))


def _queries(
    text: str, subject: str, verb: str, rest: str, terms: tuple[str, ...]
) -> tuple[str, ...]:
    base = _base(verb) if verb else ""
    if base in ("lead", "result"):  # "leads to X": the object is X, not "to X"
        rest = re.sub(r"^(?:to|in)\s+", "", rest)
    queries = [text, " ".join(terms)]
    for synonym in SYNONYMS.get(base, ())[:1]:
        queries.append(f"{subject} {synonym} {rest}".strip())
    if base in CONTRARIES:
        queries.append(f"{subject} {CONTRARIES[base]} {rest}".strip())
    queries.append(f"effect of {subject} on {rest}".strip() if rest else f"{subject} evidence")
    queries.append(f"{subject} no effect {rest}".strip())
    return tuple(dict.fromkeys(q for q in queries if q))


def parse_claim(claim: str) -> list[Statement]:
    """Split `claim` into statements; raises `ClaimParseError` for an empty or oversized claim."""
    text = " ".join((claim or "").split())
    if not re.search(r"[A-Za-z]", text):
        raise ClaimParseError("the claim is empty: state a finding to verify")
    if len(text) > MAX_CLAIM_CHARS:
        raise ClaimParseError(
            f"the claim has {len(text)} characters; at most {MAX_CLAIM_CHARS} are verified"
        )
    statements: list[Statement] = []
    subject = ""
    for sentence in re.split(r"(?<=[.!?])\s+(?=[A-Z])", text):
        for piece, inherits in _clauses(sentence.rstrip(".!? ")):
            words = _WORD.findall(piece)
            index = _verb_index(words, allow_first=inherits)
            if inherits or index == 0:
                own_subject, predicate_words = subject, words
            elif index is None:
                own_subject, predicate_words = " ".join(words), []
            else:
                own_subject, predicate_words = " ".join(words[:index]), words[index:]
            subject = own_subject or subject
            verb = predicate_words[0].strip(",.") if predicate_words else ""
            rest = " ".join(predicate_words[1:])
            full = f"{own_subject} {' '.join(predicate_words)}".strip() if inherits else piece
            terms = _terms(f"{own_subject} {rest}")
            statements.append(
                Statement(
                    full,
                    own_subject,
                    " ".join(predicate_words),
                    verb,
                    terms,
                    _queries(full, own_subject, verb, rest, terms),
                )
            )
    if not statements:
        raise ClaimParseError("no testable statement found in the claim")
    return statements
