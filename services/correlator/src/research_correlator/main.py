"""Correlator service (periodic): finds one pattern, or none, in each entity cluster of active claims.

Each run: entity clusters with ≥ 2 active claims, in name order from where the last run
stopped → prepare (cluster with source years) → experiment (deterministic detectors, then the
configured LLM confirms one candidate or answers no_pattern; offline the detectors decide) →
reshape → finding + audit `research.correlator.finding`, or audit
`research.correlator.no_pattern` (one transaction per cluster). An open finding of the
cluster that no longer holds is resolved. Operator verbs arrive on
`research.control.correlator.<verb>`. A run is one LLM run with the chain's budget
(`LLM__RUN_BUDGET_*`): once spent, the rest of its clusters are decided by the detectors (their
reasoning says why) and the run's counts carry its model usage (`llm_calls`, `llm_tokens_in`,
`llm_tokens_out`, `llm_fallbacks`, `llm_budget_spent`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog
from faststream import FastStream

from research_agents import RunContext
from research_agents.app import schedule
from research_agents.runs import RunBook
from research_correlator import experiment, prepare, repository, reshape
from research_correlator.bootstrap import bootstrap
from research_correlator.repository import SERVICE
from research_correlator.settings import CorrelatorServiceSettings, CorrelatorSettings
from research_ledger import Ledger
from research_llm import ProviderChain, usage
from research_platform.app import service_app
from research_platform.logging import get_logger
from research_platform.service import run_service

log = get_logger(__name__)


@dataclass
class Correlator:
    ledger: Ledger
    settings: CorrelatorSettings
    chain: ProviderChain

    async def run(self, ctx: RunContext) -> dict[str, Any]:
        with usage.within(self.chain.new_run()) as llm:
            counts = await self._run(ctx)
        if llm.usage.calls or llm.fallbacks:
            counts.update(
                llm_calls=llm.usage.calls,
                llm_tokens_in=llm.usage.tokens_in,
                llm_tokens_out=llm.usage.tokens_out,
                llm_fallbacks=len(llm.fallbacks),
                llm_budget_spent=llm.exhausted(),
            )
        return counts

    async def _run(self, ctx: RunContext) -> dict[str, Any]:
        async with self.ledger.reading(service=SERVICE) as uow:
            # the run book is the agent's (`research_agents.runs`), read in the same snapshot
            after = (await RunBook(uow.session, SERVICE).last_counts()).get("cursor") or ""
            entities = await uow.entities.clustered(
                after=after,
                limit=self.settings.clusters_per_run,
                min_claims=self.settings.min_claims,
            )
            known = await uow.entities.known()
        for entity in entities:
            await ctx.checkpoint()
            with structlog.contextvars.bound_contextvars(entity=entity):
                outcome = await self.correlate(entity, known, ctx)
            ctx.bump(outcome)
            ctx.bump("clusters")
            ctx.counts["cursor"] = entity
        exhausted = (
            self.settings.clusters_per_run == 0 or len(entities) < self.settings.clusters_per_run
        )
        if exhausted:
            ctx.counts["cursor"] = None
        return ctx.counts

    async def correlate(self, entity: str, known: list[str], ctx: RunContext | None = None) -> str:
        """Judge one cluster; returns `finding`, `unchanged` or `no_pattern`."""
        async with self.ledger.reading(service=SERVICE) as uow:
            rows, years = await uow.entities.cluster(entity, self.settings.max_claims_per_cluster)
        cluster = prepare.cluster(entity, rows, years, known)
        if len(cluster.claims) < self.settings.min_claims:
            return "skipped"
        candidates = experiment.detect(cluster, self.settings.min_score)
        decision = await experiment.decide(
            cluster, candidates, self.chain, self.settings.confirm_timeout_s
        )
        run_id = ctx.run_id if ctx else None
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            standing = await repository.open_of_entity(uow, entity, cluster.claim_ids)
            same = [
                f
                for f in standing
                if f.kind == decision.kind and set(f.claim_ids) == set(decision.claim_ids)
            ]
            stale = [f for f in standing if f not in same]
            if stale:
                resolved = await repository.resolve(uow, stale, entity, decision.kind, run_id)
                if ctx is not None:
                    ctx.bump("resolved", resolved)
            if decision.kind is None:
                repository.no_pattern(
                    uow,
                    entity,
                    reshape.no_pattern_payload(entity, decision, len(cluster.claims)),
                    run_id,
                )
                return "no_pattern"
            if same:
                return "unchanged"
            await repository.record(
                uow,
                entity,
                reshape.finding(entity, decision),
                reshape.finding_audit_payload(decision),
                run_id,
            )
        log.info("pattern found", kind=decision.kind, score=decision.score, model=decision.model)
        return "finding"


def create_app(settings: CorrelatorServiceSettings) -> FastStream:
    deps = bootstrap(settings)
    correlator = settings.correlator

    app, ctx = service_app(settings, SERVICE)
    schedule(
        ctx,
        correlator.schedule,
        lambda ctx: Correlator(Ledger(ctx.sessions), correlator, deps.llm.chain()).run,
    )
    return app


def run() -> None:
    run_service(SERVICE, create_app, CorrelatorServiceSettings)


if __name__ == "__main__":
    run()
