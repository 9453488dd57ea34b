"""The critic's service layer: judge a pending claim, judge an active one again, drain the quarantine.

pending claim → read the claim and the active claims of its entity (`uow.claims`, `uow.verdicts`,
no transaction; a claim read as not pending is read again on the primary under its row lock)
→ prepare (a `Review`; an unknown claim is dead-lettered) → experiment (provider
chain, under the SLA) → reshape (the supersede rule) → `ledger.verdicts.decide` (verdict row, claim
status, audit row and the `research.claim.decided` event in the outbox: one transaction; the
relay publishes the event after the commit). `decide` re-checks in its
transaction what judging assumed: a claim already decided is a redelivery (nothing happens), an
entity whose active claims changed meanwhile raises `EntityChanged` and the claim is judged again.

A critique past the SLA counts as a timeout (`ledger.verdicts.record_timeout`); after
`critic.quarantine_after` in a row the claim moves to `critic_quarantine` and waits for an
operator's drain (`ledger.verdicts.release`, the claims proposed again through the outbox, with
their release). A re-critique judges an
active claim without the sources that no longer back it; a reject withdraws it
(`ledger.verdicts.reconsider`, once per finding).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import structlog

from research_contracts import (
    ClaimDecided,
    ClaimProposed,
    ClaimStatus,
    ControlReply,
    ControlRequest,
    CriticVerdict,
    RecritiqueClaim,
    subjects,
)
from research_critic import experiment, prepare, reshape
from research_critic.repository import SERVICE, EntityChanged, discredited_sources, quote_vectors
from research_critic.settings import CriticServiceSettings
from research_ledger import Ledger, UnitOfWork
from research_llm import ProviderChain
from research_platform.errors import TransientError
from research_platform.logging import get_logger

log = get_logger(__name__)
JUDGE_ATTEMPTS = 5


@dataclass
class Critic:
    """The critic's work on one message at a time; built in the lifespan (`main.py`)."""

    ledger: Ledger  # its `reading()` reads the claim and its peers before judging (autocommit)
    settings: CriticServiceSettings
    chain: ProviderChain

    async def handle_pending(self, proposed: ClaimProposed) -> None:
        """Judge the pending claim `proposed` names; judged again when its entity changed meanwhile."""
        with structlog.contextvars.bound_contextvars(claim_id=str(proposed.claim_id)):
            for _ in range(JUDGE_ATTEMPTS):
                try:
                    await self.judge_and_decide(proposed.claim_id)
                    return
                except (
                    EntityChanged
                ):  # another claim of the entity was decided meanwhile: judge again
                    log.info("entity changed while judging; judging again")
            raise TransientError(f"entity kept changing over {JUDGE_ATTEMPTS} judgements")

    async def judge_and_decide(self, claim_id: uuid.UUID) -> None:
        # `decide` re-checks what judging assumed
        async with self.ledger.reading(service=SERVICE) as uow:
            claim = prepare.known(claim_id, await uow.claims.get(claim_id))
            if claim.status != ClaimStatus.pending and not await self.pending_on_primary(claim_id):
                log.info("claim already decided, skipping redelivery", status=claim.status)
                return
            active = await uow.verdicts.active_of_entity(claim.entity, besides=claim.id)
            review = prepare.review(claim, active, await quote_vectors(uow, prepare.quotes(claim)))
        verdict = await self.judge(claim.id, review, ClaimStatus.pending)
        if verdict is None:
            return
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            decided = await uow.verdicts.decide(claim.id, verdict, review.considered)
            if decided is not None:
                announce(uow, decided)
        if decided is not None:
            log.info("claim decided", verdict=verdict.verdict.value, score=verdict.score)

    async def pending_on_primary(self, claim_id: uuid.UUID) -> bool:
        """Whether the claim is pending once writers in flight have committed: a lagging replica
        may still show a drained claim in `critic_quarantine`; the row lock on the primary waits
        for a transaction in flight."""
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            claim = await uow.claims.get(claim_id, settled=True)
            return claim is not None and claim.status == ClaimStatus.pending

    async def judge(
        self, claim_id: uuid.UUID, review: prepare.Review, judged_status: ClaimStatus
    ) -> CriticVerdict | None:
        """experiment → reshape: the verdict the ledger can apply, or None when the claim was quarantined
        (a timeout short of quarantine raises `TransientError`, so the message is redelivered)."""
        try:
            outcome = await experiment.judge(review, self.chain, self.settings.critic.sla_seconds)
        except TimeoutError as exc:
            await self.timed_out(claim_id, judged_status, exc)
            return None
        return reshape.conform(outcome, review.considered)

    async def timed_out(
        self, claim_id: uuid.UUID, judged_status: ClaimStatus, exc: TimeoutError
    ) -> None:
        """Count the SLA timeout; quarantine (and return) on the last straw, else retry later."""
        sla = self.settings.critic.sla_seconds
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            quarantined = await uow.verdicts.record_timeout(
                claim_id,
                judged_status=judged_status,
                quarantine_after=self.settings.critic.quarantine_after,
                sla_s=sla,
            )
            if quarantined is not None:
                announce(uow, quarantined)
        if quarantined is None:
            raise TransientError(f"critique exceeded the {sla}s SLA") from exc
        log.warning("claim quarantined after repeated SLA timeouts", sla_s=sla)

    async def handle_recritique(self, command: RecritiqueClaim) -> None:
        """Judge an active claim again, without the sources the replicator found retracted or lost."""
        with structlog.contextvars.bound_contextvars(claim_id=str(command.claim_id)):
            # `reconsider` re-checks in its transaction
            async with self.ledger.reading(service=SERVICE) as uow:
                claim = prepare.known(command.claim_id, await uow.claims.get(command.claim_id))
                if claim.status != ClaimStatus.active or await uow.verdicts.recritique_applied(
                    command
                ):
                    log.info("re-critique not applicable, skipping", status=claim.status)
                    return
                discredited = await discredited_sources(uow, command, prepare.cited_sources(claim))
                active = await uow.verdicts.active_of_entity(claim.entity, besides=claim.id)
                review = prepare.review(
                    claim, active, await quote_vectors(uow, prepare.quotes(claim))
                )
            verdict = await self.judge(
                claim.id, prepare.without(review, discredited), ClaimStatus.active
            )
            if verdict is None:
                return
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                decided = await uow.verdicts.reconsider(command, verdict, discredited)
                if decided is not None:
                    announce(uow, decided)
            log.info(
                "claim re-critiqued", verdict=verdict.verdict.value, withdrawn=decided is not None
            )

    async def drain(self, request: ControlRequest) -> ControlReply:
        """The operator's drain: quarantined claims (all, or `args.claim_ids`) go back to judgement."""
        try:
            wanted = request.args.get("claim_ids")
            claim_ids = [uuid.UUID(str(c)) for c in wanted] if wanted is not None else None
        except (ValueError, TypeError) as exc:
            return ControlReply(status=400, detail={"error": f"invalid drain request: {exc}"})
        drain_id = uuid.uuid4()
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            released = await uow.verdicts.release(claim_ids, request.actor_key_id)
            for claim in released:
                # Proposed again through the outbox: published after the release commits (a
                # crash in between loses no proposal), one `Nats-Msg-Id` per drain and claim.
                uow.outbox.add(
                    subjects.CLAIM_PENDING,
                    ClaimProposed(
                        claim_id=claim.id,
                        task_id=claim.task_id,
                        entity=claim.entity,
                        statement=claim.statement,
                    ),
                    msg_id=f"claim-drained-{drain_id}-{claim.id}",
                )
        log.info("quarantine drained", count=len(released), key_id=request.actor_key_id)
        return ControlReply(
            status=200, detail={"drained": [str(c.id) for c in released], "count": len(released)}
        )


def announce(uow: UnitOfWork, decided: ClaimDecided) -> None:
    """Stage `research.claim.decided` with the decision: published after its commit, at least
    once, one `Nats-Msg-Id` per claim and status (`research_ledger.outbox`)."""
    uow.outbox.add(
        subjects.CLAIM_DECIDED,
        decided,
        msg_id=f"claim-decided-{decided.claim_id}-{decided.status.value}",
    )
