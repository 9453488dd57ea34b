"""What the author knows while it writes: the plan, the evidence sentences and the key findings.

Pure and deterministic (no tools, no I/O): sub-questions from the topic's facets, evidence
sentences scored against a sub-question (hybrid relevance from the offline engine: idf-weighted
term coverage mixed with MiniLM cosine), agreement and opposition between sentences of different
papers (similarity plus the offline engine's polarity cues), and tags from the evidence count.
Agreement also demands what the citation checker will demand of each cited source — enough of
the finding's content words occur in that source — so a finding is never tagged on a citation
the checker would call unsupported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_contracts.corpus_tools import PaperRecord
from research_llm.offline import lexicon
from research_llm.offline.drafting import role_weight
from research_llm.offline.relevance import Relevance
from research_reports import Finding, FindingTag, Quote, Reference, Report, Section, check_report
from research_reports import text as checker_text

MIN_WORDS, MAX_WORDS = 7, 70
AGREE_SIMILARITY = 0.5
OPPOSE_SIMILARITY = 0.45
DUPLICATE_SIMILARITY = 0.6
MIN_SOURCE_OVERLAP = 0.4  # above the checker's 0.3, so an agreeing citation is never borderline
_SEPARATORS = re.compile(r"\s*(?:,|;|:|\band\b|\bor\b|\bversus\b|\bvs\.?|\bin\b|\bamong\b|\bwith\b|\bon\b|\bof\b|\bfor\b)\s*", re.I)
ANGLES = (
    ("By which mechanisms does {topic} act?", "{core} mechanism pathway"),
    ("Which outcomes and effect sizes are reported for {topic}?", "{core} outcome risk associated"),
    ("In which populations or settings was {topic} studied?", "{core} patients cohort trial"),
)


@dataclass(frozen=True, slots=True)
class SubQuestion:
    id: str
    text: str
    query: str


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a paper's text; `text` is an exact substring of `paper.text`."""

    paper: PaperRecord
    text: str
    relevance: float = 0.0


@dataclass
class KeyFinding:
    key: str
    question: SubQuestion
    lead: Sentence
    agreeing: list[Sentence] = field(default_factory=list)
    opposing: list[Sentence] = field(default_factory=list)

    @property
    def tag(self) -> FindingTag:
        """CONTESTED (conflicting evidence), SUPPORTED (≥ 2 agreeing sources), INSUFFICIENT (one)."""
        if self.opposing:
            return FindingTag.contested
        return FindingTag.supported if self.agreeing else FindingTag.insufficient

    @property
    def statement(self) -> str:
        return statement_of(self.lead.text)


def statement_of(sentence: str) -> str:
    """The finding as the report states it (`research_reports.text.statement_of`); its quote stays verbatim."""
    return checker_text.statement_of(sentence)


def topic_terms(topic: str) -> list[str]:
    """Content words of the topic in order (unstemmed, for queries)."""
    seen: dict[str, None] = {}
    for word in lexicon.words(topic):
        if len(word) > 2 and word not in lexicon.STOPWORDS and word not in lexicon.NEGATIONS:
            seen.setdefault(word, None)
    return list(seen)


def plan(topic: str) -> list[SubQuestion]:
    """3–5 sub-questions: the topic itself, one per facet (when it has several), then angles."""
    core = " ".join(topic_terms(topic)[:4]) or topic
    facets = [f for f in (p.strip() for p in _SEPARATORS.split(topic)) if topic_terms(f)]
    questions = [SubQuestion("Q1", f"What is the main evidence on {topic}?", topic)]
    if len(facets) >= 2:
        for facet in facets[:2]:
            others = " ".join(t for t in topic_terms(topic) if t not in topic_terms(facet))[:80]
            questions.append(SubQuestion(f"Q{len(questions) + 1}", f"What is reported about {facet} ({others})?", f"{facet} {others}"))
    for question, query in ANGLES:
        if len(questions) >= 4:
            break
        questions.append(SubQuestion(f"Q{len(questions) + 1}", question.format(topic=topic), query.format(core=core)))
    return questions[:5]


def sentences_of(paper: PaperRecord) -> list[str]:
    """Candidate evidence sentences of a paper: not too short, not too long."""
    spans = lexicon.split_sentences(paper.text)
    return [s.text for s in spans if MIN_WORDS <= len(s.text.split()) <= MAX_WORDS]


def score_sentences(relevance: Relevance, query: str, papers: list[PaperRecord]) -> list[Sentence]:
    """Every candidate sentence of `papers` scored against `query`, best first (CPU: call in a thread)."""
    candidates = [(rank, paper, s) for rank, paper in enumerate(papers) for s in sentences_of(paper)]
    if not candidates:
        return []
    query_terms = lexicon.content_terms(query)
    idf = lexicon.inverse_document_frequency([lexicon.content_terms(s) for _, _, s in candidates])
    vectors = relevance.embed([query] + [s for _, _, s in candidates])
    scored = []
    for i, (rank, paper, text) in enumerate(candidates):
        lexical = lexicon.weighted_coverage(query_terms, lexicon.content_terms(text), idf, 1.0)
        dense = float(vectors[0] @ vectors[i + 1]) if vectors is not None else None
        value = relevance.mix(lexical, dense) * role_weight(text) / (1.0 + 0.05 * rank)
        scored.append(Sentence(paper, text, round(value, 6)))
    return sorted(scored, key=lambda s: (-s.relevance, s.paper.paper_id, s.text))


def supports_in_text(statement: str, source_text: str) -> bool:
    """The citation checker's overlap test, with margin: enough of the statement's words occur in the source."""
    words = checker_text.content_tokens(checker_text.without_markers(statement))
    if not words:
        return False
    return len(words & checker_text.content_tokens(source_text)) / len(words) >= MIN_SOURCE_OVERLAP


def source_text(paper: PaperRecord) -> str:
    """What a reference carries for the checker: the title and the paper's text."""
    return f"{paper.title}\n{paper.text}".strip()


def checks_out(sentence: Sentence) -> bool:
    """Whether the citation checker accepts the sentence as a finding citing its own paper (a quirk
    of the text — footnote digits glued to words, "embryo1,2" — can make a number unfindable)."""
    reference = Reference(id=1, title=sentence.paper.title or sentence.paper.paper_id, source_text=source_text(sentence.paper))
    finding = Finding(statement=statement_of(sentence.text), citations=[1], quotes=[Quote(reference_id=1, text=sentence.text)])
    report = Report(title="check", sections=[Section(title="Key Findings", findings=[finding])], references=[reference])
    return not check_report(report).issues


def pick_findings(relevance: Relevance, question: SubQuestion, ranked: list[Sentence], taken: list[KeyFinding],
                  limit: int, min_relevance: float = 0.2) -> list[KeyFinding]:
    """Up to `limit` lead sentences from distinct papers, none restating a finding already taken,
    each with the sentences of other papers that agree with it."""
    found: list[KeyFinding] = []
    used_papers = {f.lead.paper.paper_id for f in taken}
    for sentence in ranked:
        if len(found) >= limit or sentence.relevance < min_relevance:
            break
        if sentence.paper.paper_id in used_papers or not checks_out(sentence):
            continue
        if any(relevance.similarity(sentence.text, f.lead.text) >= DUPLICATE_SIMILARITY for f in (*taken, *found)):
            continue
        finding = KeyFinding(key=f"{question.id}-F{len(found) + 1}", question=question, lead=sentence)
        finding.agreeing = agreeing(relevance, finding, ranked)
        found.append(finding)
        used_papers.add(sentence.paper.paper_id)
    return found


def agreeing(relevance: Relevance, finding: KeyFinding, pool: list[Sentence], limit: int = 2) -> list[Sentence]:
    """Sentences of other papers that say the same (similar, same polarity, checker-safe overlap)."""
    out: list[Sentence] = []
    papers = {finding.lead.paper.paper_id}
    for other in pool:
        if other.paper.paper_id in papers or len(out) >= limit:
            continue
        if lexicon.contradicts(finding.lead.text, other.text):
            continue
        if relevance.similarity(finding.lead.text, other.text) < AGREE_SIMILARITY:
            continue
        if not supports_in_text(finding.statement, source_text(other.paper)):
            continue
        out.append(other)
        papers.add(other.paper.paper_id)
    return out


def opposing(relevance: Relevance, finding: KeyFinding, pool: list[Sentence], limit: int = 1) -> list[Sentence]:
    """Sentences of other papers on the same point with the opposite polarity."""
    mine = {finding.lead.paper.paper_id, *(s.paper.paper_id for s in finding.agreeing)}
    out: list[Sentence] = []
    for other in pool:
        if other.paper.paper_id in mine or len(out) >= limit:
            continue
        if (lexicon.contradicts(finding.lead.text, other.text)
                and relevance.similarity(finding.lead.text, other.text) >= OPPOSE_SIMILARITY and checks_out(other)):
            out.append(other)
            mine.add(other.paper.paper_id)
    return out


def counter_query(statement: str) -> str:
    """A search for the opposite of `statement`: its content words with the polarity flipped."""
    words = [w for w in lexicon.words(statement) if w not in lexicon.STOPWORDS and len(w) > 2][:12]
    flipped = []
    for word in words:
        for up, down in lexicon.OPPOSITES:
            if word in up:
                word = sorted(down)[0]
                break
            if word in down:
                word = sorted(up)[0]
                break
        flipped.append(word)
    cue = "" if lexicon.negated(statement) else " no effect not associated"
    return (" ".join(flipped) + cue).strip()
