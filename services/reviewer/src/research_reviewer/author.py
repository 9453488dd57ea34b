"""The author (seed 000's researcher agent), offline engine: six steps, each a recorded step.

1 plan the searches (the topic and its facets) · 2 scope the corpus (overview, trends) · 3 key
papers (metadata search, top cited) · 4 evidence: retrieve broadly (hybrid search for every
planned query, plus the outside connectors the request named), keep the papers the relevance model
puts on the topic, take the sentences the judge calls findings about it, cluster them into
subtopics — the review's sub-questions, each named as a question — and take each cluster's best
findings (`judged`) · 5 a counter-evidence search per finding, then tags by the stance model · 6
the report (`compose.compose`). What it learnt is kept in a `Dossier`, so a revision re-composes
the report without the findings, references, sides or debates the peer reviewer refused — it
never invents.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from research_contracts.corpus_tools import Overview, PaperRecord, TrendPoint
from research_judgement import Judge, get_judge
from research_llm.offline.relevance import Relevance
from research_reports import Report
from research_reviewer import compose, evidence, judged
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
    papers: dict[str, PaperRecord] = field(
        default_factory=dict
    )  # every paper a tool returned: what may be cited
    findings: list[evidence.KeyFinding] = field(default_factory=list)
    exclusions: compose.Exclusions = field(default_factory=compose.Exclusions)
    searches: list[evidence.SubQuestion] = field(default_factory=list)  # step 1: what was searched
    on_topic: list[judged.OnTopic] = field(
        default_factory=list
    )  # step 4: the papers the relevance model kept
    clusters: list[judged.Cluster] = field(
        default_factory=list
    )  # step 4: the subtopics (their questions = `questions`)


def _hit_record(hit: Any) -> PaperRecord:
    return PaperRecord(
        paper_id=hit.source_id,
        title=hit.title or hit.source_id,
        authors=hit.authors,
        year=hit.year,
        venue=hit.venue,
        doi=hit.doi,
        text=hit.abstract or "",
    )


class OfflineAuthor:
    """Deterministic author: extractive findings from the best evidence sentences."""

    model = MODEL

    def __init__(
        self, relevance: Relevance, settings: ReviewerSettings, judge: Judge | None = None
    ) -> None:
        self.relevance = relevance  # the MiniLM sentence embedder: subtopic clusters, restatements
        self.settings = settings
        self.dossier: Dossier | None = None
        self.judge = (
            judge or get_judge()
        )  # the trained relevance / evidence / stance models (loaded once per process)

    async def draft(self, job: ReviewJob, tools: Toolbox) -> Report:
        dossier = Dossier(job)
        step = tools.recorder
        async with step.tool("author.plan", {"topic": job.topic}) as call:
            dossier.searches = evidence.searches(job.topic)
            call.result = [{"id": q.id, "query": q.query} for q in dossier.searches]
        async with step.tool("author.scope", {"topic": job.topic}) as call:
            await self._scope(dossier, tools)
            call.result = {
                "papers": dossier.overview.papers if dossier.overview else 0,
                "trend_query": dossier.trend_query,
                "topic_papers": sum(p.papers for p in dossier.trends),
            }
        async with step.tool("author.key_papers", {"topic": job.topic}) as call:
            await self._key_papers(dossier, tools)
            call.result = [p.paper_id for p in dossier.key_papers]
        async with step.tool("author.evidence", {"searches": len(dossier.searches)}) as call:
            pool = await self._evidence(dossier, tools)
            call.result = {
                "papers": len(dossier.papers),
                "on_topic": len(dossier.on_topic),
                "evidence_sentences": len(pool),
                "subtopics": [
                    {
                        "id": q.id,
                        "question": q.text,
                        "findings": sum(f.question.id == q.id for f in dossier.findings),
                    }
                    for q in dossier.questions
                ],
            }
        async with step.tool(
            "author.counter_evidence", {"findings": len(dossier.findings)}
        ) as call:
            await self._counter(dossier, tools, pool)
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
        async with tools.recorder.tool(
            "author.report", {"findings": len(dossier.findings)}
        ) as call:
            report = compose.compose(dossier, model=self.model)
            call.result = {
                "sections": [s.title for s in report.sections],
                "references": len(report.references),
                "findings": len(report.findings()),
            }
        return report

    async def _scope(self, dossier: Dossier, tools: Toolbox) -> None:
        job = dossier.job
        dossier.overview = await tools.corpus_overview()
        terms = evidence.topic_terms(job.topic)
        for query in (" ".join(terms[:2]), " or ".join(terms[:3])):
            if not query.strip():
                continue
            dossier.trend_query = query
            dossier.trends = await tools.publication_trends(
                query, year_from=job.filters.year_from, year_to=job.filters.year_to
            )
            if sum(p.papers for p in dossier.trends):
                break

    async def _key_papers(self, dossier: Dossier, tools: Toolbox) -> None:
        """Candidates from metadata search and citation ranking; step 4 keeps the ones on the topic."""
        job = dossier.job
        cited = await tools.top_cited(dossier.trend_query or None, k=5)
        related = await tools.search_metadata(
            topic=job.topic,
            limit=8,
            year_from=job.filters.year_from,
            year_to=job.filters.year_to,
            venue=job.filters.venue,
        )
        seen: dict[str, PaperRecord] = {}
        for paper in [*related, *[p for p in cited if p.citation_count]]:
            seen.setdefault(paper.paper_id, paper)
        dossier.key_papers = list(seen.values())
        for paper in dossier.key_papers:
            dossier.papers.setdefault(paper.paper_id, paper)

    async def _evidence(self, dossier: Dossier, tools: Toolbox) -> list[evidence.Sentence]:
        """Retrieve broadly, keep what the relevance model puts on the topic, take its findings, cluster them."""
        job, settings = dossier.job, self.settings
        filters = job.filters.model_dump(exclude_none=True)
        papers: dict[str, PaperRecord] = {}
        for search in dossier.searches:
            for hit in await tools.search_papers(
                search.query, k=settings.passages_per_query, **filters
            ):
                papers.setdefault(
                    hit.paper_id,
                    PaperRecord(**hit.model_dump(include=set(PaperRecord.model_fields))),
                )
        if job.outside_sources:
            for search in dossier.searches[:2]:
                for source_hit in await tools.outside(
                    search.query, job.outside_sources, settings.passages_per_query
                ):
                    papers.setdefault(source_hit.source_id, _hit_record(source_hit))
        for paper in papers.values():
            dossier.papers[paper.paper_id] = paper  # with its text: the citation checker needs it
        cut = settings.cut
        floor = (
            cut.floor if cut.mode == "chain" else 0.0
        )  # abstract: every paper is ranked, none cut
        candidates = await asyncio.to_thread(
            judged.on_topic, self.judge, job.topic, list(papers.values()), floor
        )
        kept = {o.paper.paper_id for o in candidates}
        # Metadata search and citation ranking return no text: their papers the searches did not find
        # are fetched whole and judged like the rest, and those on the topic are read for findings too
        # (the demo review listed an on-topic key paper whose findings it never read).
        fetched = await tools.get_papers(
            [p.paper_id for p in dossier.key_papers if p.paper_id not in kept]
        )
        for paper in fetched:
            dossier.papers[paper.paper_id] = paper
        keys = await asyncio.to_thread(judged.on_topic, self.judge, job.topic, fetched, floor)
        candidates = sorted([*candidates, *keys], key=lambda o: (-o.probability, o.paper.paper_id))
        used = candidates[: settings.papers_read]
        if (
            cut.mode != "chain"
        ):  # the relevance model ranks (and may admit); the abstract model decides and picks the findings
            dossier.on_topic, pool = await asyncio.to_thread(
                judged.abstract_evidence,
                self.judge,
                job.topic,
                used,
                relevance_admits=cut.on_topic if cut.mode == "abstract" else None,
            )
        else:
            pool = await asyncio.to_thread(
                judged.evidence_sentences, self.judge, job.topic, used, cut
            )
            # On the topic: over the relevance cut, or under it with a finding the cut admits (it gave sentences).
            admitted = {s.paper.paper_id for s in pool}
            dossier.on_topic = [
                o
                for o in candidates
                if o.probability >= cut.on_topic or o.paper.paper_id in admitted
            ]
        # Key papers are the on-topic ones: metadata and citation candidates the model keeps, then the best retrieved.
        ranked = {o.paper.paper_id: o for o in dossier.on_topic}
        dossier.key_papers = [
            ranked[p.paper_id].paper for p in dossier.key_papers if p.paper_id in ranked
        ]
        dossier.key_papers += [
            o.paper for o in dossier.on_topic if o.paper not in dossier.key_papers
        ]
        used = [o for o in used if o.paper.paper_id in ranked]
        background = [
            text for o in used for text in (o.paper.title, *evidence.sentences_of(o.paper))
        ]
        dossier.clusters = await asyncio.to_thread(
            judged.clusters,
            self.relevance,
            job.topic,
            pool,
            background,
            similarity=settings.subtopic_similarity,
            most=settings.max_subtopics,
        )
        dossier.questions = [c.question for c in dossier.clusters if c.question is not None]
        dossier.findings = await asyncio.to_thread(
            judged.findings, self.relevance, dossier.clusters, settings.findings_per_question
        )
        return pool

    async def _counter(
        self, dossier: Dossier, tools: Toolbox, pool: list[evidence.Sentence]
    ) -> None:
        """A search for the opposite of each finding; the new papers the relevance model keeps add their
        evidence to the pool the stance model reads every finding against."""
        job, settings = dossier.job, self.settings
        filters = job.filters.model_dump(exclude_none=True)
        extra: dict[str, PaperRecord] = {}
        for finding in dossier.findings:
            for hit in await tools.search_papers(
                evidence.counter_query(finding.statement), k=settings.counter_papers, **filters
            ):
                if hit.paper_id not in dossier.papers:
                    extra.setdefault(
                        hit.paper_id,
                        PaperRecord(**hit.model_dump(include=set(PaperRecord.model_fields))),
                    )
        for paper in extra.values():
            dossier.papers[paper.paper_id] = paper
        kept = await asyncio.to_thread(
            judged.on_topic, self.judge, job.topic, list(extra.values()), settings.relevance_floor
        )
        dossier.on_topic += kept
        pool = pool + await asyncio.to_thread(
            judged.evidence_sentences, self.judge, job.topic, kept
        )
        for finding in dossier.findings:
            await asyncio.to_thread(
                judged.tag, self.judge, finding, pool, floor=settings.relevance_floor
            )
        text_of = {q.id: q.text for q in dossier.questions}
        dossier.findings, dossier.questions = judged.fold_corroborations(
            dossier.findings, dossier.questions
        )
        by_text = {q.text: q for q in dossier.questions}
        for (
            cluster
        ) in dossier.clusters:  # the sub-questions as numbered now; a folded one's cluster has none
            cluster.question = (
                by_text.get(text_of.get(cluster.question.id, "")) if cluster.question else None
            )
