"""The outbound query builder: what a connector or a remote search receives, by allow-list.

    outbound_query("Does denosumab help my patient Ngozi Okafor (DOB 3/4/1956)?")
    # → "Does denosumab help?"

Two passes. First every recognised identifier (patterns, international forms, unknown names
near patient cues) is cut out with the label that introduced it ("MRN:", "Mrs.", "my patient").
Then what remains is rebuilt from tokens the scientific vocabulary knows (`vocabulary`); any
other token is dropped, whatever it is. The second pass is the guarantee: a name, street or
number the first pass missed still cannot leave, because it is not a known scientific term.
`outbound_text` does the same for prose a remote model reads (the question and the patient
context): identifiers become placeholders, and so does every other token the vocabulary does
not know ([TERM_1]), so the model reads the clinical question and nothing that names anyone.
`unlisted_terms` reports whether a query is already made only of known terms (the connector's
refusal check).
"""

from __future__ import annotations

import re

from research_privacy import vocabulary
from research_privacy.deidentify import Deidentified, deidentify, find_identifiers
from research_privacy.detectors.names import PATIENT_CUES
from research_privacy.sanitise import DATA_MARKER, NEUTRALISED, sanitise
from research_text import word_list

_PLACEHOLDER = re.compile(r"\[[A-Z_]+_\d+\]")
_DOI = re.compile(r"\b10\.\d{4,9}/[^\s\"<>,;]+[^\s\"<>,;.)]")
_GAP = "\x00"
_SENTENCE_END = re.compile(r"[.?!:;\n]")
# Words that only introduce a person or an identifier: never worth sending once it is gone.
_LABEL_WORDS = word_list("labels.outbound")
_TRAILING = word_list("words.outbound_trailing")
_MAX_LENGTH = 1000


def outbound_query(text: str) -> str:
    """`text` reduced to known scientific terms, in their order; '' when none is left."""
    if not text:
        return ""
    clean = sanitise(text).replace(NEUTRALISED, " ")
    kept = [m.group(0) for m in _DOI.finditer(clean)]  # a DOI names a paper, never a person
    clean = _DOI.sub(_GAP, clean)
    clean = _PLACEHOLDER.sub(
        f" {_GAP} ", clean
    )  # identifiers an earlier de-identification replaced
    clean = _cut(clean, [(f.start, f.end) for f in find_identifiers(clean)])
    clean = _cut(
        clean,
        [
            (m.start(), m.end())
            for m in PATIENT_CUES.finditer(clean)
            if _introduces_gap(clean, m.end())
        ],
    )
    items: list[str] = []  # kept tokens, and _GAP where an identifier was cut
    tokens = list(vocabulary.TOKEN.finditer(clean))
    for i, match in enumerate(tokens):
        token = match.group(0)
        gap_before = clean[tokens[i - 1].end() : match.start()] if i else ""
        if _GAP in gap_before:
            items.append(_GAP)
        previous = tokens[i - 1].group(0) if i else ""
        following = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
        initial = (
            i == 0
            or bool(_SENTENCE_END.search(gap_before))
            or clean[: match.start()].strip() == _GAP
        )
        if vocabulary.is_scientific(token, previous, following, initial=initial):
            items.append(token)
    pieces: list[str] = []
    for item in [*items, _GAP]:
        if item == _GAP:
            while pieces and pieces[-1].lower().rstrip(".") in _LABEL_WORDS:
                pieces.pop()  # "record no." / "my patient" before a removed identifier
            continue
        pieces.append(item)
    while pieces and pieces[-1].lower() in _TRAILING | _LABEL_WORDS:
        pieces.pop()
    for _ in range(3):  # the query as sent must pass the same check the connector applies
        unknown = set(unlisted_terms(" ".join(pieces)))
        if not unknown:
            break
        pieces = [piece for piece in pieces if piece not in unknown]
    query = " ".join([*pieces, *kept])
    if query and text.rstrip().endswith("?") and not kept:
        query += "?"
    return query[:_MAX_LENGTH]


_KEEP = re.compile(re.escape(DATA_MARKER) + r"|\[[A-Z_]+_\d+\]")
_AGE = re.compile(r"^\d{1,2}-(?:year|month|week|day)s?-old$", re.IGNORECASE)


def outbound_text(text: str, *, into: Deidentified | None = None) -> Deidentified:
    """`text` de-identified, then every token outside the vocabulary replaced by `[TERM_n]`."""
    table = into if into is not None else Deidentified(text="")
    first = deidentify(text, into=table)
    by_value = {value: placeholder for placeholder, value in table.placeholders.items()}
    taken = [
        int(p.strip("[]").rpartition("_")[2])
        for p in [*table.placeholders, *table.reserved]
        if p.startswith("[TERM_")
    ]
    counter = max(taken, default=0)
    hidden = {i for m in _KEEP.finditer(first.text) for i in range(m.start(), m.end())}
    tokens = [m for m in vocabulary.TOKEN.finditer(first.text) if m.start() not in hidden]
    pieces: list[str] = []
    cursor = 0
    for i, match in enumerate(tokens):
        token = match.group(0)
        gap_before = (
            first.text[tokens[i - 1].end() : match.start()] if i else first.text[: match.start()]
        )
        previous = tokens[i - 1].group(0) if i else ""
        following = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
        initial = i == 0 or bool(_SENTENCE_END.search(gap_before))
        if (
            _AGE.match(token)
            or token.lower() in _LABEL_WORDS
            or vocabulary.is_scientific(token, previous, following, initial=initial)
        ):
            continue
        placeholder = by_value.get(token)
        if placeholder is None:
            counter += 1
            placeholder = f"[TERM_{counter}]"
            by_value[token] = placeholder
            table.placeholders[placeholder] = token
        table.found.append(("TERM", token))
        pieces += [first.text[cursor : match.start()], placeholder]
        cursor = match.end()
    pieces.append(first.text[cursor:])
    return table.written("".join(pieces), shared=into is not None)


def unlisted_terms(text: str) -> list[str]:
    """Tokens of `text` that are not known science (empty: the query may leave as it is)."""
    clean = _DOI.sub(" ", text or "")
    tokens = list(vocabulary.TOKEN.finditer(clean))
    unknown = []
    for i, match in enumerate(tokens):
        previous = tokens[i - 1].group(0) if i else ""
        following = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
        gap_before = clean[tokens[i - 1].end() : match.start()] if i else ""
        initial = i == 0 or bool(_SENTENCE_END.search(gap_before))
        if not vocabulary.is_scientific(match.group(0), previous, following, initial=initial):
            unknown.append(match.group(0))
    return unknown


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    for start, end in sorted(spans, reverse=True):
        text = text[:start] + f" {_GAP} " + text[end:]
    return text


def _introduces_gap(text: str, end: int) -> bool:
    return text[end:].lstrip(" :,#.").startswith(_GAP)
