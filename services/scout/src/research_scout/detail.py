"""What a source list says about each source, per detail level (seed 002 §6) — the offline engine.

Extractive and deterministic: every sentence it outputs is a sentence of the source's own text
(its abstract or snippet), so a fact can always be traced back to where it stands.

- citation_summary: the abstract when it is short (≤ 4 sentences), else the 3 sentences that
  cover the keywords best, in the source's order;
- citation_extract: + the extended extract (the whole abstract), key findings as bullets
  (sentences stating a result) and a methodology note for studies (the sentence naming the
  design) — rendered into `extract`;
- facts_list: + numbered factual statements, each one sentence of the source with its locator,
  tagged `high` (a measured or explicit result), `inferred` (hedged: may, suggest, …) or
  `medium` (any other plain statement); a structured abstract's results and conclusions first,
  its background, aims and design sentences never while it states a finding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from research_contracts.sourcelists import DetailLevel, FactConfidence
from research_reports.text import content_tokens
from research_scout.prepare import Candidate

SUMMARY_SENTENCES = 3
MAX_FINDINGS = 5
MAX_FACTS = 8
_RESULT = re.compile(
    r"\b(significant(ly)?|reduc\w*|increas\w*|decreas\w*|improv\w*|associat\w*|lower\w*|higher|"
    r"demonstrat\w*|show(s|ed|n)?|found|conclud\w*|effective|risk|odds|hazard|p\s*[<=]|ci\b|\d+(\.\d+)?\s*%)",
    re.I,
)
_MEASURED = re.compile(r"\d|\bp\s*[<=>]|\bconfidence interval\b|\b(OR|RR|HR|CI)\b")
_HEDGE = re.compile(r"\b(may|might|could|suggest\w*|possibl\w*|likely|potential\w*|appear\w*|hypothes\w*|unclear|perhaps)\b", re.I)
# A structured abstract's section label ("CONTEXT", "RESULTS") is not part of what the sentence states.
_LABEL = re.compile(r"^(?:[A-Z]{3,}(?:\s+(?:AND\s+)?[A-Z]{3,})*\s*:?\s+)(?=[A-Z0-9])")
# A structured abstract's section names: what frames a study, and what reports its findings.
_SECTION = re.compile(r"^([A-Z]{3,}(?:[ ,]+(?:AND\s+)?[A-Z]{3,})*)\s*:?\s+(?=[A-Z0-9(])")
_FRAMING = re.compile(r"\b(BACKGROUND|CONTEXT|INTRODUCTION|OBJECTIVES?|AIMS?|PURPOSE|METHODS?|DESIGN|SETTINGS?|"
                      r"PARTICIPANTS|PATIENTS|SUBJECTS|INTERVENTIONS?|MEASURES|MEASUREMENTS)\b")
_FINDING = re.compile(r"\b(RESULTS?|FINDINGS|CONCLUSIONS?|INTERPRETATION)\b")
# Aims say what a study set out to do, not what it found or states.
_AIM = re.compile(r"^(?:(?:OBJECTIVES?|AIMS?|PURPOSE)\b|"
                  r"(?:in this (?:study|paper|work),?\s+)?we (?:aimed|sought|set out|hypothesi[sz]ed)|the (?:aim|purpose|objective)s? of|"
                  r"to (?:test|evaluate|assess|determine|investigate|examine|compare)\b)", re.I)
_DESIGN = re.compile(
    r"\b(randomi[sz]ed|controlled trial|cohort|case-control|cross-sectional|meta-analys[ie]s|systematic review|"
    r"retrospective|prospective|observational|double-blind|placebo|participants|patients were|we (conducted|performed|"
    r"analy[sz]ed|recruited|enrolled)|n\s*=\s*\d+|survey|simulation|benchmark|experiment\w*)\b",
    re.I,
)


@dataclass(frozen=True)
class FactRecord:
    """A fact with its provenance: the sentence it is (or rests on) and where that sentence stands."""

    statement: str
    confidence: FactConfidence
    quote: str
    locator: str


@dataclass
class SourceDetail:
    """Everything extracted from one source at one detail level."""

    summary: str
    extract: str | None = None
    key_findings: list[str] = field(default_factory=list)
    methodology: str | None = None
    facts: list[FactRecord] | None = None
    model: str = "offline-scout"


def locator(item: Candidate, index: int) -> str:
    """Where sentence `index` of a source stands (`abstract sentence 3` / `snippet sentence 1`)."""
    kind = "abstract" if item.hit.source not in {"tavily", "tavily_news"} else "snippet"
    return f"{kind} sentence {index + 1}"


def summarise(item: Candidate, keywords: list[str]) -> str:
    """The abstract if short, else its best-covering sentences in source order."""
    sentences = item.sentences
    if not sentences:
        return item.hit.title
    if len(sentences) <= 4:
        return " ".join(sentences)
    terms = set().union(*(content_tokens(k) for k in keywords)) if keywords else set()
    scored = sorted(range(len(sentences)), key=lambda i: (-len(content_tokens(sentences[i]) & terms), i))
    chosen = sorted(scored[:SUMMARY_SENTENCES])
    return " ".join(sentences[i] for i in chosen)


def key_findings(item: Candidate) -> list[str]:
    return [s for s in item.sentences if _RESULT.search(s)][:MAX_FINDINGS]


def methodology(item: Candidate, academic: bool) -> str | None:
    if not academic:
        return None
    return next((s for s in item.sentences if _DESIGN.search(s)), None)


def fact_confidence(sentence: str) -> FactConfidence:
    if _HEDGE.search(sentence):
        return FactConfidence.inferred
    if _RESULT.search(sentence) and _MEASURED.search(sentence):
        return FactConfidence.high
    if _RESULT.search(sentence):
        return FactConfidence.high if re.search(r"\b(significant|demonstrat|conclud)", sentence, re.I) else FactConfidence.medium
    return FactConfidence.medium


def _section(sentence: str) -> str | None:
    """The structured abstract's section a sentence opens ("RESULTS", "DESIGN, SETTING, AND PATIENTS")."""
    found = _SECTION.match(sentence)
    return found.group(1).upper() if found else None


def facts(item: Candidate) -> list[FactRecord]:
    """Declarative sentences of the source (≥ 6 words, not a question), each a fact verbatim.

    A structured abstract says itself which sentences frame the study (background, aims, design,
    setting, participants, measures): those are never facts while the source states a finding, and
    its results and conclusions come first. Aims are never facts."""
    stated: list[tuple[int, int, str]] = []  # (order: findings first, index, statement)
    framing: list[tuple[int, str]] = []
    section: str | None = None
    for index, sentence in enumerate(item.sentences):
        section = _section(sentence) or section
        statement = _LABEL.sub("", sentence)
        if sentence.endswith("?") or _AIM.match(sentence) or len(statement.split()) < 6 or _AIM.match(statement):
            continue
        if section and _FRAMING.search(section):
            framing.append((index, statement))
        else:
            stated.append((0 if section and _FINDING.search(section) else 1, index, statement))
    if stated:
        return [FactRecord(s, fact_confidence(s), s, locator(item, i)) for _, i, s in sorted(stated)[:MAX_FACTS]]
    # Only framing sentences: what the source says of itself, tagged as such.
    return [FactRecord(s, FactConfidence.inferred, s, locator(item, i)) for i, s in framing[:MAX_FACTS]]


def render_extract(text: str, findings: list[str], method: str | None) -> str:
    """The `extract` field: the extended extract, then key findings as bullets, then the methodology note."""
    parts = [text.strip()]
    if findings:
        parts.append("Key findings:\n" + "\n".join(f"- {f}" for f in findings))
    if method:
        parts.append(f"Methodology: {method}")
    return "\n\n".join(p for p in parts if p)


def detail(item: Candidate, level: DetailLevel, keywords: list[str], *, academic: bool) -> SourceDetail:
    """The offline engine's output for one source at `level`."""
    result = SourceDetail(summary=summarise(item, keywords))
    if level.rank >= DetailLevel.citation_extract.rank:
        result.key_findings = key_findings(item)
        result.methodology = methodology(item, academic)
        result.extract = render_extract(item.text or item.hit.title, result.key_findings, result.methodology)
    if level is DetailLevel.facts_list:
        result.facts = facts(item)
    return result
