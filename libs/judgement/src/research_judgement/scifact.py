"""SciFact as the judgement models read it (Wadden et al. 2020, CC BY-NC 2.0), and the pair texts.

A claim keeps every rationale **set** of an evidence
abstract, which SciFact's "label + rationale" metric needs (a predicted rationale is right when
it contains one whole gold set). Texts: the first is the claim / question, the second
`passage_text(sentence, title)`, "title: sentence" when the title is known.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

LABELS: tuple[str, str, str] = ("SUPPORT", "CONTRADICT", "NEI")


@dataclass(frozen=True, slots=True)
class Abstract:
    doc_id: int
    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    id: int
    claim: str
    cited_doc_ids: tuple[int, ...]
    # doc_id -> (label, rationale sets as tuples of sentence indices)
    evidence: dict[int, tuple[str, tuple[frozenset[int], ...]]] = field(default_factory=dict)

    def gold_label(self, doc_id: int) -> str:
        return self.evidence[doc_id][0] if doc_id in self.evidence else "NEI"

    def rationale(self, doc_id: int) -> frozenset[int]:
        """Every gold rationale sentence of an abstract (the union of its sets)."""
        if doc_id not in self.evidence:
            return frozenset()
        return frozenset().union(*self.evidence[doc_id][1])

    def sentence_label(self, doc_id: int, index: int) -> str:
        return self.evidence[doc_id][0] if index in self.rationale(doc_id) else "NEI"


def load_claims(path: str | Path) -> list[Claim]:
    claims = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        evidence = {}
        for doc, sets in (raw.get("evidence") or {}).items():
            evidence[int(doc)] = (sets[0]["label"], tuple(frozenset(s["sentences"]) for s in sets))
        claims.append(
            Claim(
                int(raw["id"]),
                raw["claim"],
                tuple(int(d) for d in raw.get("cited_doc_ids", ())),
                evidence,
            )
        )
    return claims


def load_corpus(path: str | Path) -> dict[int, Abstract]:
    corpus = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            corpus[int(raw["doc_id"])] = Abstract(
                int(raw["doc_id"]), raw["title"], tuple(s.strip() for s in raw["abstract"])
            )
    return corpus


def passage_text(sentence: str, title: str | None = None) -> str:
    """The second text of an evidence / stance pair: "title: sentence" when the title is known."""
    sentence = " ".join(sentence.split())
    return f"{title.strip()}: {sentence}" if title and title.strip() else sentence


def abstract_text(title: str, sentences: tuple[str, ...] | list[str] | str) -> str:
    """The second text of a relevance pair: the title and the abstract (truncated by the tokenizer)."""
    body = sentences if isinstance(sentences, str) else " ".join(sentences)
    return passage_text(body, title)


SWAPS = [
    ("increases", "decreases"),
    ("increased", "decreased"),
    ("increase", "decrease"),
    ("higher", "lower"),
    ("raises", "lowers"),
    ("reduces", "increases"),
    ("reduced", "increased"),
    ("improves", "worsens"),
    ("promotes", "inhibits"),
    ("enhances", "impairs"),
    ("more", "less"),
    ("activates", "inhibits"),
    ("induces", "suppresses"),
    ("positive", "negative"),
    ("greater", "smaller"),
]
AUXILIARIES = [
    (" is ", " is not "),
    (" are ", " are not "),
    (" can ", " cannot "),
    (" does ", " does not "),
    (" has ", " does not have "),
    (" was ", " was not "),
    (" were ", " were not "),
]


def negate_claim(claim: str) -> str | None:
    """The claim with its direction reversed or a negation inserted/removed; None when neither applies."""
    for a, b in SWAPS:
        for x, y in ((a, b), (b, a)):
            pattern = re.compile(rf"\b{x}\b", re.IGNORECASE)
            if pattern.search(claim):
                return pattern.sub(y, claim, count=1)
    for x, y in AUXILIARIES:
        if x in claim:
            return claim.replace(x, y, 1)
    for x in (" not ", " no "):
        if x in claim:
            return claim.replace(x, " ", 1)
    return None
