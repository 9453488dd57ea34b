"""What the author knows while it writes: the searches, candidate sentences and the key findings.

Pure and deterministic (no tools, no I/O, no model): the searches from the topic and its facets, a
paper's candidate finding sentences (a structured abstract's results and conclusions; never its
background, aims or design sentences, never a question), a finding's statement (artefacts stripped,
the quote verbatim), the citation checker's tests a finding must pass, and the counter-evidence
query. Which papers are on the topic, which sentences are findings, and which agree or conflict
are decided by the trained models (`judged`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_contracts.corpus_tools import PaperRecord
from research_llm.offline import lexicon
from research_reports import Finding, FindingTag, Quote, Reference, Report, Section, check_report
from research_reports import text as checker_text
from research_verification import sections

MIN_WORDS, MAX_WORDS = 7, 70
MIN_SOURCE_OVERLAP = 0.4  # above the checker's 0.3, so an agreeing citation is never borderline
_SEPARATORS = re.compile(
    r"\s*(?:,|;|:|\band\b|\bor\b|\bversus\b|\bvs\.?|\bin\b|\bamong\b|\bwith\b|\bon\b|\bof\b|\bfor\b)\s*",
    re.IGNORECASE,
)
# Aims say what a study set out to do, not what it found.
_AIM = re.compile(
    r"^(?:(?:in this (?:study|paper|work),?\s+)?we (?:aimed|sought|set out|hypothesi[sz]ed)|"
    r"the (?:aim|purpose|objective|goal)s? of|to (?:test|evaluate|assess|determine|investigate|examine|compare)\b|"
    r"(?:this|the present|our) (?:study|trial|review|analysis) (?:aimed|was designed|sought))",
    re.IGNORECASE,
)


_ASKED = "What do the studies find on "


@dataclass(frozen=True, slots=True)
class SubQuestion:
    id: str
    text: str
    query: str


def asking(subject: str) -> str:
    """The sub-question on `subject`: "What do the studies find on X?"."""
    return f"{_ASKED}{subject}?"


def asked_about(question: str) -> str:
    """What a sub-question asks about: "What do the studies find on X?" → "X"."""
    return question.removeprefix(_ASKED).removesuffix("?")


@dataclass(frozen=True, slots=True)
class Sentence:
    """One sentence of a paper's text; `text` is an exact substring of `paper.text`."""

    paper: PaperRecord
    text: str
    relevance: float = (
        0.0  # how strongly the models back it as a finding on the topic (P(on topic) × P(evidence))
    )


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


def searches(topic: str) -> list[SubQuestion]:
    """What the author searches: the topic, its content words, and each facet with the rest of the
    topic (when it has several). The review's sub-questions come later, from the subtopic clusters of
    what these searches found (`judged.clusters`)."""
    terms = topic_terms(topic)
    facets = [f for f in (p.strip() for p in _SEPARATORS.split(topic)) if topic_terms(f)]
    queries = [topic, " ".join(terms)]
    if len(facets) >= 2:
        for facet in facets[:3]:
            others = " ".join(t for t in terms if t not in topic_terms(facet))
            queries.append(f"{facet} {others}".strip())
    unique = dict.fromkeys(q for q in queries if q.strip())
    return [SubQuestion(f"S{n}", q, q) for n, q in enumerate(unique, start=1)]


def sentences_of(paper: PaperRecord) -> list[str]:
    """Candidate finding sentences of a paper, verbatim: not too short or long, no question, no aim,
    and — in a structured abstract — none of the sections that frame the study (background,
    objectives, design, setting, participants, measures). A review or commentary ("Here, we discuss …",
    `sections.reviews_others`) has none: its sentences retell others' work, they are no key finding."""
    spans = lexicon.split_sentences(paper.text)
    if sections.reviews_others([span.text for span in spans]):
        return []
    stated: list[str] = []
    section: str | None = None
    for span in spans:
        text = span.text
        section = sections.section(text) or section
        statement = statement_of(text)
        if (
            not MIN_WORDS <= len(text.split()) <= MAX_WORDS
            or text.rstrip().endswith("?")
            or _AIM.match(statement)
        ):
            continue
        if not sections.frames(section):
            stated.append(text)
    return stated


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
    reference = Reference(
        id=1,
        title=sentence.paper.title or sentence.paper.paper_id,
        source_text=source_text(sentence.paper),
    )
    finding = Finding(
        statement=statement_of(sentence.text),
        citations=[1],
        quotes=[Quote(reference_id=1, text=sentence.text)],
    )
    report = Report(
        title="check",
        sections=[Section(title="Key Findings", findings=[finding])],
        references=[reference],
    )
    return not check_report(report).issues


def counter_query(statement: str) -> str:
    """A search for the opposite of `statement`: its content words with the polarity flipped."""
    words = [w for w in lexicon.words(statement) if w not in lexicon.STOPWORDS and len(w) > 2][:12]
    flipped = []
    for word in words:
        term = word
        for up, down in lexicon.OPPOSITES:
            if word in up:
                term = min(down)
                break
            if word in down:
                term = min(up)
                break
        flipped.append(term)
    cue = "" if lexicon.negated(statement) else " no effect not associated"
    return (" ".join(flipped) + cue).strip()
