"""Ask the configured model to confirm one detector candidate, or answer `no_pattern`.

The question goes through `ProviderChain.ask`, the chain's public seam for schema-bound
questions: the remote models answer in turn (strict JSON schema, one corrective retry); the
offline engine answers no free-form question, so offline the deterministic detectors decide.
Every untrusted piece passes the same privacy guard as the researcher's prompts
(sanitise → delimit → de-identify, one placeholder table, restored locally).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from research_llm import ProviderChain
from research_llm.prompts import DATA_RULE, Guard, Prompt

CONFIRM_SYSTEM = (
    "You review patterns that deterministic detectors proposed for a cluster of claims about one entity in "
    "an evidence ledger. Kinds: `co_occurrence` (another entity keeps being mentioned with this one), "
    "`temporal_trend` (the claims' direction or confidence changes with the publication years of their "
    "evidence), `dose_response` (the effect grows or shrinks with the stated dose), "
    "`shared_citation_cluster` (several claims rest on the same sources). Choose the ONE proposed kind the "
    "claims really show, or `no_pattern` when none holds up. Give short reasoning. Answer with JSON only, "
    "matching the schema. " + DATA_RULE
)


class PatternAnswer(BaseModel):
    """The JSON schema the model answers with."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal[
        "co_occurrence", "temporal_trend", "dose_response", "shared_citation_cluster", "no_pattern"
    ]
    reasoning: str = Field(min_length=1, max_length=2000, json_schema_extra={"maxLength": 400})


def confirmation_prompt(
    entity: str, statements: list[str], candidates: list[dict[str, Any]]
) -> Prompt:
    guard = Guard()
    parts = ["Entity:", guard(entity), f"Claims ({len(statements)}):"]
    parts += [guard(f"{n}. {s}") for n, s in enumerate(statements, 1)]
    parts.append("Proposed patterns (kind, detector score, detector evidence):")
    parts += [guard(json.dumps(c, default=str)[:3000]) for c in candidates]
    return Prompt(system=CONFIRM_SYSTEM, user="\n".join(parts), table=guard.table)


async def confirm(
    chain: ProviderChain,
    entity: str,
    statements: list[str],
    candidates: list[dict[str, Any]],
    timeout_s: float,
) -> tuple[PatternAnswer, str]:
    """The first model's answer (reasoning restored) and `provider:model`.

    Raises `NoProviderAnswered` (listing the failures) when no model answered.
    """
    prompt = confirmation_prompt(entity, statements, candidates)
    answered = await chain.ask(prompt, PatternAnswer, "pattern_confirmation", timeout_s=timeout_s)
    answer = answered.answer.model_copy(
        update={"reasoning": prompt.restore(answered.answer.reasoning)}
    )
    return answer, f"{answered.provider}:{answered.model}"
