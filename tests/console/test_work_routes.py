"""The read routes behind My work, the paper cards and the audit page, in-process on real Postgres +
NATS: a key lists its own questions and reports only (newest first, searchable, by kind); a corpus
paper's card holds the corpus's metadata, its links out, the reports citing it and their quotes; an
outside paper's card holds what the citing report's reference kept; the audit log narrows by key
and time."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from bench.harness.servers import Servers
from research_contracts import RunResearch
from research_gateway.auth import ApiKeys
from research_gateway.main import create_app
from research_gateway.settings import GatewaySettings
from research_ledger import UnitOfWork
from research_platform.tables import CorpusPaper
from tests.keys import api_key, auth
from tests.reports.sample import SMITH, review
from tests.teardown import left_within

pytestmark = pytest.mark.integration
API = "/api/research/v1"


@pytest.fixture(scope="module")
async def gateway(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(GatewaySettings(nats_url=servers.nats_url, database_url=servers.database_url))
    async with (
        left_within(app.router.lifespan_context(app), "gateway lifespan"),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=30
        ) as client,
    ):
        yield client


async def _key(sessions: Any, role: str) -> tuple[str, uuid.UUID]:
    secret = await api_key(sessions, role)  # type: ignore[arg-type]  # one of ROLES
    async with sessions() as session:
        known = await ApiKeys(UnitOfWork(session, service="gateway")).identify(secret)
    assert known is not None
    return secret, known.key_id


async def _asked(
    sessions: Any, owner: uuid.UUID, topic: str, paper: str, outside: str
) -> uuid.UUID:
    """A question and a review `owner` asked; the review cites `paper` (reference 1) and `outside`."""
    report_id = uuid.uuid4()
    content = review()
    content.references[0].paper_id = paper
    content.references[2].paper_id = outside
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        await ledger.tasks.submit(
            RunResearch(task_id=uuid.uuid4(), question=f"Does {topic} help?", origin="api"),
            owner_key_id=owner,
        )
    async with sessions() as session, session.begin():  # a later transaction: a later `now()`
        ledger = UnitOfWork(session, service="test")
        await ledger.reports.open(
            report_id,
            kind="review",
            run_id=f"rv-{report_id.hex[:12]}",
            subject=topic,
            subject_key=topic,
            owner={"key_id": str(owner)},
        )
        await ledger.reports.save_version(
            report_id,
            run_id=f"rv-{report_id.hex[:12]}",
            content=content.model_dump(mode="json"),
            markdown="# review",
        )
        await ledger.reports.complete(report_id)
    return report_id


async def test_my_work_lists_the_keys_own_questions_and_reports_newest_first(
    gateway: httpx.AsyncClient, sessions: Any, unique: str
) -> None:
    mine, my_id = await _key(sessions, "researcher")
    other, other_id = await _key(sessions, "researcher")
    report_id = await _asked(
        sessions, my_id, f"vitamin {unique}", f"corpus:{unique}", f"pmid:{unique}"
    )
    await _asked(sessions, other_id, f"zinc {unique}", f"corpus:{unique}", f"pmid:{unique}")
    assert (await gateway.get(f"{API}/my-work")).status_code == 401
    items = (await gateway.get(f"{API}/my-work", headers=auth(mine))).json()
    assert [(i["kind"], i["title"]) for i in items] == [
        ("review", f"vitamin {unique}"),  # opened after the question: newest first
        ("question", f"Does vitamin {unique} help?"),
    ]
    assert items[0]["id"] == str(report_id) and items[0]["status"] == "completed"
    assert items[0]["run_id"] == f"rv-{report_id.hex[:12]}"
    found = await gateway.get(f"{API}/my-work", params={"q": "DOES VITAMIN"}, headers=auth(mine))
    assert [i["kind"] for i in found.json()] == ["question"]  # case-insensitive, by its text
    reviews = await gateway.get(f"{API}/my-work", params={"kind": "review"}, headers=auth(mine))
    assert [i["title"] for i in reviews.json()] == [f"vitamin {unique}"]
    wild = await gateway.get(f"{API}/my-work", params={"q": "%"}, headers=auth(mine))
    assert wild.json() == []  # a wildcard is a character, not "anything"
    theirs = (await gateway.get(f"{API}/my-work", headers=auth(other))).json()
    assert [i["title"] for i in theirs] == [f"zinc {unique}", f"Does zinc {unique} help?"]


async def test_a_papers_card_holds_its_metadata_links_citing_reports_and_quotes(
    gateway: httpx.AsyncClient, sessions: Any, unique: str
) -> None:
    reader = auth(await api_key(sessions, "reader"))
    _, owner = await _key(sessions, "researcher")
    async with sessions() as session, session.begin():
        session.add(
            CorpusPaper(
                external_id=unique,
                title="Vitamin D and hip fracture: a randomised trial",
                abstract=SMITH,
                authors=["Smith, John", "Müller, Anna"],
                year=2019,
                venue="The Lancet",
                doi="10.1016/S0140-6736(19)0001-1",
                content_hash=unique,
            )
        )
    report_id = await _asked(
        sessions, owner, f"fractures {unique}", f"corpus:{unique}", f"pmid:{unique}"
    )
    card = (await gateway.get(f"{API}/papers/corpus:{unique}", headers=reader)).json()
    assert card["in_corpus"] and card["year"] == 2019 and card["venue"] == "The Lancet"
    assert card["authors"] == ["Smith, John", "Müller, Anna"] and card["abstract"] == SMITH
    assert {"label": "DOI", "href": "https://doi.org/10.1016/S0140-6736(19)0001-1"} in card["links"]
    [citing] = card["cited_by"]
    assert citing["report_id"] == str(report_id) and citing["reference_id"] == 1
    assert citing["subject"] == f"fractures {unique}"
    assert citing["quotes"] and all(q in SMITH for q in citing["quotes"])  # the review's quotes
    assert card["quotes"] == citing["quotes"]
    assert card["study"] == "randomised trial, 2,400 adults"  # as its abstract states them
    shown = (await gateway.get(f"{API}/reports/{report_id}", headers=reader)).json()
    assert shown["studies"] == {"1": "randomised trial, 2,400 adults"}  # the others state neither
    outside = (await gateway.get(f"{API}/papers/pmid:{unique}", headers=reader)).json()
    assert (
        not outside["in_corpus"] and outside["title"] == "Calcium plus vitamin D in nursing homes"
    )
    assert outside["authors"] == ["Nakamura H"] and outside["year"] == 2017  # as its source gave
    assert outside["links"] == [
        {"label": "PubMed", "href": f"https://pubmed.ncbi.nlm.nih.gov/{unique}/"}
    ]
    missing = await gateway.get(f"{API}/papers/corpus:nothing-{unique}", headers=reader)
    assert missing.status_code == 404
    assert (await gateway.get(f"{API}/papers/corpus:{unique}")).status_code == 401


def test_an_outside_url_is_a_link_only_over_http() -> None:
    from research_gateway.papers import links_of

    assert links_of("openalex:W1", None, "javascript:alert(1)") == []
    assert links_of("corpus:12", None, "corpus:12") == []
    found = links_of("arxiv:2101.00001", None, "https://arxiv.org/abs/2101.00001")
    assert [link.model_dump() for link in found] == [
        {"label": "arXiv", "href": "https://arxiv.org/abs/2101.00001"}
    ]


async def test_the_audit_log_narrows_by_key_and_time(
    gateway: httpx.AsyncClient, sessions: Any
) -> None:
    admin = auth(await api_key(sessions, "admin"))
    _, key_id = await _key(sessions, "reader")
    since = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
    rows = (
        await gateway.get(
            f"{API}/audit", params={"key_id": str(key_id), "since": since}, headers=admin
        )
    ).json()
    assert rows and all(r["subject_ids"]["key_id"] == str(key_id) for r in rows)
    later = (datetime.now(UTC) + timedelta(minutes=5)).isoformat()
    none = await gateway.get(
        f"{API}/audit", params={"key_id": str(key_id), "since": later}, headers=admin
    )
    assert none.json() == []
    before = await gateway.get(
        f"{API}/audit", params={"key_id": str(key_id), "until": since}, headers=admin
    )
    assert before.json() == []
    for wrong in ("0.5", "2026-11-28", "2026-02-30T10:00:00Z"):  # a number, a day, no such day
        refused = await gateway.get(f"{API}/audit", params={"since": wrong}, headers=admin)
        assert refused.status_code == 422, wrong
    assert refused.json()["detail"][0]["loc"] == ["query", "since"]
    year_0 = {"until": "0000-01-01T00:00:00Z"}  # RFC 3339 has it, Python does not: before all
    assert (await gateway.get(f"{API}/audit", params=year_0, headers=admin)).json() == []
