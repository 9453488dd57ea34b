"""The outbound query builder: what a connector or a remote search receives, by allow-list.

    outbound_query("Does denosumab help my patient Ngozi Okafor (DOB 3/4/1956)?")
    # → "Does denosumab help?"

Two passes. First every recognised identifier (patterns, international forms, unknown names
near patient cues) is cut out with the label that introduced it ("MRN:", "Mrs.", "my patient").
Then what remains is rebuilt from tokens the scientific vocabulary knows (`vocabulary`); any
other token is dropped, whatever it is. The second pass is the guarantee: a name, street or
number the first pass missed still cannot leave, because it is not a known scientific term.
`unlisted_terms` reports whether a query is already made only of known terms (the connector's
refusal check).
"""

from __future__ import annotations

import re

from research_privacy import vocabulary
from research_privacy.deidentify import find_identifiers
from research_privacy.locales import PATIENT_CUES
from research_privacy.sanitise import NEUTRALISED, sanitise

_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>,;]+[^\s\"<>,;.)]")
_GAP = "\x00"
# Words that only introduce a person or an identifier: never worth sending once it is gone.
_LABEL_WORDS = frozenset(
    """patient patients pt pts mrn dob d.o.b name named called phone tel telephone fax email e-mail address
    lives living born seen admitted record number no id ssn account mr mrs ms mx miss dr prof sir madam my our
    his her their contact call""".split()
)
_TRAILING = frozenset("for of in with and or to the a an by at on from aged about".split())
_MAX_LENGTH = 1000


def outbound_query(text: str) -> str:
    """`text` reduced to known scientific terms, in their order; '' when none is left."""
    if not text:
        return ""
    clean = sanitise(text).replace(NEUTRALISED, " ")
    kept = [m.group(0) for m in _DOI.finditer(clean)]  # a DOI names a paper, never a person
    clean = _DOI.sub(_GAP, clean)
    clean = _PLACEHOLDER.sub(f" {_GAP} ", clean)  # identifiers an earlier de-identification replaced
    clean = _cut(clean, [(f.start, f.end) for f in find_identifiers(clean)])
    clean = _cut(clean, [(m.start(), m.end()) for m in PATIENT_CUES.finditer(clean) if _introduces_gap(clean, m.end())])
    pieces: list[str] = []
    tokens = list(vocabulary.TOKEN.finditer(clean))
    for i, match in enumerate(tokens):
        token = match.group(0)
        previous = tokens[i - 1].group(0) if i else ""
        following = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
        gap_after = clean[match.end() : tokens[i + 1].start()] if i + 1 < len(tokens) else ""
        if _GAP in gap_after and token.lower().rstrip(".") in _LABEL_WORDS:
            continue  # "MRN" / "patient" before a removed identifier
        if vocabulary.is_scientific(token, previous, following):
            pieces.append(token)
    while pieces and pieces[-1].lower() in _TRAILING | _LABEL_WORDS:
        pieces.pop()
    query = " ".join([*pieces, *kept])
    if query and text.rstrip().endswith("?") and not kept:
        query += "?"
    return query[:_MAX_LENGTH]


def unlisted_terms(text: str) -> list[str]:
    """Tokens of `text` that are not known science (empty: the query may leave as it is)."""
    clean = _DOI.sub(" ", text or "")
    tokens = list(vocabulary.TOKEN.finditer(clean))
    unknown = []
    for i, match in enumerate(tokens):
        previous = tokens[i - 1].group(0) if i else ""
        following = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
        if not vocabulary.is_scientific(match.group(0), previous, following):
            unknown.append(match.group(0))
    return unknown


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + f" {_GAP} " + text[end:]
    return text


def _introduces_gap(text: str, end: int) -> bool:
    return text[end:].lstrip(" :,#.").startswith(_GAP)
