"""The LLM engine of the scout: the provider chain judges hits, refines queries and states facts,
each answer bound to a JSON schema (`ProviderChain.ask`). Untrusted text (titles, abstracts,
the prompt) goes through the shared `Guard` (sanitise → delimit → de-identify).

Whatever a model says is held to the same rules as the offline engine: confidence and
relevance are clamped to [0, 1], a fact must quote a sentence of its source verbatim (the
quote's sentence index is its locator) and then passes the citation checker in `reshape`.
When no remote model answers, the offline engine's answer is used and the run says so.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from research_contracts.sourcelists import DetailLevel, FactConfidence
from research_llm import NoProviderAnswered, ProviderChain
from research_llm.prompts import DATA_RULE, Guard, Prompt
from research_llm.providers.base import SchemaAnswerer
from research_reports.text import found_verbatim
from research_scout import detail as offline_detail
from research_scout import experiment
from research_scout.detail import FactRecord, SourceDetail
from research_scout.experiment import Judgement, clamp01
from research_scout.prepare import Candidate

JUDGE_SYSTEM = (
    "You judge whether a search hit answers a research focus. Label it `strong` (directly answers it or is "
    "foundational evidence), `partial` (tangential or missing a critical detail) or `irrelevant`. Give "
    "confidence and relevance between 0 and 1 and a one-line rationale. Answer with JSON only. " + DATA_RULE
)
FACTS_SYSTEM = (
    "From the source text, write a 2-4 sentence summary and up to 8 discrete factual statements. Each fact "
    "quotes the ONE sentence of the source it rests on, copied verbatim, and is tagged high (stated and "
    "measured), medium (stated) or inferred (a reading of the text). Answer with JSON only. " + DATA_RULE
)


class JudgementAnswer(BaseModel):
    label: Literal["strong", "partial", "irrelevant"]
    confidence: float
    relevance: float
    rationale: str = Field(max_length=400)


class FactAnswer(BaseModel):
    statement: str
    quote: str
    confidence: FactConfidence


class FactsAnswer(BaseModel):
    summary: str
    facts: list[FactAnswer] = Field(default_factory=list, max_length=12)


def has_model(chain: ProviderChain | None) -> bool:
    """Whether the chain holds a remote model that answers schema-bound questions."""
    return chain is not None and any(isinstance(p, SchemaAnswerer) for p in chain.providers)


def _hit_prompt(system: str, focus: str, item: Candidate) -> Prompt:
    guard = Guard()
    user = "\n".join(["Research focus:", guard(focus), "Hit:", guard(f"Title: {item.hit.title}\n{item.text}")])
    return Prompt(system=system, user=user, table=guard.table)


async def judge(chain: ProviderChain, item: Candidate, focus: str, keywords: list[str], timeout_s: float) -> Judgement:
    try:
        answered = await chain.ask(_hit_prompt(JUDGE_SYSTEM, focus, item), JudgementAnswer, "scout_judgement", timeout_s=timeout_s)
    except NoProviderAnswered:
        return experiment.judge(item, keywords)
    answer = answered.answer
    rationale = " ".join(answer.rationale.split())[:300] or "no rationale given"
    return Judgement(answer.label, clamp01(answer.confidence), rationale, clamp01(answer.relevance), model=answered.model)


async def detail(chain: ProviderChain, item: Candidate, level: DetailLevel, focus: str, keywords: list[str], *,
                 academic: bool, timeout_s: float) -> SourceDetail:
    """The offline detail, with the model's summary and facts where it gave usable ones."""
    result = offline_detail.detail(item, level, keywords, academic=academic)
    if level is DetailLevel.citation_summary and len(item.sentences) <= 4 or not item.sentences:
        return result  # the abstract itself is the summary; nothing for a model to add
    try:
        answered = await chain.ask(_hit_prompt(FACTS_SYSTEM, focus, item), FactsAnswer, "scout_facts", timeout_s=timeout_s)
    except NoProviderAnswered:
        return result
    result.summary = answered.answer.summary.strip() or result.summary
    result.model = answered.model
    if level is DetailLevel.facts_list:
        result.facts = located_facts(item, answered.answer.facts) or result.facts
    return result


def located_facts(item: Candidate, facts: list[FactAnswer]) -> list[FactRecord]:
    """The model's facts whose quote is a sentence of the source (its index is the locator)."""
    kept: list[FactRecord] = []
    for fact in facts:
        index = next((i for i, s in enumerate(item.sentences) if found_verbatim(fact.quote, s)), None)
        if index is None:
            continue
        kept.append(FactRecord(fact.statement.strip(), fact.confidence, fact.quote.strip(), offline_detail.locator(item, index)))
    return kept[: offline_detail.MAX_FACTS]
