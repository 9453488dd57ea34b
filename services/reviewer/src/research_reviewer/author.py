"""The author (seed 000's researcher agent), offline engine: six steps, each a recorded step.

1 plan 3–5 sub-questions · 2 scope the corpus (overview, trends) · 3 key papers (top cited,
metadata search) · 4 evidence passages per sub-question (two queries each, plus the outside
connectors the request named) · 5 counter-evidence search per finding, then tags · 6 the report
(`compose.compose`). What it learnt is kept in a `Dossier`, so a revision re-composes the report
without the findings, references or debates the peer reviewer refused — it never invents.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from research_contracts.corpus_tools import Overview, PaperRecord, TrendPoint
from research_llm.offline.relevance import Relevance
from research_reports import Report
from research_reviewer import compose, evidence
from research_reviewer.critique import PeerReview
from research_reviewer.prepare import ReviewJob
from research_reviewer.settings import ReviewerSettings
from research_reviewer.tools import Toolbox

AGENT_ID = "research_literature_review_agent"
MODEL = "offline-reviewer-v1"


@dataclass
class Dossier:
    """Everything steps 1–5 found; step 6 writes the report from it."""

    job: ReviewJob
    questions: list[evidence.SubQuestion] = field(default_factory=list)
    overview: Overview | None = None
    trends: list[TrendPoint] = field(default_factory=list)
    trend_query: str = ""
    key_papers: list[PaperRecord] = field(default_factory=list)
    papers: dict[str, PaperRecord] = field(default_factory=dict)  # every paper a tool returned: what may be cited
    findings: list[evidence.KeyFinding] = field(default_factory=list)
    unanswered: list[evidence.SubQuestion] = field(default_factory=list)
    exclusions: compose.Exclusions = field(default_factory=compose.Exclusions)


def _hit_record(hit: Any) -> PaperRecord:
    return PaperRecord(paper_id=hit.source_id, title=hit.title or hit.source_id, authors=hit.authors, year=hit.year,
                       venue=hit.venue, doi=hit.doi, text=hit.abstract or "")


class OfflineAuthor:
    """Deterministic author: extractive findings from the best evidence sentences."""

    model = MODEL

    def __init__(self, relevance: Relevance, settings: ReviewerSettings) -> None:
        self.relevance = relevance
        self.settings = settings
        self.dossier: Dossier | None = None

    async def draft(self, job: ReviewJob, tools: Toolbox) -> Report:
        dossier = Dossier(job)
        step = tools.recorder
        async with step.tool("author.plan", {"topic": job.topic}) as call:
            dossier.questions = evidence.plan(job.topic)
            call.result = [{"id": q.id, "question": q.text, "query": q.query} for q in dossier.questions]
        async with step.tool("author.scope", {"topic": job.topic}) as call:
            await self._scope(dossier, tools)
            call.result = {"papers": dossier.overview.papers if dossier.overview else 0, "trend_query": dossier.trend_query,
                           "topic_papers": sum(p.papers for p in dossier.trends)}
        async with step.tool("author.key_papers", {"topic": job.topic}) as call:
            await self._key_papers(dossier, tools)
            call.result = [p.paper_id for p in dossier.key_papers]
        async with step.tool("author.evidence", {"questions": len(dossier.questions)}) as call:
            pools = await self._evidence(dossier, tools)
            call.result = {q.id: len([f for f in dossier.findings if f.question.id == q.id]) for q in dossier.questions}
        async with step.tool("author.counter_evidence", {"findings": len(dossier.findings)}) as call:
            await self._counter(dossier, tools, pools)
            call.result = {f.key: f.tag.value for f in dossier.findings}
        self.dossier = dossier
        return await self._write(dossier, tools)

    def known_papers(self) -> dict[str, PaperRecord]:
        """Every paper the tools returned during this review: nothing else may be cited."""
        return dict(self.dossier.papers) if self.dossier else {}

    async def revise(self, report: Report, review: PeerReview, tools: Toolbox) -> Report:
        """Re-write the report without what the review refused (see `compose.Exclusions.learn`)."""
        assert self.dossier is not None, "revise follows draft"
        async with tools.recorder.tool("author.revise", {"issues": len(review.issues)}) as call:
            learnt = self.dossier.exclusions.learn(review)
            call.result = learnt
        return await self._write(self.dossier, tools)

    async def _write(self, dossier: Dossier, tools: Toolbox) -> Report:
        async with tools.recorder.tool("author.report", {"findings": len(dossier.findings)}) as call:
            report = compose.compose(dossier, model=self.model)
            call.result = {"sections": [s.title for s in report.sections], "references": len(report.references),
                           "findings": len(report.findings())}
        return report

    async def _scope(self, dossier: Dossier, tools: Toolbox) -> None:
        job = dossier.job
        dossier.overview = await tools.corpus_overview()
        terms = evidence.topic_terms(job.topic)
        for query in (" ".join(terms[:2]), " or ".join(terms[:3])):
            if not query.strip():
                continue
            dossier.trend_query = query
            dossier.trends = await tools.publication_trends(query, year_from=job.filters.year_from, year_to=job.filters.year_to)
            if sum(p.papers for p in dossier.trends):
                break

    async def _key_papers(self, dossier: Dossier, tools: Toolbox) -> None:
        job = dossier.job
        cited = await tools.top_cited(dossier.trend_query or None, k=5)
        related = await tools.search_metadata(topic=job.topic, limit=8, year_from=job.filters.year_from,
                                              year_to=job.filters.year_to, venue=job.filters.venue)
        seen: dict[str, PaperRecord] = {}
        for paper in [*related, *[p for p in cited if p.citation_count]]:
            seen.setdefault(paper.paper_id, paper)
        dossier.key_papers = list(seen.values())
        for paper in dossier.key_papers:
            dossier.papers.setdefault(paper.paper_id, paper)

    async def _evidence(self, dossier: Dossier, tools: Toolbox) -> dict[str, list[evidence.Sentence]]:
        job = dossier.job
        filters = job.filters.model_dump(exclude_none=True)
        pools: dict[str, list[evidence.Sentence]] = {}
        for question in dossier.questions:
            papers: dict[str, PaperRecord] = {}
            for query in dict.fromkeys([question.query, " ".join(evidence.topic_terms(question.text))]):
                for hit in await tools.search_papers(query, k=self.settings.passages_per_query, **filters):
                    papers.setdefault(hit.paper_id, PaperRecord(**hit.model_dump(include=set(PaperRecord.model_fields))))
            if job.outside_sources:
                for hit in await tools.outside(question.query, job.outside_sources, self.settings.passages_per_query):
                    papers.setdefault(hit.source_id, _hit_record(hit))
            for paper in papers.values():
                dossier.papers[paper.paper_id] = paper  # with its text: the citation checker needs it
            ranked = await asyncio.to_thread(evidence.score_sentences, self.relevance, question.text, list(papers.values()))
            pools[question.id] = ranked
            chosen = await asyncio.to_thread(
                evidence.pick_findings, self.relevance, question, ranked, dossier.findings, self.settings.findings_per_question
            )
            dossier.findings.extend(chosen)
            if not chosen:
                dossier.unanswered.append(question)
        return pools

    async def _counter(self, dossier: Dossier, tools: Toolbox, pools: dict[str, list[evidence.Sentence]]) -> None:
        filters = dossier.job.filters.model_dump(exclude_none=True)
        for finding in dossier.findings:
            hits = await tools.search_papers(evidence.counter_query(finding.statement), k=6, **filters)
            papers = [PaperRecord(**h.model_dump(include=set(PaperRecord.model_fields))) for h in hits]
            for paper in papers:
                dossier.papers[paper.paper_id] = paper
            ranked = await asyncio.to_thread(evidence.score_sentences, self.relevance, finding.lead.text, papers)
            pool = ranked + pools.get(finding.question.id, [])
            finding.opposing = await asyncio.to_thread(evidence.opposing, self.relevance, finding, pool)
