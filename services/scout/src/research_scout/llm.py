"""The LLM engine of the scout: the provider chain judges hits, refines queries and states facts,
each answer bound to a JSON schema (`ProviderChain.ask`). Untrusted text (titles, abstracts,
the prompt, the judge's rationales) goes through the shared `Guard` (sanitise → delimit →
de-identify); the answer's placeholders are mapped back locally (`Prompt.restore`) before a
rationale, summary or fact is kept — except in a refined query, which leaves the process for
the outside search APIs and so never carries an identifier: placeholders are dropped from it.

Whatever a model says is held to the same rules as the offline engine: confidence and
relevance are clamped to [0, 1], a fact must quote a sentence of its source verbatim (the
quote's sentence index is its locator) and then passes the citation checker in `reshape`.
When no remote model answers, the offline engine's answer is used and the run says so.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field

from research_contracts.sourcelists import DetailLevel, FactConfidence
from research_llm import NoProviderAnswered, ProviderChain
from research_llm.prompts import DATA_RULE, Guard, Prompt
from research_reports.text import found_verbatim
from research_scout import detail as offline_detail
from research_scout import experiment
from research_scout.detail import FactRecord, SourceDetail
from research_scout.experiment import Judgement, clamp01
from research_scout.prepare import Candidate

MAX_QUERY_CHARS = 300
_PLACEHOLDER = re.compile(r"\[[A-Z]+_\d+\]")

JUDGE_SYSTEM = (
    "You judge whether a search hit answers a research focus. Label it `strong` (directly answers it or is "
    "foundational evidence), `partial` (tangential or missing a critical detail) or `irrelevant`. Give "
    "confidence and relevance between 0 and 1 and a one-line rationale. Answer with JSON only. "
    + DATA_RULE
)
FACTS_SYSTEM = (
    "From the source text, write a 2-4 sentence summary and up to 8 discrete factual statements. Each fact "
    "quotes the ONE sentence of the source it rests on, copied verbatim, and is tagged high (stated and "
    "measured), medium (stated) or inferred (a reading of the text). Answer with JSON only. "
    + DATA_RULE
)
REFINE_SYSTEM = (
    "You write search queries for scholarly and web search APIs. Given a research focus, the query that was "
    "just run, the queries already tried and why the hits it found were not strong, write ONE better query: "
    "a few keywords, no boolean syntax, no identifiers. Answer with an empty query when no better one exists. "
    "Answer with JSON only. " + DATA_RULE
)


# Every array and string bounded (research_llm.schema explains why; tests/llm/test_schemas.py checks).
class JudgementAnswer(BaseModel):
    label: Literal["strong", "partial", "irrelevant"]
    confidence: float = Field(json_schema_extra={"minimum": 0, "maximum": 1})  # clamped when read
    relevance: float = Field(json_schema_extra={"minimum": 0, "maximum": 1})
    rationale: str = Field(max_length=400)


class RefinedQueryAnswer(BaseModel):
    query: str = Field(max_length=MAX_QUERY_CHARS)
    rationale: str = Field(default="", max_length=400)


class FactAnswer(BaseModel):
    statement: str = Field(max_length=2000, json_schema_extra={"maxLength": 250})
    quote: str = Field(
        max_length=2000, json_schema_extra={"maxLength": 250}
    )  # a stopped-short quote is still verbatim
    confidence: FactConfidence


class FactsAnswer(BaseModel):
    summary: str = Field(max_length=4000, json_schema_extra={"maxLength": 600})
    facts: list[FactAnswer] = Field(
        default_factory=list, max_length=12, json_schema_extra={"maxItems": 5}
    )


def _hit_prompt(system: str, focus: str, item: Candidate) -> Prompt:
    guard = Guard()
    user = "\n".join(
        ["Research focus:", guard(focus), "Hit:", guard(f"Title: {item.hit.title}\n{item.text}")]
    )
    return Prompt(system=system, user=user, table=guard.table)


async def judge(
    chain: ProviderChain,
    item: Candidate,
    focus: str,
    keywords: list[str],
    timeout_s: float,
    *,
    fallback: bool = True,
) -> Judgement | None:
    """The model's judgement of a hit; when no model answers, the offline (chain) judgement — or None
    with `fallback=False`, for a caller that judges the unanswered hits offline itself."""
    prompt = _hit_prompt(JUDGE_SYSTEM, focus, item)
    try:
        answered = await chain.ask(prompt, JudgementAnswer, "scout_judgement", timeout_s=timeout_s)
    except NoProviderAnswered:
        return (
            experiment.judge(item, keywords, focus) if fallback else None
        )  # the offline engine's, on the same prompt
    answer = answered.answer
    rationale = " ".join(prompt.restore(answer.rationale).split())[:300] or "no rationale given"
    return Judgement(
        answer.label,
        clamp01(answer.confidence),
        rationale,
        clamp01(answer.relevance),
        model=answered.model,
    )


async def refine(
    chain: ProviderChain,
    query: str,
    focus: str,
    keywords: list[str],
    tried: list[str],
    judged: list[tuple[Candidate, Judgement]],
    timeout_s: float,
) -> str:
    """The next query from the non-strong hits' rationales (seed 004's feedback memo), or the
    offline refinement when no model answers. "" (the model found no better query) stops the loop."""
    weak = [(c, j) for c, j in judged if j.label != "strong"]
    guard = Guard()
    parts = ["Research focus:", guard(focus), "Query just run:", guard(query)]
    if tried:
        parts += ["Queries already tried:", guard("\n".join(tried))]
    parts.append(f"Why the {len(weak)} non-strong hit(s) of {len(judged)} fell short:")
    parts += [guard(f"[{j.label}] {c.hit.title}: {j.rationale}") for c, j in weak[:15]] or [
        "(no hits)"
    ]
    prompt = Prompt(system=REFINE_SYSTEM, user="\n".join(parts), table=guard.table)
    try:
        answered = await chain.ask(
            prompt, RefinedQueryAnswer, "scout_refined_query", timeout_s=timeout_s
        )
    except NoProviderAnswered:
        return experiment.refine(query, keywords, judged)
    return " ".join(_PLACEHOLDER.sub(" ", answered.answer.query).split())[:MAX_QUERY_CHARS]


async def detail(
    chain: ProviderChain,
    item: Candidate,
    level: DetailLevel,
    focus: str,
    keywords: list[str],
    *,
    academic: bool,
    timeout_s: float,
    judged: Judgement | None = None,
) -> SourceDetail:
    """The offline detail, with the model's summary and facts where it gave usable ones."""
    result = offline_detail.detail(
        item, level, keywords, academic=academic, prompt=focus, judged=judged
    )
    if (level is DetailLevel.citation_summary and len(item.sentences) <= 4) or not item.sentences:
        return result  # the abstract itself is the summary; nothing for a model to add
    prompt = _hit_prompt(FACTS_SYSTEM, focus, item)
    try:
        answered = await chain.ask(prompt, FactsAnswer, "scout_facts", timeout_s=timeout_s)
    except NoProviderAnswered:
        return result
    result.summary = " ".join(prompt.restore(answered.answer.summary).split()) or result.summary
    result.model = answered.model
    if level is DetailLevel.facts_list:
        result.facts = located_facts(item, answered.answer.facts, prompt) or result.facts
    return result


def located_facts(item: Candidate, facts: list[FactAnswer], prompt: Prompt) -> list[FactRecord]:
    """The model's facts (placeholders restored) whose quote is a sentence of the source (its
    index is the locator); a fact with an empty statement or quote is left out."""
    kept: list[FactRecord] = []
    for fact in facts:
        statement, quote = (
            prompt.restore(fact.statement).strip(),
            prompt.restore(fact.quote).strip(),
        )
        if not statement or not quote:
            continue
        index = next((i for i, s in enumerate(item.sentences) if found_verbatim(quote, s)), None)
        if index is None:
            continue
        kept.append(
            FactRecord(statement, fact.confidence, quote, offline_detail.locator(item, index))
        )
    return kept[: offline_detail.MAX_FACTS]
