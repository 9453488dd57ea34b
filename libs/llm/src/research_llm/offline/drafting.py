"""The offline researcher: an extractive claim from the evidence sentences that best answer
the question.

Each evidence sentence gets a hybrid score (idf-weighted coverage of the question's terms
mixed with embedding similarity), nudged by the document's retrieval rank. The best sentence
becomes the statement; the best sentence of each well-scoring document becomes a support, so
every quote is an exact substring of its source's text. Confidence comes from how strongly
the lead sentence answers the question and how many other sources agree with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from research_llm.offline import lexicon
from research_llm.offline.relevance import Relevance
from research_llm.schema import ClaimDraft, EvidenceDoc, SupportDraft

MODEL = "offline-extractive-v1"

# Lead-ins that frame a finding rather than state it ("In conclusion, X" → "X").
_SECTION_HEADING = re.compile(r"^(?:[A-Z]{4,}(?: [A-Z]{3,})?:?\s+)+(?=[A-Z])")
_LEAD_INS = re.compile(
    r"^(?:in conclusion|in summary|conclusions?|to conclude|overall|taken together|together|thus|therefore"
    r"|(?:these|our|the) (?:results|findings|data|observations|studies) (?:\w+ )?(?:suggest|indicate|show|"
    r"demonstrate|reveal|support|confirm)(?:ed|s)?(?: that)?|we (?:conclude|found|show|demonstrate|report)"
    r"(?:ed|s)? that)[\s,:]+",
    re.IGNORECASE,
)


# A sentence that states the study's aim or background restates the question; one that
# reports a result answers it. The weights re-rank sentences, never their relevance.
_AIM = re.compile(
    r"^(?:(?:OBJECTIVES?|BACKGROUND|IMPORTANCE|CONTEXT|AIMS?|PURPOSE|INTRODUCTION|RATIONALE|METHODS?|DESIGN"
    r"|SETTING|PARTICIPANTS|STUDY DESIGN)\b[\s:]*"
    r"|to (?:assess|test|determine|evaluate|investigate|examine|compare|study|explore|describe|identify"
    r"|characteri[sz]e|estimate|quantify|review)\b"
    r"|we (?:aimed|sought|set out|investigated|examined|assessed|evaluated|hypothesi[sz]ed|asked|tested)\b"
    r"|(?:this|the present|our) (?:study|trial|review|analysis) (?:aimed|was designed|sought|investigated)\b"
    r"|the (?:aim|purpose|objective|goal)s? of\b|here,? we\b)",
    re.IGNORECASE,
)
_FINDING = re.compile(
    r"^(?:RESULTS?|FINDINGS|CONCLUSIONS?|INTERPRETATION|MAIN RESULTS|AUTHORS'? CONCLUSIONS)\b"
    r"|\b(?:we (?:found|show|observed|demonstrate)|was associated|were associated|significantly"
    r"|(?:did|does|do) not|no (?:significant|difference|effect|evidence)|compared with|resulted in)\b",
)
AIM_WEIGHT = 0.6
FINDING_WEIGHT = 1.1


def role_weight(sentence: str) -> float:
    """How much a sentence reports a finding (>1) rather than an aim or background (<1)."""
    text = sentence.strip()
    if _AIM.match(text):
        return AIM_WEIGHT
    if _FINDING.search(text):
        return FINDING_WEIGHT
    return 1.0


@dataclass(frozen=True, slots=True)
class ScoredSentence:
    doc: int
    span: lexicon.SentenceSpan
    relevance: float  # how well the sentence answers the question, 0..1
    score: float  # relevance nudged by the document's retrieval rank


class ExtractiveDrafter:
    """Drafts a claim from evidence without any network; deterministic for equal inputs."""

    def __init__(
        self,
        relevance: Relevance,
        *,
        max_supports: int = 5,
        support_ratio: float = 0.55,
        rank_weight: float = 0.25,
        agreement_threshold: float = 0.3,
        min_relevance: float = 0.2,
    ) -> None:
        self.min_relevance = min_relevance
        self.relevance = relevance
        self.max_supports = max_supports
        self.support_ratio = support_ratio
        self.rank_weight = rank_weight
        self.agreement_threshold = agreement_threshold

    def draft(self, question: str, entity: str | None, evidence: list[EvidenceDoc]) -> ClaimDraft:
        """The claim that the evidence best supports as an answer to `question`."""
        scored = self._score_sentences(question, evidence)
        if not scored:
            return ClaimDraft(
                statement=f"No evidence was found that answers: {question.strip()}",
                entity=entity or _entity_from(question, question),
                confidence=0.0,
                supports=[],
            )
        best_per_doc: dict[int, ScoredSentence] = {}
        for item in scored:
            current = best_per_doc.get(item.doc)
            if current is None or item.score > current.score:
                best_per_doc[item.doc] = item
        ranked = sorted(best_per_doc.values(), key=lambda s: (-s.score, s.doc, s.span.index))
        lead = ranked[0]
        # Supports must answer the question themselves: a good retrieval rank is not enough.
        floor = max(self.min_relevance, self.support_ratio * lead.relevance)
        chosen = [lead, *[s for s in ranked[1:] if s.relevance >= floor][: self.max_supports - 1]]
        supports = [
            SupportDraft(
                source_id=evidence[s.doc].source_id,
                quote=s.span.text,
                locator=f"sentence {s.span.index + 1}",
            )
            for s in chosen
        ]
        return ClaimDraft(
            statement=_one_sentence(lead.span.text),
            entity=(entity or "").strip() or _entity_from(question, lead.span.text),
            confidence=self._confidence(lead, chosen),
            supports=supports,
        )

    def _score_sentences(self, question: str, evidence: list[EvidenceDoc]) -> list[ScoredSentence]:
        spans = [lexicon.split_sentences(doc.text) for doc in evidence]
        doc_terms = [lexicon.content_terms(doc.title + " " + doc.text) for doc in evidence]
        idf = lexicon.inverse_document_frequency(doc_terms)
        default_idf = max(idf.values(), default=1.0)
        query = lexicon.content_terms(question)
        flat = [(d, span) for d, doc_spans in enumerate(spans) for span in doc_spans]
        if not flat:
            return []
        known = {text: vector for doc in evidence for text, vector in doc.sentence_vectors.items()}
        vectors = self.relevance.embed([question] + [span.text for _, span in flat], known)
        dense_all = (
            vectors[1:] @ vectors[0] if vectors is not None else None
        )  # every sentence's cosine, one product
        priors = _rank_priors(evidence)
        scored: list[ScoredSentence] = []
        for i, (d, span) in enumerate(flat):
            terms = lexicon.content_terms(span.text)
            lexical = lexicon.weighted_coverage(query, terms, idf, default_idf)
            title_bonus = 0.1 * lexicon.weighted_coverage(
                query, lexicon.content_terms(evidence[d].title), idf, default_idf
            )
            dense = float(dense_all[i]) if dense_all is not None else None
            relevance = self.relevance.mix(min(1.0, lexical + title_bonus), dense)
            weighted = relevance * role_weight(span.text)
            score = round((1 - self.rank_weight) * weighted + self.rank_weight * priors[d], 6)
            scored.append(ScoredSentence(doc=d, span=span, relevance=relevance, score=score))
        return scored

    def _confidence(self, lead: ScoredSentence, chosen: list[ScoredSentence]) -> float:
        """Strength of the lead answer plus agreement of the other sources with it."""
        others = chosen[1:]
        agreeing = 0
        for other in others:
            close = (
                self.relevance.similarity(lead.span.text, other.span.text)
                >= self.agreement_threshold
            )
            if close and not lexicon.contradicts(lead.span.text, other.span.text):
                agreeing += 1
        disagreeing = sum(1 for o in others if lexicon.contradicts(lead.span.text, o.span.text))
        breadth = min(1.0, agreeing / 2.0)
        value = 0.15 + 0.45 * lead.relevance + 0.35 * breadth - 0.1 * min(1.0, disagreeing / 2.0)
        return round(min(0.95, max(0.05, value)), 3)


def _rank_priors(evidence: list[EvidenceDoc]) -> list[float]:
    """1.0 for the best-ranked document down to ~0 for the worst (by score, else by order)."""
    n = len(evidence)
    if n == 1:
        return [1.0]
    if all(doc.score is not None for doc in evidence):
        order = sorted(range(n), key=lambda i: (-(evidence[i].score or 0.0), i))
    else:
        order = list(range(n))
    priors = [0.0] * n
    for rank, i in enumerate(order):
        priors[i] = 1.0 / (1.0 + rank)
    return priors


def _one_sentence(text: str) -> str:
    """The sentence as a standalone claim: lead-in removed, first letter capitalised, one period."""
    statement = " ".join(text.split())
    stripped = _LEAD_INS.sub("", _SECTION_HEADING.sub("", statement, count=1), count=1)
    if len(stripped) >= 20:
        statement = stripped[0].upper() + stripped[1:]
    statement = statement.rstrip(" ;,:")
    if not statement.endswith((".", "!", "?")):
        statement += "."
    return statement[:2000]


def _entity_from(question: str, lead: str) -> str:
    """The question's most specific run of content words that the lead sentence mentions."""
    tokens = re.findall(r"[A-Za-z0-9][A-Za-z0-9\-']*", question)
    lead_terms = set(lexicon.content_terms(lead))
    runs: list[list[str]] = []
    current: list[str] = []
    for token in tokens:
        lowered = token.lower()
        if lowered in lexicon.STOPWORDS or lowered in lexicon.NEGATIONS or len(lowered) < 2:
            if current:
                runs.append(current)
            current = []
        else:
            current.append(token)
    if current:
        runs.append(current)
    if not runs:
        return "general"

    def weight(run: list[str]) -> tuple[int, int]:
        mentioned = sum(1 for t in run if lexicon.stem(t.lower()) in lead_terms)
        return (mentioned, -abs(len(run) - 2))

    best = max(runs, key=weight)[:4]
    return " ".join(t if any(c.isupper() for c in t[1:]) else t.lower() for t in best)[:200]
