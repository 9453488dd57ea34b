"""Experiment: steps 2–4 of a verification — search, judge, qualify — and the verdict.

Step 2: each statement's queries (≥ 3, worded differently by `parse_claim`, contrary wording
included so evidence against can be found); the papers found are reranked by the trained
relevance model (`research_verification.on_topic`), most on-topic first. Step 3: the engine
labels the papers' sentences against the statement — SUPPORTS / CONTRADICTS / QUALIFIES /
UNRELATED with the sentence each label rests on:
- offline (`OfflineEngine`, the default, no network): papers the relevance model puts off the
  statement's topic are left out (a paper under the cut but above its floor counts only when one
  of its sentences squarely states a finding on the statement: `admits`), and so are those that
  never name the statement's subject (the intervention or exposure it is about:
  `names_subject`) — a study of something else on the same outcome; in the others, the evidence
  sentences the stance model finds (SciFact's abstract-level rule with the shipped thresholds,
  `judge_paper`) are labelled by it, and a supporting one that states a condition the claim does
  not name (a population, a dose, a setting) QUALIFIES it;
- the LLM (`llm.LlmEngine`) labels the reranked passages itself.
Step 4: for a statement with qualifying evidence, targeted searches for the conditions,
populations, methods and scope under which it holds. The verdict comes from the one rule both
engines share, `research_verification.decide_verdict`.

A re-verification is compared with the version before it (`change`): a moved verdict or
confidence, or a source the earlier version cited that is retracted today, is a `VerdictChange`
of kind `retracted_source` (takes precedence) or `verdict_changed`. A retracted source is never
evidence (`Evidence.best`), whether an outside connector says so or the ledger knows it.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from research_runs import RunRecorder
from research_verification import (
    Assessment,
    LabelledPassage,
    PassageStance,
    Statement,
    admits,
    decide_verdict,
    judge_abstracts,
    judge_paper,
    label_passages,
    names_subject,
    on_topic,
    thresholds,
)
from research_verification.evidence import (
    Closest,
    Judgement,
    abstract_model_available,
    default_judge,
)
from research_verification.sections import reported
from research_verifier.prepare import VerificationJob
from research_verifier.settings import VerifierSettings
from research_verifier.tools import Passage, Searcher

if TYPE_CHECKING:
    from research_judgement.abstract import AbstractJudge

# Finding kinds of a watched claim's re-verification (recorded in the replicator's name).
RETRACTED_SOURCE = "retracted_source"
VERDICT_CHANGED = "verdict_changed"
FINDING_KINDS = (RETRACTED_SOURCE, VERDICT_CHANGED)
QUALIFIER_ASPECTS = ("conditions population subgroup", "methods dose duration scope")
_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


class Engine(Protocol):
    name: str

    async def label(
        self, statement: Statement, index: int, passages: list[Passage]
    ) -> list[LabelledPassage]:
        """Labelled sentences of `passages` against `statement` (source id = paper id)."""


def sentences_of(text: str, limit: int = 12) -> list[str]:
    """The first `limit` sentences a paper may report a finding in: a structured abstract's
    background, aims and methods never (`sections.reported`) — they also pushed HF-ACTION's
    conclusion past the limit."""
    return reported(
        [s.strip() for s in _SENTENCES.split(" ".join(text.split())) if len(s.strip()) > 20]
    )[:limit]


def abstract_sentences(text: str) -> list[str]:
    """Every sentence of a paper's text, as the abstract model reads an abstract (title apart)."""
    return [s.strip() for s in _SENTENCES.split(" ".join(text.split())) if s.strip()]


class OfflineEngine:
    """The trained judgement (`research_judgement` on the bundled MiniLM, no network).

    `evidence_model` "abstract" (the default when it ships): the abstract-level model reads each
    retrieved paper whole — title and every sentence — against the statement and labels it, with
    the sentences it rests on; one model, no chain of gates. "sentence": the relevance cut,
    subject-naming rule and sentence-by-sentence stance of `judge_statement_by_sentence`."""

    name = "offline"

    def __init__(
        self,
        judge: Judgement | None = None,
        papers: int = 8,
        evidence_model: str = "abstract",
        abstract_model: AbstractJudge | None = None,
    ) -> None:
        self.judge = judge or default_judge()
        self.papers = papers  # the papers judged per statement (most on-topic first)
        self.abstract_model = abstract_model
        self.evidence_model = (
            "abstract"
            if evidence_model == "abstract"
            and (abstract_model is not None or abstract_model_available())
            else "sentence"
        )

    @property
    def bar(self) -> float | None:
        """P(evidence) the most evidential paper needs to count (the abstract model's `best_evidence`)."""
        if self.evidence_model != "abstract":
            return None
        if self.abstract_model is None:
            from research_judgement.abstract import get_abstract_judge

            self.abstract_model = get_abstract_judge()
        limits = self.abstract_model.thresholds
        return float(limits.get("best_evidence", limits.get("evidence", 0.5)))

    def judge_statement(
        self, statement: Statement, index: int, passages: list[Passage]
    ) -> list[LabelledPassage]:
        if self.evidence_model == "abstract":
            return self.judge_statement_by_abstract(statement, index, passages)
        return self.judge_statement_by_sentence(statement, index, passages)

    def judge_statement_by_abstract(
        self, statement: Statement, index: int, passages: list[Passage]
    ) -> list[LabelledPassage]:
        papers = passages[: self.papers]
        closest: list[Closest] = []
        judged = judge_abstracts(
            statement.text,
            [(p.title, abstract_sentences(p.text)) for p in papers],
            self.abstract_model,
            self.judge,
            closest,
        )
        out: list[LabelledPassage] = []
        for passage, paper in zip(papers, judged, strict=True):
            if paper.label != "NEI":
                out += label_passages(
                    list(paper.evidence), passage.paper_id, index, statement.text, paper.label
                )
        for near in closest:  # leaned one way, missed its bar: shown, never counted
            out.append(
                LabelledPassage(
                    papers[near.index].paper_id,
                    PassageStance.UNRELATED,
                    round(near.probability, 4),
                    index,
                    near.quote.sentence if near.quote else "",
                    leaning=near.label,
                    bar=near.bar,
                    reason=near.reason,
                )
            )
        if (
            not out and papers
        ):  # nothing found: the closest paper, so the report can say why it fell short
            closest_paper, paper = max(
                zip(papers, judged, strict=True), key=lambda pj: 1.0 - pj[1].strength
            )
            out.append(
                LabelledPassage(
                    closest_paper.paper_id,
                    PassageStance.UNRELATED,
                    round(1.0 - paper.strength, 4),
                    index,
                )
            )
        return out

    def judge_statement_by_sentence(
        self, statement: Statement, index: int, passages: list[Passage]
    ) -> list[LabelledPassage]:
        limits = thresholds(self.judge)
        relevance = on_topic(statement.text, [(p.title, p.text) for p in passages], self.judge)
        ranked = sorted(zip(passages, relevance, strict=True), key=lambda pr: -float(pr[1]))
        out: list[LabelledPassage] = []
        for passage, probability in ranked[: self.papers]:
            if probability < limits.floor:
                break  # off the statement's topic: whatever its sentences say, it is not evidence on it
            if not names_subject(statement.subject, f"{passage.title} {passage.text}"):
                continue  # a study of something else, however close its outcome
            paper = judge_paper(
                statement.text, passage.title, sentences_of(passage.text), self.judge
            )
            if admits(
                float(probability), paper, limits
            ):  # under the cut, only a finding squarely stated
                out += label_passages(
                    list(paper.evidence), passage.paper_id, index, statement.text, paper.label
                )
        return out

    async def label(
        self, statement: Statement, index: int, passages: list[Passage]
    ) -> list[LabelledPassage]:
        return await asyncio.to_thread(self.judge_statement, statement, index, passages)


def judge_version(engine: object) -> str:
    """The version of the judge that decides `engine`'s verdicts: the abstract model's weights and
    rule set (`AbstractJudge.version`), or the engine's name when something else decides."""
    if isinstance(engine, OfflineEngine) and engine.evidence_model == "abstract":
        if engine.abstract_model is None:
            from research_judgement.abstract import get_abstract_judge

            engine.abstract_model = get_abstract_judge()
        return engine.abstract_model.version
    return str(getattr(engine, "name", "unknown"))


def rerank(
    statement: Statement, passages: list[Passage], judge: Judgement | None = None
) -> list[Passage]:
    """`passages` most on-topic first by the relevance model (the scores are cached: the offline
    engine's own relevance call costs nothing after this)."""
    if len(passages) < 2:
        return passages
    relevance = on_topic(statement.text, [(p.title, p.text) for p in passages], judge)
    order = sorted(range(len(passages)), key=lambda i: -float(relevance[i]))
    return [passages[i] for i in order]


@dataclass
class Evidence:
    """What the searches found and how each passage was judged."""

    passages: dict[str, Passage] = field(default_factory=dict)  # paper id → first passage seen
    labelled: list[LabelledPassage] = field(default_factory=list)
    searches: int = 0
    qualifier_searches: int = 0
    retracted: set[str] = field(
        default_factory=set
    )  # sources reported (connector) or known (ledger) retracted

    def closest(self) -> tuple[Passage, LabelledPassage] | None:
        """When nothing was found: the paper that came nearest to being evidence, and how near."""
        near = [
            p
            for p in self.labelled
            if p.label is PassageStance.UNRELATED and p.source_id in self.passages
        ]
        if not near:
            return None
        best = max(near, key=lambda p: (bool(p.leaning), p.strength))
        return self.passages[best.source_id], best

    def not_counted(self) -> list[LabelledPassage]:
        """The closest evidence that did not count, one per (source, statement), strongest first:
        papers that leaned one way and missed their bar, except those that count elsewhere."""
        counted = {(p.source_id, p.statement) for p in self.best()}
        keep: dict[tuple[str, int], LabelledPassage] = {}
        for p in self.labelled:
            key = (p.source_id, p.statement)
            if (
                p.label is not PassageStance.UNRELATED
                or not p.leaning
                or not p.text
                or key in counted
                or p.source_id in self.retracted
            ):
                continue
            if key not in keep or p.strength > keep[key].strength:
                keep[key] = p
        return sorted(keep.values(), key=lambda p: (p.statement, -p.strength))

    def best(self) -> list[LabelledPassage]:
        """One labelled sentence per (source, statement): the strongest with a stance."""
        keep: dict[tuple[str, int], LabelledPassage] = {}
        for p in self.labelled:
            if p.label is PassageStance.UNRELATED or p.source_id in self.retracted:
                continue  # a retracted paper is no evidence
            key = (p.source_id, p.statement)
            if key not in keep or p.strength > keep[key].strength:
                keep[key] = p
        return sorted(keep.values(), key=lambda p: (p.statement, -p.strength))


async def _search_all(searcher: Searcher, queries: list[str], evidence: Evidence) -> list[Passage]:
    found: dict[str, Passage] = {}
    for query in queries:
        for passage in await searcher.search(query):
            found.setdefault(passage.paper_id, passage)
            evidence.passages.setdefault(passage.paper_id, passage)
            if passage.retracted:
                evidence.retracted.add(passage.paper_id)
    return list(found.values())


async def gather(
    job: VerificationJob,
    engine: Engine,
    searcher: Searcher,
    recorder: RunRecorder,
    settings: VerifierSettings,
    judge: Judgement | None = None,
) -> tuple[Evidence, Assessment]:
    evidence = Evidence()
    for index, statement in enumerate(job.statements):
        queries = list(statement.queries[: max(3, settings.queries_per_statement)])
        await recorder.reasoning(
            f"Statement {index + 1}: {statement.text} — {len(queries)} searches"
        )
        passages = await asyncio.to_thread(
            rerank, statement, await _search_all(searcher, queries, evidence), judge
        )
        evidence.searches += len(queries)
        labelled = await engine.label(statement, index, passages)
        evidence.labelled += labelled
        if settings.qualifier_searches and any(
            p.label is PassageStance.QUALIFIES for p in labelled
        ):
            targeted = [
                f"{statement.subject} {aspect} {' '.join(statement.search_terms[:4])}".strip()
                for aspect in QUALIFIER_ASPECTS[: settings.qualifier_searches]
            ]
            await recorder.reasoning(
                f"Statement {index + 1} is qualified: {len(targeted)} targeted searches"
            )
            seen = {p.source_id for p in labelled}
            extra = [
                p for p in await _search_all(searcher, targeted, evidence) if p.paper_id not in seen
            ]
            extra = await asyncio.to_thread(rerank, statement, extra, judge)
            evidence.searches += len(targeted)
            evidence.qualifier_searches += len(targeted)
            evidence.labelled += await engine.label(statement, index, extra)
    assessment = decide_verdict(evidence.best(), len(job.statements))
    return evidence, assessment


@dataclass(frozen=True)
class Previous:
    """The verification's latest stored version, as a re-verification compares with it."""

    verdict: str
    confidence: str
    sources: frozenset[str]  # the paper ids it cited
    judge: str = ""  # the judge's version that gave it ("" before verdicts recorded it)


@dataclass(frozen=True)
class VerdictChange:
    """What moved between a verification's previous version and this run."""

    previous_verdict: str
    previous_confidence: str
    verdict: str
    confidence: str
    retracted_sources: list[str]
    previous_judge: str = ""
    judge: str = ""

    @property
    def kind(self) -> str:
        return RETRACTED_SOURCE if self.retracted_sources else VERDICT_CHANGED

    @property
    def cause(self) -> str:
        """`judge` when another judge gave the new verdict (and no cited source was retracted),
        `evidence` when the same judge read changed evidence."""
        if self.retracted_sources:
            return "evidence"
        return "judge" if self.previous_judge and self.previous_judge != self.judge else "evidence"

    def payload(self) -> dict[str, object]:
        return {
            "previous_verdict": self.previous_verdict,
            "previous_confidence": self.previous_confidence,
            "verdict": self.verdict,
            "confidence": self.confidence,
            "retracted_sources": self.retracted_sources,
            "cause": self.cause,
            "previous_judge": self.previous_judge,
            "judge": self.judge,
        }


def change(
    previous: Previous | None, assessment: Assessment, retracted: set[str], judge: str = ""
) -> VerdictChange | None:
    """The change against `previous` (None on a first run, or when nothing moved). `retracted` are the
    sources known retracted today; only those the previous version cited count as a change. `judge`
    is this run's judge version: a move under another judge is a judge change (`VerdictChange.cause`)."""
    if previous is None:
        return None
    lost = sorted(p for p in previous.sources if p and p in retracted)
    verdict, confidence = str(assessment.verdict), str(assessment.confidence)
    if (previous.verdict, previous.confidence) == (verdict, confidence) and not lost:
        return None
    return VerdictChange(
        previous.verdict, previous.confidence, verdict, confidence, lost, previous.judge, judge
    )
