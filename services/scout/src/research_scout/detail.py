"""What a source list says about each source, per detail level (seed 002 §6) — the offline engine.

Extractive and deterministic: every sentence it outputs is a sentence of the source's own text
(its abstract or snippet), so a fact can always be traced back to where it stands.

- citation_summary: the abstract when it is short (≤ 4 sentences), else the 3 sentences that
  cover the keywords best, in the source's order;
- citation_extract: + the extended extract (the whole abstract), key findings as bullets
  (sentences stating a result) and a methodology note for studies (the sentence naming the
  design) — rendered into `extract`;
- facts_list: + numbered factual statements about the prompt, each one sentence of the source
  with its locator: the sentences the trained evidence model (`research_judgement`, through
  `research_verification.evidence`) finds to be findings bearing on the prompt — P(evidence) at
  least the shipped `evidence` threshold and within `FACT_MARGIN` of the source's best finding;
  `high` from `sure_evidence` up, `medium` below — a
  structured abstract's results and conclusions first, then by that probability. Background,
  aims and design sentences (a structured abstract's framing sections, or sentences the model
  finds no evidence in) only when the source has no finding at all, then tagged `inferred`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from research_contracts.sourcelists import DetailLevel, FactConfidence
from research_reports.text import content_tokens
from research_scout.prepare import Candidate
from research_verification import null_result, sections
from research_verification.evidence import Judgement, default_judge, thresholds
from research_verification.stance import question_as_statement

SUMMARY_SENTENCES = 3
MAX_FINDINGS = 5
MAX_FACTS = 6
MAX_INFERRED = (
    2  # a source without findings: at most this many framing sentences, said to be inferred
)
# A fact's P(evidence) is within this of the source's best finding: past it the evidence model is
# guessing among a source's other sentences (fold 0 of SciFact train, claims 31–102: annotated
# rationales among the facts 0.51 → 0.64, facts per gold abstract 2.4 → 1.6; docs/benchmarks.md).
FACT_MARGIN = 0.1
# With the abstract judge, one fact per source: the sentence the model rests its evidence on most (or
# the sentence-level rule's first). On the gold abstracts of fold 0 (102 claims) it is an annotated
# rationale 0.71 of the time; the model's two rationale sentences 0.61, the sentence-level rule's
# facts 0.62 (docs/benchmarks.md, bench:sourcelist).
ABSTRACT_FACTS = 1
_RESULT = re.compile(
    r"\b(significant(ly)?|reduc\w*|increas\w*|decreas\w*|improv\w*|associat\w*|lower\w*|higher|"
    r"demonstrat\w*|show(s|ed|n)?|found|conclud\w*|effective|risk|odds|hazard|p\s*[<=]|ci\b|\d+(\.\d+)?\s*%)",
    re.IGNORECASE,
)
# A structured abstract's section label ("CONTEXT", "RESULTS") is not part of what the sentence states.
_LABEL = re.compile(r"^(?:[A-Z]{3,}(?:\s+(?:AND\s+)?[A-Z]{3,})*\s*:?\s+)(?=[A-Z0-9])")
# Aims say what a study set out to do, not what it found or states.
_AIM = re.compile(
    r"^(?:(?:OBJECTIVES?|AIMS?|PURPOSE)\b|"
    r"(?:in this (?:study|paper|work),?\s+)?we (?:aimed|sought|set out|hypothesi[sz]ed)|the (?:aim|purpose|objective)s? of|"
    r"to (?:test|evaluate|assess|determine|investigate|examine|compare)\b)",
    re.IGNORECASE,
)
_DESIGN = re.compile(
    r"\b(randomi[sz]ed|controlled trial|cohort|case-control|cross-sectional|meta-analys[ie]s|systematic review|"
    r"retrospective|prospective|observational|double-blind|placebo|participants|patients were|we (conducted|performed|"
    r"analy[sz]ed|recruited|enrolled)|n\s*=\s*\d+|survey|simulation|benchmark|experiment\w*)\b",
    re.IGNORECASE,
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
    model: str = "offline-scout-judgement"  # facts by the evidence model


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
    scored = sorted(
        range(len(sentences)), key=lambda i: (-len(content_tokens(sentences[i]) & terms), i)
    )
    chosen = sorted(scored[:SUMMARY_SENTENCES])
    return " ".join(sentences[i] for i in chosen)


def key_findings(item: Candidate) -> list[str]:
    return [s for s in item.sentences if _RESULT.search(s)][:MAX_FINDINGS]


def methodology(item: Candidate, academic: bool) -> str | None:
    if not academic:
        return None
    return next((s for s in item.sentences if _DESIGN.search(s)), None)


def facts(item: Candidate, prompt: str, model: Judgement | None = None) -> list[FactRecord]:
    """The source's findings about `prompt`, verbatim (see the module docstring).

    The prompt is judged as a statement ("Does X improve Y?" → "X improve Y"), the form the evidence
    model was trained on. Questions and sentences under six words are never facts; aims never while
    anything else is left."""
    candidates: list[
        tuple[int, str, bool, bool]
    ] = []  # (index, statement, framing, reports a finding)
    section: str | None = None
    for index, sentence in enumerate(item.sentences):
        section = sections.section(sentence) or section
        statement = _LABEL.sub("", sentence)
        if sentence.endswith("?") or len(statement.split()) < 6:
            continue
        framing = sections.frames(section) or bool(_AIM.match(sentence) or _AIM.match(statement))
        candidates.append((index, statement, framing, sections.reports(section)))
    if not candidates:
        return []
    model = model or default_judge()
    limits = thresholds(model)
    claim = question_as_statement(prompt)
    probability = model.evidence(
        claim, [c[1] for c in candidates], [item.hit.title or None] * len(candidates)
    )
    scored = [(float(p), *c) for c, p in zip(candidates, probability, strict=True)]
    # A result that was not significant ("a trend toward …; P = 0.10") comes after the effects a
    # source establishes, and is never stated with high confidence.
    trend = {t[1] for t in scored if null_result(t[2], claim)}
    findings = [t for t in scored if not t[3] and t[0] >= limits.evidence]
    best = max((t[0] for t in findings), default=1.0)
    stated = sorted(
        (t for t in findings if t[0] >= best - FACT_MARGIN),
        key=lambda t: (t[1] in trend, not t[4], -t[0], t[1]),
    )
    if stated:
        return [
            FactRecord(
                s,
                FactConfidence.high
                if p >= limits.sure_evidence and i not in trend
                else FactConfidence.medium,
                s,
                locator(item, i),
            )
            for p, i, s, _, _ in stated[:MAX_FACTS]
        ]
    # No finding about the prompt: what the source says of itself, best first, tagged as such.
    pool = [
        t for t in scored if not _AIM.match(t[2])
    ] or scored  # an aim only when the source says nothing else
    rest = sorted(pool, key=lambda t: (-t[0], t[1]))[:MAX_INFERRED]
    return [FactRecord(s, FactConfidence.inferred, s, locator(item, i)) for _, i, s, _, _ in rest]


def render_extract(text: str, findings: list[str], method: str | None) -> str:
    """The `extract` field: the extended extract, then key findings as bullets, then the methodology note."""
    parts = [text.strip()]
    if findings:
        parts.append("Key findings:\n" + "\n".join(f"- {f}" for f in findings))
    if method:
        parts.append(f"Methodology: {method}")
    return "\n\n".join(p for p in parts if p)


def rationale_facts(item: Candidate, indices: tuple[int, ...], sure: bool) -> list[FactRecord]:
    """The sentence the abstract model rests a source's evidence on most (`ABSTRACT_FACTS`): `high`
    when it is as sure as it must be of any paper, `medium` otherwise."""
    confidence = FactConfidence.high if sure else FactConfidence.medium
    out = []
    for index in indices[:ABSTRACT_FACTS]:
        statement = _LABEL.sub("", item.sentences[index]).strip()
        out.append(FactRecord(statement, confidence, statement, locator(item, index)))
    return out


def detail(
    item: Candidate,
    level: DetailLevel,
    keywords: list[str],
    *,
    academic: bool,
    prompt: str = "",
    judged: Any = None,
    abstract: bool = False,
) -> SourceDetail:
    """The offline engine's output for one source at `level` (facts about `prompt`; the keywords
    stand for a prompt not given). A source the abstract model found evidence in (`judged.facts`)
    states the sentence it rests on most; any other, the sentence-level findings (`facts`) — only
    the first of them when the abstract model judged the list (`abstract`, `ABSTRACT_FACTS`)."""
    result = SourceDetail(summary=summarise(item, keywords))
    if level.rank >= DetailLevel.citation_extract.rank:
        result.key_findings = key_findings(item)
        result.methodology = methodology(item, academic)
        result.extract = render_extract(
            item.text or item.hit.title, result.key_findings, result.methodology
        )
    if level is DetailLevel.facts_list:
        indices = tuple(getattr(judged, "facts", ()) or ())
        result.facts = (
            rationale_facts(item, indices, bool(getattr(judged, "sure", False)))
            if indices
            else facts(item, prompt or " ".join(keywords))[
                : ABSTRACT_FACTS if abstract else MAX_FACTS
            ]
        )
    return result
