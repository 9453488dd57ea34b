"""The critic's work: judge a pending claim against the active claims of its entity (no DB, no broker)."""

from __future__ import annotations

import asyncio

from research_llm import ClaimForReview, JudgeOutcome


async def judge(candidate: ClaimForReview, active: list[ClaimForReview], chain, sla_s: float) -> JudgeOutcome:  # type: ignore[no-untyped-def]
    """The provider chain's verdict within the SLA; raises `TimeoutError` past `sla_s` seconds."""
    return await asyncio.wait_for(chain.judge_claim(candidate, active), timeout=sla_s)
