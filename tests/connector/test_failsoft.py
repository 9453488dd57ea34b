"""Fail-soft behaviour against a fake API (httpx.MockTransport) with audit rows in real Postgres:
429 with Retry-After, 5xx, a response slower than the deadline, malformed JSON / XML, arXiv's
error feed — each gives empty hits and a `connector.degraded` row, and the other sources' hits
still arrive. Keys never show up in logs or audit rows; a query with identifiers is refused."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import func, select

from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.settings import ConnectorSettings
from research_ledger import Ledger
from research_ledger.tables import AuditEvent

pytestmark = pytest.mark.integration

CROSSREF = "api.crossref.org"
EUROPEPMC = "www.ebi.ac.uk"
EUTILS = "eutils.ncbi.nlm.nih.gov"
ARXIV = "export.arxiv.org"
S2 = "api.semanticscholar.org"


async def _last_audit_id(sessions) -> int:
    async with sessions() as session:
        return int(await session.scalar(select(func.coalesce(func.max(AuditEvent.id), 0))))


async def _audits_since(sessions, since: int, action: str) -> list[AuditEvent]:
    async with sessions() as session:
        rows = await session.scalars(
            select(AuditEvent)
            .where(AuditEvent.id > since, AuditEvent.action == action)
            .order_by(AuditEvent.id)
        )
        return list(rows)


def _json(body: bytes, status: int = 200, **headers: str) -> httpx.Response:
    return httpx.Response(
        status, content=body, headers={"content-type": "application/json", **headers}
    )


async def test_429_with_retry_after_is_waited_then_answered(
    make_sources, fake_api, clock, recorded, sessions, unique
):
    replies = iter(
        [
            _json(b"{}", 429, **{"Retry-After": "7"}),
            _json(recorded("crossref/habanero_cassette_test_works_query__00.json")),
        ]
    )
    fake_api.routes[CROSSREF] = lambda request: next(replies)
    since = await _last_audit_id(sessions)
    answer = await make_sources(sessions=sessions)["crossref"].lookup(f"ecology {unique}")
    assert answer.degraded is None and len(answer.hits) == 2
    assert clock.sleeps[-1] == 7.0  # the Retry-After, not the default backoff
    assert fake_api.count(CROSSREF) == 2
    assert await _audits_since(sessions, since, "connector.degraded") == []


async def test_persistent_429_degrades_with_an_audit_row(
    make_sources, fake_api, clock, sessions, unique
):
    fake_api.routes[CROSSREF] = lambda request: _json(b"{}", 429, **{"Retry-After": "2"})
    since = await _last_audit_id(sessions)
    hits = await make_sources(sessions=sessions)["crossref"].search(f"ecology {unique}")
    assert hits == []
    assert fake_api.count(CROSSREF) == 3  # first try + 2 retries
    assert clock.sleeps[-2:] == [2.0, 2.0]
    (row,) = await _audits_since(sessions, since, "connector.degraded")
    assert row.service == "connector"
    assert row.payload["source"] == "crossref" and row.payload["reason"] == "http_429"


async def test_retry_after_beyond_the_cap_is_not_waited_for(
    make_sources, fake_api, clock, sessions, unique
):
    fake_api.routes[CROSSREF] = lambda request: _json(b"{}", 429, **{"Retry-After": "3600"})
    answer = await make_sources(sessions=sessions)["crossref"].lookup(f"ecology {unique}")
    assert answer.degraded == "http_429" and fake_api.count(CROSSREF) == 1 and clock.sleeps == []


async def test_500_degrades_while_other_sources_still_answer(
    make_sources, fake_api, recorded, sessions, unique
):
    fake_api.routes[CROSSREF] = lambda request: httpx.Response(500, text="upstream exploded")
    fake_api.routes[EUROPEPMC] = lambda request: _json(
        recorded("europepmc/fastpaper_europepmc_search.json")
    )
    since = await _last_audit_id(sessions)
    found = await search_all(
        ["crossref", "europepmc"],
        f"attention mechanism {unique}",
        None,
        5,
        5.0,
        registry=make_sources(sessions=sessions),
        incidents=Incidents(Ledger(sessions)),
    )
    assert found.degraded == {"crossref": "http_500"}
    assert [h.source_id for h in found.hits] == [
        "pmid:41792208",
        "pmid:41744547",
        "pmcid:PMC13013079",
    ]
    (row,) = await _audits_since(sessions, since, "connector.degraded")
    assert row.payload["source"] == "crossref" and row.payload["reason"] == "http_500"


async def test_a_source_slower_than_the_deadline_is_dropped(
    make_sources, fake_api, recorded, sessions, unique
):
    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return _json(recorded("crossref/habanero_cassette_test_works_query__00.json"))

    fake_api.routes[CROSSREF] = slow
    fake_api.routes[EUROPEPMC] = lambda request: _json(
        recorded("europepmc/fastpaper_europepmc_search.json")
    )
    since = await _last_audit_id(sessions)
    loop = asyncio.get_running_loop()
    started = loop.time()
    found = await search_all(
        ["crossref", "europepmc"],
        f"attention {unique}",
        None,
        5,
        0.5,
        registry=make_sources(sessions=sessions),
        incidents=Incidents(Ledger(sessions)),
    )
    assert loop.time() - started < 4  # the slow source did not hold the search
    assert found.degraded == {"crossref": "deadline"} and len(found.hits) == 3
    (row,) = await _audits_since(sessions, since, "connector.degraded")
    assert row.payload == {
        "source": "crossref",
        "reason": "deadline",
        "operation": "search",
        "detail": "no answer within 0.5s",
    }


async def test_malformed_json_degrades(make_sources, fake_api, sessions, unique):
    fake_api.routes[EUROPEPMC] = lambda request: _json(b'{"resultList": {"result": [')
    since = await _last_audit_id(sessions)
    answer = await make_sources(sessions=sessions)["europepmc"].lookup(f"attention {unique}")
    assert answer.hits == [] and answer.degraded == "malformed_payload"
    (row,) = await _audits_since(sessions, since, "connector.degraded")
    assert row.payload["reason"] == "malformed_payload"


async def test_json_of_the_wrong_shape_degrades(make_sources, fake_api, sessions, unique):
    fake_api.routes[CROSSREF] = lambda request: _json(
        b'{"status": "ok", "message": {"no-items": true}}'
    )
    answer = await make_sources(sessions=sessions)["crossref"].lookup(f"ecology {unique}")
    assert answer.hits == [] and answer.degraded == "malformed_payload"


async def test_malformed_xml_degrades(make_sources, fake_api, recorded, sessions, unique):
    def eutils(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("esearch.fcgi"):
            return _json(recorded("pubmed/esearch_pubmed.json"))
        return httpx.Response(
            200,
            content=b"<PubmedArticleSet><PubmedArticle><MedlineCitation>",
            headers={"content-type": "text/xml"},
        )

    fake_api.routes[EUTILS] = eutils
    since = await _last_audit_id(sessions)
    answer = await make_sources(sessions=sessions)["pubmed"].lookup(f"breast cancer {unique}")
    assert answer.hits == [] and answer.degraded == "malformed_payload"
    (row,) = await _audits_since(sessions, since, "connector.degraded")
    assert row.payload["source"] == "pubmed" and "ParseError" in row.payload["detail"]


async def test_pubmed_search_returns_efetch_records_in_esearch_order(
    make_sources, fake_api, recorded, unique
):
    def eutils(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("esearch.fcgi"):
            return _json(b'{"esearchresult": {"idlist": ["22351513"]}}')
        assert request.url.params["id"] == "22351513"
        return httpx.Response(
            200, content=recorded("pubmed/biocommons_cassette_efetch_pubmed_22351513__00.xml")
        )

    fake_api.routes[EUTILS] = eutils
    (hit,) = await make_sources()["pubmed"].search(f"acacia seed oil {unique}")
    assert hit.source_id == "pmid:22351513" and hit.year == 2012


async def test_arxiv_error_feed_is_a_degraded_answer(make_sources, fake_api, recorded, sessions):
    fake_api.routes[ARXIV] = lambda request: httpx.Response(
        200, content=recorded("arxiv/arxivpy_id_abc_s0_m100_b79c8dcf6bc3.body.atom.xml")
    )
    since = await _last_audit_id(sessions)
    assert await make_sources(sessions=sessions)["arxiv"].fetch("arxiv:abc") is None
    (row,) = await _audits_since(sessions, since, "connector.degraded")
    assert (
        row.payload["reason"] == "source_error"
        and "incorrect id format for abc" in row.payload["detail"]
    )


async def test_semantic_scholar_404_is_an_unknown_id_not_a_fault(
    make_sources, fake_api, recorded, sessions
):
    fake_api.routes[S2] = lambda request: _json(
        recorded("semantic_scholar/danielnsilva_cassette_test_not_found__00.json"), 404
    )
    since = await _last_audit_id(sessions)
    assert await make_sources(sessions=sessions)["semantic_scholar"].fetch("s2:0") is None
    assert fake_api.count(S2) == 1
    assert await _audits_since(sessions, since, "connector.degraded") == []


async def test_keys_never_reach_logs_or_audit_rows(
    make_sources, fake_api, sessions, capsys, unique
):
    secret = f"sekret-{unique}-key"
    settings = ConnectorSettings()
    settings.pubmed.api_key = SecretStr(secret)
    settings.semantic_scholar.api_key = SecretStr(secret)

    def broken(request: httpx.Request) -> httpx.Response:
        if request.url.host == EUTILS:
            assert request.url.params["api_key"] == secret  # the key really went out…
            return httpx.Response(503, text=f"overloaded for key {secret}")
        raise httpx.ConnectError(f"refused connecting with {secret}", request=request)

    fake_api.routes[EUTILS] = broken
    fake_api.routes[S2] = broken
    since = await _last_audit_id(sessions)
    found = await search_all(
        ["pubmed", "semantic_scholar"],
        f"statins {unique}",
        None,
        5,
        5.0,
        registry=make_sources(settings, sessions=sessions),
        incidents=Incidents(Ledger(sessions)),
    )
    assert found.degraded == {
        "pubmed": "http_503",
        "semantic_scholar": "transport_error:ConnectError",
    }
    rows = await _audits_since(sessions, since, "connector.degraded")
    assert len(rows) == 2
    captured = capsys.readouterr()
    assert "source degraded" in captured.out + captured.err  # …the WARNINGs were written…
    for text in (captured.out, captured.err, json.dumps([r.payload for r in rows]), repr(found)):
        assert secret not in text  # …and the key is in none of them
    assert secret not in repr(settings) and secret not in str(settings.pubmed.api_key)


async def test_query_with_identifiers_is_refused_before_any_request(
    make_sources, fake_api, sessions, unique
):
    since = await _last_audit_id(sessions)
    found = await search_all(
        ["crossref", "pubmed"],
        f"Mr. Hendricks {unique} statin myopathy",
        None,
        5,
        5.0,
        registry=make_sources(sessions=sessions),
        incidents=Incidents(Ledger(sessions)),
    )
    assert found.hits == [] and found.error and "name" in found.error
    assert fake_api.requests == []
    (row,) = await _audits_since(sessions, since, "connector.phi_refused")
    assert row.payload["kinds"] == ["name"]
    assert "Hendricks" not in json.dumps(row.payload) + json.dumps(row.subject_ids)


async def test_direct_source_call_refuses_identifiers_too(make_sources, fake_api, sessions):
    answer = await make_sources(sessions=sessions)["europepmc"].lookup(
        "contact jane.doe@example.org about lupus"
    )
    assert answer.degraded == "phi_refused" and fake_api.requests == []


async def test_unconfigured_publisher_sends_nothing(make_sources, fake_api, sessions, unique):
    found = await search_all(
        ["elsevier", "drugbank", "nope"],
        f"spinal fusion {unique}",
        None,
        5,
        5.0,
        registry=make_sources(sessions=sessions),
        incidents=Incidents(Ledger(sessions)),
    )
    assert found.degraded == {
        "nope": "unknown_source",
        "elsevier": "not_configured",
        "drugbank": "disabled",
    }
    assert fake_api.requests == []
