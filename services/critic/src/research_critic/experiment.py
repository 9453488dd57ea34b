"""The critic's work: judge a claim against the active claims of its entity, under the SLA.

No database, no broker: the provider chain answers (remote models first, the offline engine
last) and `asyncio.wait_for` enforces the critique SLA. A `TimeoutError` is the caller's to
count towards quarantine.
"""

from __future__ import annotations

import asyncio

from research_critic.prepare import Review
from research_llm import JudgeOutcome, ProviderChain


async def judge(review: Review, chain: ProviderChain, sla_s: float) -> JudgeOutcome:
    """The chain's verdict on `review.candidate`; raises `TimeoutError` past `sla_s` seconds."""
    return await asyncio.wait_for(chain.judge_claim(review.candidate, review.active), timeout=sla_s)
