"""Corpus search is one service: HTTP (gateway) and NATS (connector's `corpus` source) agree."""

from __future__ import annotations

import httpx
import nats
import pytest

from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_engine.stack import Stack

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("mode", ["hybrid", "lexical", "dense"])
async def test_search_over_http_and_over_nats_return_the_same_ranking(
    stack: Stack, mode: str
) -> None:
    query = "exercise training quality of life chronic heart failure"
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=60
    ) as client:
        reply = await client.get(
            "/api/research/v1/search", params={"q": query, "k": 10, "mode": mode}
        )
    assert reply.status_code == 200
    over_http = reply.json()["hits"]

    nc = await nats.connect(stack.nats_url)
    try:
        ask = SearchEvidence(query=query, sources=["corpus"], limit=10, mode=mode)
        answer = await nc.request(
            subjects.CONNECTOR_SEARCH, ask.model_dump_json().encode(), timeout=60
        )
    finally:
        await nc.close()
    over_nats = EvidenceFound.model_validate_json(answer.data).hits

    assert len(over_http) == 10
    assert [h["source_id"] for h in over_http] == [h.source_id for h in over_nats]
    assert [round(h["score"], 6) for h in over_http] == [round(h.score or 0, 6) for h in over_nats]
    assert all(h["source_id"].startswith("corpus:") and h["title"] for h in over_http)
    if mode != "dense":  # the gold abstract of the demo question mentions every query term
        assert "corpus:40817021" in [h["source_id"] for h in over_http]


async def test_search_rejects_a_bad_query_with_422(stack: Stack) -> None:
    async with httpx.AsyncClient(
        base_url=stack.gateway_url, headers=stack.api_headers, timeout=30
    ) as client:
        assert (
            await client.get("/api/research/v1/search", params={"q": "", "k": 10})
        ).status_code == 422
        assert (
            await client.get("/api/research/v1/search", params={"q": "x", "mode": "fuzzy"})
        ).status_code == 422
        assert (
            await client.get("/api/research/v1/search", params={"q": "x", "k": 0})
        ).status_code == 422
