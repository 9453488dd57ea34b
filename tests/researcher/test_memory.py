"""Memory on real Postgres + pgvector: related active claims (scoped to the entity when given)
and the sources they cite feed the chain; when memory fails, PubMed only + an audit row."""

from __future__ import annotations

import uuid

import nats
import pytest
from sqlalchemy.dialects.postgresql import insert

from research_contracts import RunResearch, SourceHit, Tier
from research_corpus.embedding import get_embedder
from research_ledger import UnitOfWork
from research_ledger.tables import MemoryClaim, ResearchSource
from research_researcher import prepare
from research_researcher.repository import recall
from tests.researcher.conftest import audit_rows, publish_task, wait_for_claims
from tests.researcher.fakes import EVIDENCE, FakeConnector

pytestmark = pytest.mark.integration

KNOWN = SourceHit(
    source_id="pmid:rs-known-romosozumab",
    source="pubmed",
    title="Romosozumab versus alendronate in women with osteoporosis",
    year=2017,
    abstract="Romosozumab followed by alendronate reduced new vertebral fractures by 48% compared with alendronate alone.",
)


async def _seed(
    sessions,
    *,
    entity: str,
    statement: str,
    status: str = "active",
    source: SourceHit = KNOWN,
    retracted: bool = False,
) -> uuid.UUID:
    claim_id = uuid.uuid4()
    embedding = get_embedder().embed_one(statement)
    async with sessions() as session, session.begin():
        await session.execute(
            insert(ResearchSource)
            .values(
                source_id=source.source_id,
                source=source.source,
                title=source.title,
                abstract=source.abstract,
                year=source.year,
                authors=[],
                metadata={},
                retracted=retracted,
            )
            .on_conflict_do_update(
                index_elements=[ResearchSource.source_id], set_={"retracted": retracted}
            )
        )
        session.add(
            MemoryClaim(
                id=claim_id,
                task_id=None,
                entity=entity,
                question=statement,
                statement=statement,
                status=status,
                confidence=0.7,
                supports=[
                    {"source_id": source.source_id, "quote": source.abstract, "title": source.title}
                ],
                supersedes=[],
                embedding=embedding,
                model="offline",
                dropped_supports=0,
                critic_timeouts=0,
            )
        )
    return claim_id


async def test_recall_finds_related_active_claims_of_the_entity_and_their_live_sources(
    sessions, unique: str
) -> None:
    entity = f"romosozumab {unique}"
    related = await _seed(
        sessions,
        entity=entity,
        statement="Romosozumab reduces vertebral fractures in osteoporosis.",
    )
    other_entity = await _seed(
        sessions, entity=f"other {unique}", statement="Romosozumab reduces vertebral fractures."
    )
    pending = await _seed(
        sessions,
        entity=entity,
        statement="Romosozumab lowers vertebral fracture risk.",
        status="pending",
    )
    unrelated = await _seed(
        sessions, entity=entity, statement="Evening coffee shortens sleep in healthy adults."
    )
    query = get_embedder().embed_one("Does romosozumab prevent vertebral fractures?")

    async with sessions() as session:
        scoped = await recall(
            UnitOfWork(session, service="researcher"),
            query,
            entity=entity,
            limit=5,
            min_similarity=0.45,
        )
        anywhere = await recall(
            UnitOfWork(session, service="researcher"),
            query,
            entity=None,
            limit=50,
            min_similarity=0.45,
        )

    assert [c.claim_id for c in scoped.claims] == [
        related
    ]  # not pending, not another entity, not unrelated
    assert scoped.claims[0].similarity >= 0.45
    assert [s.source_id for s in scoped.sources] == [KNOWN.source_id] and scoped.sources[
        0
    ].metadata["known"]
    recalled = {c.claim_id for c in anywhere.claims}
    assert {related, other_entity} <= recalled and not {pending, unrelated} & recalled


async def test_a_retracted_source_is_never_offered_again(sessions, unique: str) -> None:
    retracted = SourceHit(
        source_id=f"pmid:rs-retracted-{unique}",
        source="pubmed",
        title="Retracted trial",
        abstract="Teriparatide cured osteoporosis in every patient.",
    )
    entity = f"teriparatide {unique}"
    await _seed(
        sessions,
        entity=entity,
        statement="Teriparatide cures osteoporosis.",
        source=retracted,
        retracted=True,
    )
    query = get_embedder().embed_one("Does teriparatide cure osteoporosis?")
    async with sessions() as session:
        recalled = await recall(UnitOfWork(session, service="researcher"), query, entity=entity)
    assert len(recalled.claims) == 1 and recalled.sources == []


async def test_known_sources_reach_the_chain_and_are_preferred(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str
) -> None:
    task = RunResearch(
        question="Does romosozumab reduce vertebral fractures?",
        entity=f"romosozumab {unique}",
        tier=Tier.priority,
    )
    # The researcher keys entities by allow-list (outbound_query drops the unknown token `unique`):
    # the past claim carries the key the task will have, as a claim it had proposed would.
    entity = prepare.normalise_task(task).entity
    assert entity is not None
    related = await _seed(
        sessions,
        entity=entity,
        statement="Romosozumab reduces vertebral fractures in osteoporosis.",
    )
    async with start_researcher():
        await publish_task(nc, task)
        [claim] = await wait_for_claims(sessions, [task.task_id])

    [proposed] = await audit_rows(sessions, task.task_id, "research.claim.proposed")
    assert [c["claim_id"] for c in proposed.payload["related_claims"]] == [str(related)]
    assert proposed.payload["known_sources"] == [KNOWN.source_id]
    assert proposed.payload["sources_asked"] == ["corpus"]
    # the connector never returned it: it came from memory, and the offline engine cited it
    assert KNOWN.source_id not in {h.source_id for h in EVIDENCE}
    assert KNOWN.source_id in [s["source_id"] for s in claim.supports]
    assert await audit_rows(sessions, task.task_id, "consumer.retrieval_fallback") == []


async def test_when_memory_fails_the_task_continues_with_pubmed_only_and_is_audited(
    start_researcher, connector: FakeConnector, nc: nats.NATS, sessions, unique: str
) -> None:
    task = RunResearch(
        question=f"Does denosumab reduce vertebral fractures? {unique}",
        tier=Tier.priority,
        entity=f"fallback {unique}",
    )
    async with start_researcher(memory_timeout_s=0.0):  # memory can never answer in time
        await publish_task(nc, task)
        [claim] = await wait_for_claims(sessions, [task.task_id])

    # `unique` never leaves the process (outbound queries are built by allow-list): match the topic
    topic = prepare.guard_question(task.question, None).topic_query
    [request] = [r for r in connector.requests if r.query == topic]
    assert request.sources == ["pubmed"] and request.filters.sources == ["pubmed"]
    [fallback] = await audit_rows(sessions, task.task_id, "consumer.retrieval_fallback")
    assert fallback.service == "researcher" and fallback.claim_id == claim.id
    assert fallback.payload["sources"] == ["pubmed"] and "Timeout" in fallback.payload["reason"]
    assert claim.supports  # the claim was still drafted from the PubMed evidence
