"""Conform a run's judged sources to the seed's `SourceList`, check its facts, diff it against the last snapshot.

`conform` ranks the kept sources (strong before partial, then relevance; irrelevant ones never
enter), honours the list's per-source actions (a removed source never comes back, a preferred
one is kept even when the search no longer finds it), and builds three things stored together
as one report version: the public `SourceList`, the `provenance` of each source (label,
rationale, fact locators and quotes, retraction flag) and a `research_reports.Report` (kind
`source_list`) that the exports render.

Facts are checked with the shared citation checker (`research_reports.check_report`): each is
a finding citing its source, quoting the sentence it rests on; a fact whose quote is not in
the source verbatim, or whose statement the source does not support, is dropped and counted.

`diff` compares two snapshots by `source_id`: new, dropped, and changed (metadata fields or
retraction status).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from research_contracts.sourcelists import (
    DetailLevel,
    Fact,
    ListedSource,
    SourceChange,
    SourceList,
    SourceListDiff,
)
from research_reports import CitationCheck, Finding, Quote, Reference, Report, Section, check_report
from research_scout.detail import FactRecord, SourceDetail
from research_scout.experiment import Judgement, clamp01
from research_scout.prepare import Brief, Candidate

_LABEL_ORDER = {"strong": 0, "partial": 1, "irrelevant": 2}
DIFF_FIELDS = ("title", "authors", "publication", "date", "doi", "url")


@dataclass
class Judged:
    """A candidate with its judgement and (once extracted) its detail."""

    item: Candidate
    judgement: Judgement
    detail: SourceDetail | None = None


@dataclass
class Snapshot:
    """One stored version: the public list, per-source provenance and the report the exports use."""

    source_list: SourceList
    provenance: dict[str, dict[str, Any]]
    report: Report
    citation_check: CitationCheck
    dropped_facts: int = 0
    iterations: list[dict[str, Any]] = field(default_factory=list)

    def content(self) -> dict[str, Any]:
        return {
            "source_list": self.source_list.model_dump(mode="json"),
            "provenance": self.provenance,
            "report": self.report.model_dump(mode="json"),
            "iterations": self.iterations,
            "dropped_facts": self.dropped_facts,
        }

    @classmethod
    def from_content(cls, content: dict[str, Any]) -> Snapshot:
        return cls(
            source_list=SourceList.model_validate(content["source_list"]),
            provenance=dict(content.get("provenance") or {}),
            report=Report.model_validate(content["report"]),
            citation_check=CitationCheck(),
            dropped_facts=int(content.get("dropped_facts") or 0),
            iterations=list(content.get("iterations") or []),
        )


def rank(judged: list[Judged], removed: set[uuid.UUID]) -> list[Judged]:
    """Strong before partial, then by relevance; irrelevant and removed sources left out."""
    kept = [
        j for j in judged if j.judgement.label != "irrelevant" and j.item.source_id not in removed
    ]
    return sorted(
        kept, key=lambda j: (_LABEL_ORDER[j.judgement.label], -j.judgement.relevance, j.item.key)
    )


def listed(
    item: Candidate, verdict: Judgement, detail: SourceDetail, level: DetailLevel
) -> ListedSource:
    hit = item.hit
    # Every source carries an identifier a reader can follow: `origin_id` (a corpus paper: `corpus:<id>`,
    # the id the corpus search and tools answer with) and a link — its URL, its DOI's, else that id.
    url = hit.url or (f"https://doi.org/{hit.doi}" if hit.doi else "") or hit.source_id
    return ListedSource(
        source_id=item.source_id,
        title=hit.title or "(untitled)",
        authors=list(hit.authors),
        publication=hit.venue or "",
        date=item.published,
        doi=hit.doi,
        url=url,
        origin_id=hit.source_id,
        relevance_score=clamp01(verdict.relevance),
        summary=detail.summary,
        extract=detail.extract if level.rank >= DetailLevel.citation_extract.rank else None,
        facts=[Fact(statement=f.statement, confidence=f.confidence) for f in detail.facts or []]
        if level is DetailLevel.facts_list
        else None,
    )


def _reference(number: int, item: Candidate, source: ListedSource) -> Reference:
    return Reference(
        id=number,
        title=source.title,
        authors=source.authors,
        year=source.date.year if source.date else None,
        venue=source.publication or None,
        doi=source.doi,
        url=source.url or None,
        paper_id=item.hit.source_id,
        source_text=f"{item.hit.title}. {item.text}".strip(),
    )


def check_facts(
    report: Report, facts: dict[int, list[FactRecord]], source_ids: dict[int, str]
) -> tuple[dict[str, list[FactRecord]], CitationCheck, int]:
    """Run the citation checker over every fact; keep those without an issue (per source id)."""
    section = Section(title="Facts", findings=[])
    for number, records in facts.items():
        title = report.references[number - 1].title
        for index, record in enumerate(records):
            section.findings.append(
                Finding(
                    id=f"{number}-{index}",
                    statement=record.statement,
                    citations=[number],
                    tag=record.confidence.value,
                    group=f"[{number}] {title}",
                    quotes=[Quote(reference_id=number, text=record.quote, locator=record.locator)],
                )
            )
    report.sections.append(section)
    check = check_report(report)
    rejected = {issue.finding_id for issue in check.issues if issue.finding_id}
    kept: dict[str, list[FactRecord]] = {}
    dropped = 0
    for number, records in facts.items():
        good = [r for i, r in enumerate(records) if f"{number}-{i}" not in rejected]
        dropped += len(records) - len(good)
        kept[source_ids[number]] = good
    section.findings = [f for f in section.findings if f.id not in rejected]
    return kept, check, dropped


def conform(
    brief: Brief,
    chosen: list[Judged],
    *,
    preferred: dict[str, dict[str, Any]],
    generated_at: datetime,
    next_run_at: datetime | None,
    run_id: str,
) -> Snapshot:
    """The snapshot of a run. `preferred` maps a source id to its stored copy
    (`{"source": ListedSource JSON, "provenance": {...}}`) for sources flagged preferred."""
    request = brief.request
    level = request.detail_level
    report = Report(
        title=f"Source list: {request.prompt[:120]}",
        kind="source_list",
        metadata={
            "run_id": run_id,
            "keywords": brief.keywords,
            "source_type": request.source_type.value,
            "detail_level": level.value,
        },
    )
    sources: list[ListedSource] = []
    provenance: dict[str, dict[str, Any]] = {}
    facts: dict[int, list[FactRecord]] = {}
    numbers: dict[int, str] = {}
    for entry in chosen[: request.num_references]:
        assert entry.detail is not None, "extract details before conforming"
        source = listed(entry.item, entry.judgement, entry.detail, level)
        number = len(sources) + 1
        report.references.append(_reference(number, entry.item, source))
        sources.append(source)
        numbers[number] = str(source.source_id)
        if level is DetailLevel.facts_list:
            facts[number] = list(entry.detail.facts or [])
        provenance[str(source.source_id)] = {
            "origin_id": entry.item.hit.source_id,
            "key": entry.item.key,
            "seen_in": entry.item.seen_in,
            "label": entry.judgement.label,
            "confidence": clamp01(entry.judgement.confidence),
            "rationale": entry.judgement.rationale,
            "retracted": entry.item.retracted,
            "key_findings": entry.detail.key_findings,
            "methodology": entry.detail.methodology,
            "model": entry.detail.model,
            "preferred": str(source.source_id) in preferred,
        }
    check, dropped = CitationCheck(), 0
    if level is DetailLevel.facts_list:
        kept, check, dropped = check_facts(report, facts, numbers)
        for source in sources:
            records = kept.get(str(source.source_id), [])
            source.facts = [Fact(statement=r.statement, confidence=r.confidence) for r in records]
            provenance[str(source.source_id)]["facts"] = [
                {
                    "statement": r.statement,
                    "confidence": r.confidence.value,
                    "quote": r.quote,
                    "locator": r.locator,
                }
                for r in records
            ]
    numbered = {source_id: number for number, source_id in numbers.items()}
    for source_id, stored in preferred.items():  # flagged preferred: kept on re-runs
        if source_id not in numbered:
            source = ListedSource.model_validate(stored["source"])
            sources.append(source)
            provenance[source_id] = {
                **stored.get("provenance", {}),
                "preferred": True,
                "kept_from_previous": True,
            }
            numbered[source_id] = len(report.references) + 1
            report.references.append(
                Reference(
                    id=numbered[source_id],
                    title=source.title,
                    authors=source.authors,
                    doi=source.doi,
                    url=source.url or None,
                    year=source.date.year if source.date else None,
                    venue=source.publication or None,
                    paper_id=provenance[source_id].get("origin_id"),
                )
            )
    sources.sort(key=lambda s: 0 if provenance[str(s.source_id)].get("preferred") else 1)
    report.sections.insert(
        0,
        Section(
            title="Sources",
            requires_citations=False,
            body="\n".join(f"- {s.title} [{numbered[str(s.source_id)]}]" for s in sources),
        ),
    )
    source_list = SourceList(
        run_id=run_id,
        prompt=request.prompt,
        keywords=brief.keywords,
        source_type=request.source_type,
        detail_level=level,
        generated_at=generated_at,
        next_run_at=next_run_at,
        sources=sources,
    )
    return Snapshot(source_list, provenance, report, check, dropped)


def why_empty(brief: Brief, iterations: list[dict[str, Any]], judged: list[Judged]) -> str:
    """What an empty list says: what was searched, how many papers were read, the best candidate and
    why it fell short (its judge's rationale)."""
    queries = [str(i["query"]) for i in iterations if i.get("query")]
    where = ", ".join(brief.sources) or "no source (none allowed for this source type)"
    text = (
        f"No source was judged on the prompt. Searched {where} with {len(queries)} "
        f"quer{'y' if len(queries) == 1 else 'ies'} ({'; '.join(repr(q) for q in queries[:5])}); "
        f"read {len(judged)} paper{'' if len(judged) == 1 else 's'}."
    )
    degraded = sorted({name for i in iterations for name in (i.get("degraded") or {})})
    if degraded:
        text += f" Sources that gave nothing: {', '.join(degraded)}."
    if judged:
        best = max(judged, key=lambda j: (j.judgement.relevance, j.item.key))
        text += (
            f" The best candidate, {best.item.hit.title[:200]!r} ({best.item.hit.source_id}), was {best.judgement.label}: "
            f"{best.judgement.rationale[:600]}."
        )
    return text[:2000]


def diff(previous: Snapshot | None, current: Snapshot) -> SourceListDiff:
    """New, changed (metadata or retraction) and dropped sources against the previous snapshot."""
    if previous is None:
        return SourceListDiff(new=[_change(s, "new") for s in current.source_list.sources])
    before = {s.source_id: s for s in previous.source_list.sources}
    after = {s.source_id: s for s in current.source_list.sources}
    result = SourceListDiff(previous_run_id=previous.source_list.run_id)
    for source_id, source in after.items():
        old = before.get(source_id)
        if old is None:
            result.new.append(_change(source, "new"))
            continue
        fields = [name for name in DIFF_FIELDS if getattr(old, name) != getattr(source, name)]
        was = bool(previous.provenance.get(str(source_id), {}).get("retracted"))
        now = bool(current.provenance.get(str(source_id), {}).get("retracted"))
        if was != now:
            fields.append("retracted")
        if fields:
            result.changed.append(_change(source, "changed", fields))
    result.dropped = [_change(s, "dropped") for sid, s in before.items() if sid not in after]
    return result


def _change(source: ListedSource, change: str, fields: list[str] | None = None) -> SourceChange:
    return SourceChange(
        source_id=source.source_id,
        title=source.title,
        doi=source.doi,
        change=change,
        fields=fields or [],
    )
