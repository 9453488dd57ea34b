"""One research task, start to finish.

prepare (parse, normalise) → wait for the tier's turn → guard (sanitise → delimit →
de-identify) → memory (related active claims + their sources, pgvector) → evidence
(connector; PubMed only when memory failed) → the evidence sentences' stored vectors (one
query; the corpus ingest computed them) → experiment (provider chain) → reshape (quote
grounding) → persist claim + audit rows + `research.claim.pending` in the outbox (one unit of
work; the relay publishes it after the commit, with a `Nats-Msg-Id`).

A task embeds one text, its topic (`GuardedQuestion.topic_query`), through the process's
micro-batching embedder (so the questions of concurrent tasks share one model call). That
vector serves memory recall, travels to the connector with the search (the corpus search reuses
it), stands for the question in the offline draft (handed to the embedder's cache under the
model's question, which differs from the topic only by placeholders, so the drafter does not
embed it again) and is stored as the claim's embedding — memory therefore recalls claims by the
question they answered. (The critic judges the question as a statement with the trained
cross-encoder, which reads the texts themselves and needs no vector from here.)

Idempotent under redelivery: the claim id is derived from the task id, the insert does
nothing on conflict, and the event's `Nats-Msg-Id` is derived from the claim id, so a task
delivered twice yields one claim and one event.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import structlog
from faststream.nats import NatsBroker

from research_contracts import ClaimProposed, RunResearch, Tier, subjects
from research_corpus import CorpusSessions
from research_corpus.sentence_vectors import SentenceVectors
from research_corpus.sentences import sentence_key
from research_ledger import AuditAction, Ledger, UnitOfWork
from research_llm import EvidenceDoc, NoProviderAnswered, ProviderChain
from research_platform.db import transaction
from research_platform.logging import get_logger
from research_researcher import evidence, experiment, prepare, reshape
from research_researcher.repository import SERVICE, Recollection, recall
from research_researcher.settings import ResearcherSettings
from research_researcher.tiers import TierGate

log = get_logger(__name__)

Embed = Callable[[str], Awaitable[list[float]]]
EmbedMany = Callable[[Sequence[str]], Awaitable[Any]]  # texts -> one row per text (numpy)
Remember = Callable[[str, Sequence[float]], None]


@dataclass
class Researcher:
    """Everything one task needs, built in the lifespan."""

    broker: NatsBroker
    ledger: Ledger  # its `reading()`: memory recall, on DATABASE_READ_URL when set
    corpus: CorpusSessions  # the corpus's sentence vectors, stored for the next task
    settings: ResearcherSettings
    chain: ProviderChain
    gate: TierGate
    embed: Embed
    corpus_reads: CorpusSessions | None = None  # the sentence-vector lookup; None = `corpus`
    remember: Remember | None = None  # keeps a vector in the embedder's cache under another text
    embed_many: EmbedMany | None = (
        None  # embeds the corpus sentences with no stored vector yet (stored for the next task)
    )

    async def handle(self, command: RunResearch, tier: Tier) -> None:
        """Research `command` (consumed from the `tier` consumer) and propose its claim."""
        task = prepare.normalise_task(command)
        with structlog.contextvars.bound_contextvars(
            task_id=str(task.task_id), subject=subjects.task_subject(tier)
        ):
            waited = await self.gate.wait_for_turn(tier)
            async with self.ledger.unit_of_work(service=SERVICE) as uow:
                # A task with its claim is `claimed` (one transaction stores both), so `start`
                # refuses it: only then is the claim looked up.
                started = await uow.tasks.start(task, waited_s=waited)
                existing = None if started else await uow.claims.for_task(task.task_id)
                if (
                    existing is not None
                ):  # redelivered after its claim: re-announce, never re-create
                    announce(uow, existing.id, task.task_id, existing.entity, existing.statement)
            if existing is None and not started:  # the task already failed: nothing left to do
                log.info("task already ended")
                return
            if existing is not None:
                log.info("task already has its claim", claim_id=str(existing.id))
                return
            await self.research(task)

    async def research(self, task: RunResearch) -> None:
        guarded = prepare.guard_question(task.question, task.patient_context)
        recollection, query_vector, memory_error = await self.recall(task, guarded.topic_query)
        if query_vector is not None and self.remember is not None and not task.patient_context:
            # Without patient context the model's question is the topic plus placeholders: one vector for both.
            self.remember(guarded.model_question, query_vector)
        notes: list[tuple[AuditAction, dict[str, Any]]] = []
        if memory_error is None:
            sources = task.filters.sources or self.settings.evidence_sources
        else:
            sources = list(self.settings.fallback_sources)
            notes.append(
                (
                    AuditAction.CONSUMER_RETRIEVAL_FALLBACK,
                    {"reason": memory_error, "sources": sources},
                )
            )
            log.warning(
                "memory retrieval failed, falling back", reason=memory_error, sources=sources
            )
        found = await evidence.search(
            self.broker,
            guarded.topic_query,
            sources=sources,
            limit=self.settings.evidence_limit,
            filters=task.filters,
            timeout_s=self.settings.connector_timeout_s,
            query_embedding=query_vector,
        )
        hits = experiment.merge_hits(found.hits, recollection.sources)
        docs, off_topic = await asyncio.to_thread(
            experiment.relevant_docs, guarded.topic_query, experiment.evidence_docs(hits)
        )
        docs = await self.with_known_vectors(docs)
        try:
            outcome = await experiment.draft_claim(
                guarded.model_question, task.entity, docs, self.chain
            )
        except (
            NoProviderAnswered
        ) as exc:  # every provider of the chain was tried: the task fails, visibly
            await self.fail(task.task_id, f"no LLM provider answered: {exc}")
            return
        claim = reshape.to_claim(
            task,
            outcome,
            docs,
            provenance={
                "sources_asked": sources,
                "degraded": found.degraded,
                "evidence": len(docs),
                "off_topic": off_topic,
                "related_claims": [
                    {"claim_id": str(c.claim_id), "similarity": c.similarity}
                    for c in recollection.claims
                ],
                "known_sources": [hit.source_id for hit in recollection.sources],
                "deidentified": guarded.identifiers,
                "neutralised": guarded.neutralised,
            },
            notes=notes,
        )
        supports, disagreeing = await asyncio.to_thread(
            experiment.agreeing_supports, claim.statement, claim.supports
        )
        claim = replace(
            claim,
            supports=supports,
            provenance={**claim.provenance, "dropped_not_supporting": disagreeing},
        )
        embedding = (
            query_vector if query_vector is not None else await self.embed(guarded.topic_query)
        )
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            created = await uow.claims.propose(claim, embedding, hits)
            stored = None if created else await uow.claims.for_task(task.task_id)
            if stored is not None:  # a concurrent delivery of the same task stored it first
                announce(uow, stored.id, task.task_id, stored.entity, stored.statement)
            else:
                announce(uow, claim.claim_id, task.task_id, claim.entity, claim.statement)
        if stored is not None:
            return
        log.info(
            "claim proposed",
            claim_id=str(claim.claim_id),
            model=claim.model,
            supports=len(claim.supports),
            dropped_supports=claim.dropped_supports,
        )

    async def fail(self, task_id: uuid.UUID, reason: str) -> None:
        """Mark the task `failed` with `reason` (shown by `GET /tasks/{id}`); a no-op once it ended."""
        async with self.ledger.unit_of_work(service=SERVICE) as uow:
            await uow.tasks.fail(task_id, reason)
        log.warning("task failed", reason=reason)

    async def recall(
        self, task: RunResearch, topic: str
    ) -> tuple[Recollection, list[float] | None, str | None]:
        """Related active claims and known sources, and the topic's vector; on any failure an empty
        recollection and why (the vector too, when it was the embedding that failed)."""
        vector: list[float] | None = None
        try:
            async with asyncio.timeout(self.settings.memory_timeout_s):
                vector = await self.embed(topic)
                recollection = await self._recall(task, vector)
        except Exception as exc:  # noqa: BLE001 - fail-soft by design: any memory fault means the fallback
            return Recollection(), vector, f"{type(exc).__name__}: {exc}"[:300]
        return recollection, vector, None

    async def _recall(self, task: RunResearch, embedding: list[float]) -> Recollection:
        async with self.ledger.reading(service=SERVICE) as uow:
            return await recall(
                uow,
                embedding,
                entity=task.entity if prepare.entity_was_given(task) else None,
                limit=self.settings.memory_claims,
                min_similarity=self.settings.memory_min_similarity,
                max_sources=self.settings.memory_sources,
            )

    async def with_known_vectors(self, docs: list[EvidenceDoc]) -> list[EvidenceDoc]:
        """`docs` with the stored vectors of their sentences, so the offline engine does not embed
        corpus text; when the lookup fails the engine embeds them itself (slower, same claim).

        Corpus sentences with no stored vector yet (the ingest leaves them to the first request
        that reads the paper: `corpus.sentence_vectors = "lazy"`) are embedded here and stored, so
        the next task that reads the paper finds them. Outside sources' sentences are never stored."""
        sentences = experiment.evidence_sentences(docs)
        if not sentences:
            return docs
        try:
            async with (self.corpus_reads or self.corpus)() as session:
                repo = SentenceVectors(session)
                vectors = await repo.vectors_of(sentences)
                fill = self.embed_many is not None and await repo.usable()
        except Exception as exc:  # noqa: BLE001 - an optimisation only: never a reason to fail the task
            log.warning(
                "sentence vectors unavailable, the engine embeds the evidence",
                error=repr(exc)[:300],
            )
            return docs
        missing = list(
            dict.fromkeys(
                s
                for s in experiment.evidence_sentences(experiment.corpus_docs(docs))
                if s not in vectors
            )
        )
        if fill and missing and self.embed_many is not None:
            vectors = {**vectors, **await self.stored_now(missing, self.embed_many)}
        return experiment.with_sentence_vectors(docs, vectors)

    async def stored_now(self, sentences: list[str], embed: EmbedMany) -> dict[str, list[float]]:
        """Embed `sentences` (corpus text) and store their vectors; the vectors either way (a failed
        write only means the next task embeds them again)."""
        rows = await embed(sentences)
        try:
            async with transaction(self.corpus) as session:
                await SentenceVectors(session).keep([sentence_key(s) for s in sentences], rows)
        except Exception as exc:  # noqa: BLE001 - an optimisation only: never a reason to fail the task
            log.warning("sentence vectors not stored", error=repr(exc)[:300])
        return {s: row.tolist() for s, row in zip(sentences, rows, strict=True)}


def announce(
    uow: UnitOfWork, claim_id: uuid.UUID, task_id: uuid.UUID, entity: str, statement: str
) -> None:
    """Stage `research.claim.pending` for the critic in the unit of work's outbox: published after
    the commit, at least once; its message id (`ClaimProposed.msg_id()`) makes a repeat a no-op
    in JetStream, and the critic skips a claim it already decided."""
    proposal = ClaimProposed(claim_id=claim_id, task_id=task_id, entity=entity, statement=statement)
    uow.outbox.add(subjects.CLAIM_PENDING, proposal, msg_id=proposal.msg_id())
