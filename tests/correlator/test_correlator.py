"""The correlator: each detector on crafted claims, exactly one kind per cluster, LLM confirmation, audits."""

from __future__ import annotations

import json
import uuid

import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_correlator import experiment
from research_correlator.main import Correlator
from research_correlator.prepare import Cluster, ClusterClaim
from research_correlator.settings import CorrelatorSettings
from research_ledger import Ledger
from research_ledger.tables import AuditEvent, Finding
from research_llm import build_chain
from research_platform.settings import LLMSettings
from tests.agents.ledger import add_claim, add_sources, support

OFFLINE = build_chain(LLMSettings(provider="offline"), encoder=None)


def _claim(
    statement: str,
    confidence: float = 0.7,
    sources: tuple[str, ...] = (),
    years: tuple[int, ...] = (),
) -> ClusterClaim:
    return ClusterClaim(uuid.uuid4(), statement, confidence, sources, years)


def _cluster(*claims: ClusterClaim, known: frozenset[str] = frozenset()) -> Cluster:
    return Cluster("vitamin d", tuple(claims), known)


@pytest.mark.unit
def test_shared_citation_cluster_detector() -> None:
    a, b, c = (
        _claim("A.", sources=("pmid:1", "pmid:2")),
        _claim("B.", sources=("pmid:2",)),
        _claim("C.", sources=("pmid:9",)),
    )
    found = experiment.shared_citations(_cluster(a, b, c))
    assert found is not None and found.kind == "shared_citation_cluster"
    assert set(found.claim_ids) == {a.claim_id, b.claim_id}
    assert found.evidence["shared_sources"] == {
        "pmid:2": sorted([str(a.claim_id), str(b.claim_id)])
    }
    assert experiment.shared_citations(_cluster(a, c)) is None


@pytest.mark.unit
def test_temporal_trend_detector_uses_source_years_and_polarity() -> None:
    old = _claim("Vitamin D does not reduce fractures.", 0.6, years=(2004,))
    mid = _claim("Vitamin D may reduce fractures.", 0.4, years=(2012,))
    new = _claim("Vitamin D reduces fractures.", 0.8, years=(2021, 2023))
    found = experiment.temporal_trend(_cluster(new, old, mid))
    assert (
        found is not None
        and found.evidence["direction"] == "rising"
        and found.evidence["kendall_tau"] == 1.0
    )
    assert experiment.temporal_trend(_cluster(old, mid)) is None, "two claims are not a trend"
    flat = _claim("Vitamin D reduces fractures.", 0.7, years=(2015,))
    assert (
        experiment.temporal_trend(
            _cluster(_claim("x", 0.7, years=(2001,)), _claim("y", 0.2, years=(2008,)), flat)
        )
        is None
    )


@pytest.mark.unit
def test_dose_response_detector() -> None:
    low = _claim("400 IU of vitamin D lowered fracture risk by 5%.")
    mid = _claim("Taking 1000 IU daily lowered fracture risk by 12%.")
    high = _claim("2000 iu/day lowered fracture risk by 20 percent.")
    found = experiment.dose_response(_cluster(high, low, mid))
    assert (
        found is not None
        and found.evidence["unit"] == "iu"
        and found.evidence["direction"] == "increasing"
    )
    assert experiment.parse_dose("a 2.5 mg/kg infusion") == (2.5, "mg/kg")
    unrelated = _claim("30 minutes of walking helps.")
    assert experiment.dose_response(_cluster(low, unrelated)) is None, (
        "doses in different units do not compare"
    )


@pytest.mark.unit
def test_co_occurrence_detector() -> None:
    a = _claim("Vitamin D with calcium prevents hip fractures.")
    b = _claim("Combined calcium and vitamin D supplementation helps bone density.")
    c = _claim("Vitamin D deficiency is common.")
    found = experiment.co_occurrence(_cluster(a, b, c, known=frozenset({"calcium", "zinc"})))
    assert found is not None and found.evidence == {"co_entity": "calcium", "mentions": 2}
    assert experiment.co_occurrence(_cluster(a, c, known=frozenset({"calcium"}))) is None


@pytest.mark.unit
async def test_offline_the_strongest_candidate_is_the_one_kind() -> None:
    a = _claim("400 mg magnesium with calcium lowers risk by 5%.", sources=("pmid:1",))
    b = _claim("800 mg magnesium with calcium lowers risk by 15%.", sources=("pmid:1",))
    cluster = _cluster(a, b, known=frozenset({"calcium"}))
    candidates = experiment.detect(cluster, min_score=0.5)
    assert len(candidates) >= 2
    decision = await experiment.decide(cluster, candidates, OFFLINE, 5)
    assert decision.kind == candidates[0].kind and decision.model == "offline-correlator"
    assert decision.kind in experiment.PRECEDENCE


async def _correlate(sessions: async_sessionmaker[AsyncSession], entity: str) -> str:
    correlator = Correlator(Ledger(sessions), CorrelatorSettings(), OFFLINE)
    async with Ledger(sessions).reading() as uow:
        known = await uow.entities.known()
    return await correlator.correlate(entity, known)


async def _findings(sessions: async_sessionmaker[AsyncSession], entity: str) -> list[Finding]:
    async with sessions() as session:
        rows = await session.scalars(
            select(Finding).where(
                Finding.agent == "correlator", Finding.payload["entity"].astext == entity
            )
        )
        return list(rows)


async def _audits(sessions: async_sessionmaker[AsyncSession], entity: str) -> list[str]:
    async with sessions() as session:
        rows = await session.scalars(
            select(AuditEvent.action).where(
                AuditEvent.service == "correlator",
                AuditEvent.subject_ids["entity"].astext == entity,
            )
        )
        return list(rows)


@pytest.mark.integration
async def test_each_kind_on_crafted_claims(
    sessions: async_sessionmaker[AsyncSession], unique: str
) -> None:
    # shared_citation_cluster
    shared = f"shared-{unique}"
    await add_sources(sessions, f"pmid:{unique}1", f"pmid:{unique}2", year=2019)
    await add_claim(
        sessions,
        entity=shared,
        statement="Statins lower LDL.",
        supports=[support(f"pmid:{unique}1")],
    )
    await add_claim(
        sessions,
        entity=shared,
        statement="Statins cut events.",
        supports=[support(f"pmid:{unique}1")],
    )
    # temporal_trend
    trend = f"trend-{unique}"
    for year, conf, statement in (
        (2003, 0.5, "Aspirin does not prevent stroke."),
        (2011, 0.3, "Aspirin may prevent stroke."),
        (2022, 0.8, "Aspirin prevents stroke."),
    ):
        await add_sources(sessions, f"doi:{unique}/{year}", year=year)
        await add_claim(
            sessions,
            entity=trend,
            statement=statement,
            confidence=conf,
            supports=[support(f"doi:{unique}/{year}")],
        )
    # dose_response
    dose = f"dose-{unique}"
    for mg, pct in ((10, 5), (20, 11), (40, 23)):
        await add_sources(sessions, f"corpus:{unique}{mg}")
        await add_claim(
            sessions,
            entity=dose,
            statement=f"{mg} mg daily reduced mortality by {pct}%.",
            supports=[support(f"corpus:{unique}{mg}")],
        )
    # co_occurrence (the co-mentioned entity is one the ledger knows)
    partner, co = f"omega3{unique}", f"cooc-{unique}"
    await add_claim(sessions, entity=partner, statement="Fish oil is rich in it.", supports=[])
    await add_sources(sessions, f"pmid:{unique}7", f"pmid:{unique}8")
    await add_claim(
        sessions,
        entity=co,
        statement=f"Taken with {partner}, it helps.",
        supports=[support(f"pmid:{unique}7")],
    )
    await add_claim(
        sessions,
        entity=co,
        statement=f"{partner} boosts its effect.",
        supports=[support(f"pmid:{unique}8")],
    )
    # no pattern
    none = f"none-{unique}"
    await add_sources(sessions, f"pmid:{unique}5", f"pmid:{unique}6")
    await add_claim(
        sessions, entity=none, statement="It helps sleep.", supports=[support(f"pmid:{unique}5")]
    )
    await add_claim(
        sessions, entity=none, statement="It is safe.", supports=[support(f"pmid:{unique}6")]
    )

    expected = {
        shared: "shared_citation_cluster",
        trend: "temporal_trend",
        dose: "dose_response",
        co: "co_occurrence",
    }
    for entity, kind in expected.items():
        assert await _correlate(sessions, entity) == "finding", entity
        (found,) = await _findings(sessions, entity)
        assert found.kind == kind and len(found.claim_ids) >= 2
        assert found.payload["model"] == "offline-correlator"
        assert await _audits(sessions, entity) == ["research.correlator.finding"]
        assert await _correlate(sessions, entity) == "unchanged", (
            "a standing pattern is not recorded twice"
        )
    assert await _correlate(sessions, none) == "no_pattern"
    assert await _findings(sessions, none) == []
    assert await _audits(sessions, none) == ["research.correlator.no_pattern"]


@pytest.mark.unit
async def test_a_remote_model_confirms_through_the_privacy_guarded_prompt() -> None:
    from tests.llm.fake_llm_server import Behaviour, FakeLLMServer

    server = FakeLLMServer()
    server.start()
    try:
        chain = build_chain(
            LLMSettings(
                provider="openai",
                openai_api_key="sk-test",
                openai_base_url=server.openai_url,
                openai_model="m1",
            ),
            encoder=None,
        )
        a = _claim("Statins lower LDL in John Smith's cohort.", sources=("pmid:1",))
        b = _claim("Statins cut cardiac events.", sources=("pmid:1",))
        cluster = _cluster(a, b)
        candidates = experiment.detect(cluster, 0.5)
        server.queue(
            "openai",
            Behaviour(
                text='{"kind": "no_pattern", "reasoning": "one shared trial is not a cluster"}'
            ),
        )
        no = await experiment.decide(cluster, candidates, chain, 10)
        assert no.kind is None and no.model.startswith("openai:") and "shared trial" in no.reasoning
        sent = json.dumps(server.sent("openai")[0].body)
        assert "pattern_confirmation" in sent and "John Smith" not in sent, (
            "names never leave the process"
        )
        server.queue(
            "openai",
            Behaviour(text='{"kind": "shared_citation_cluster", "reasoning": "same trial"}'),
        )
        yes = await experiment.decide(cluster, candidates, chain, 10)
        assert yes.kind == "shared_citation_cluster" and yes.model.startswith("openai:")
        server.queue("openai", Behaviour(status=500))
        fallback = await experiment.decide(cluster, candidates, chain, 10)
        assert fallback.kind == "shared_citation_cluster" and fallback.model == "offline-correlator"
        assert "no model confirmed" in fallback.reasoning
        invented = '{"kind": "astrology", "reasoning": "stars"}'
        server.queue("openai", Behaviour(text=invented), Behaviour(text=invented))
        refused = await experiment.decide(cluster, candidates, chain, 10)
        assert refused.kind == candidates[0].kind and refused.model == "offline-correlator", (
            "an invented kind never wins"
        )
    finally:
        server.stop()
