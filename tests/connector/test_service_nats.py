"""The connector service end to end over real NATS request/reply: its FastStream app runs in this
process against the session's NATS and Postgres, and its sources call a real local HTTP server
that serves the recorded responses (and a 500 for one source)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote_plus

import pytest
from sqlalchemy import func, select

from research_connector.main import create_app
from research_connector.settings import ConnectorServiceSettings
from research_contracts import EvidenceFound, SearchEvidence, subjects
from research_ledger.tables import AuditEvent
from tests.agents.apps import running

pytestmark = pytest.mark.integration

ROUTES = {
    "/crossref/works": ("crossref/habanero_cassette_test_works_query__00.json", 200),
    "/europepmc/search": ("europepmc/fastpaper_europepmc_search.json", 200),
    "/arxiv/query": ("arxiv/arxivpy_q_testing_s0_m10_bc5a6c384fe9.body.atom.xml", 200),
    "/openalex/works": (None, 500),
}


REQUESTED: list[str] = []  # every request line the recorded API received, query string included


@pytest.fixture(scope="module")
def recorded_api(fixtures_dir: Path) -> Iterator[tuple[str, list[str]]]:
    """A local HTTP server answering like the real APIs did; yields its base URL and the paths hit."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            seen.append(path)
            REQUESTED.append(unquote_plus(self.path))
            name, status = ROUTES.get(path, (None, 404))
            body = (fixtures_dir / name).read_bytes() if name else b'{"error": "boom"}'
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
async def connector_service(servers, recorded_api):
    """The connector app (lifespan + broker) started once for this module."""
    base, _ = recorded_api
    with pytest.MonkeyPatch.context() as env:
        for name in ("crossref", "europepmc", "arxiv", "openalex"):
            env.setenv(f"CONNECTOR__{name.upper()}__BASE_URL", f"{base}/{name}")
            env.setenv(f"CONNECTOR__{name.upper()}__MAX_RETRIES", "0")
        env.setenv("CONNECTOR__ARXIV__RATE_PER_S", "100")
        env.setenv("CONNECTOR__CACHE_ENABLED", "false")
        app = create_app(
            ConnectorServiceSettings(
                nats_url=servers.nats_url, database_url=servers.database_url, _env_file=None
            )
        )
        async with running(app):
            yield app


async def _request(nc, subject: str, request: SearchEvidence) -> EvidenceFound:
    reply = await nc.request(subject, request.model_dump_json().encode(), timeout=30)
    return EvidenceFound.model_validate_json(reply.data)


async def test_search_fans_out_over_nats_and_survives_a_failing_source(
    connector_service, nc, sessions, recorded_api, unique
):
    async with sessions() as session:
        since = int(await session.scalar(select(func.coalesce(func.max(AuditEvent.id), 0))))
    found = await _request(
        nc,
        subjects.CONNECTOR_SEARCH,
        SearchEvidence(
            query=f"attention {unique}", sources=["crossref", "europepmc", "openalex"], limit=5
        ),
    )
    assert found.error is None
    assert found.degraded == {"openalex": "http_500"}
    # round-robin in the requested order: CrossRef's best, Europe PMC's best, CrossRef's second…
    assert [h.source for h in found.hits] == [
        "crossref",
        "europepmc",
        "crossref",
        "europepmc",
        "europepmc",
    ]
    assert found.hits[1].source_id == "pmid:41792208" and found.hits[0].source_id.startswith(
        "doi:10."
    )
    _, seen = recorded_api
    assert {"/crossref/works", "/europepmc/search", "/openalex/works"} <= set(seen)
    async with sessions() as session:
        rows = list(
            await session.scalars(
                select(AuditEvent).where(
                    AuditEvent.id > since, AuditEvent.action == "connector.degraded"
                )
            )
        )
    assert [(r.payload["source"], r.payload["reason"]) for r in rows] == [("openalex", "http_500")]


async def test_a_source_answers_on_its_own_subject(connector_service, nc, unique):
    found = await _request(
        nc,
        subjects.connector_source_subject("arxiv"),
        SearchEvidence(query=f"testing {unique}", sources=["ignored"], limit=3),
    )
    assert [h.source_id for h in found.hits] == [
        "arxiv:2202.12139",
        "arxiv:2405.13786",
        found.hits[2].source_id,
    ]
    assert all(h.source == "arxiv" for h in found.hits) and found.degraded == {}


async def test_identifiers_never_reach_a_source_over_nats(connector_service, nc, recorded_api):
    """A search request is parsed into `SearchEvidence`, which builds an outside query by the outbound
    allow-list: the SSN stays home whoever sent the raw JSON, and the scientific term still goes out."""
    REQUESTED.clear()
    raw = json.dumps({"query": "SSN 123-45-6789 statins", "sources": ["crossref"]}).encode()
    reply = await nc.request(subjects.CONNECTOR_SEARCH, raw, timeout=30)
    found = EvidenceFound.model_validate_json(reply.data)
    assert found.error is None and found.degraded.get("crossref") != "phi_refused"
    assert REQUESTED and all("123-45-6789" not in r and "SSN" not in r for r in REQUESTED)
    assert any("statins" in r for r in REQUESTED)


async def test_an_invalid_request_gets_an_error_reply(connector_service, nc):
    reply = await nc.request(
        subjects.CONNECTOR_SEARCH, json.dumps({"query": ""}).encode(), timeout=30
    )
    assert EvidenceFound.model_validate_json(reply.data).error.startswith("invalid search request")
    for body in (b"not json", b""):  # still a reply, never a timeout
        reply = await nc.request(subjects.connector_source_subject("corpus"), body, timeout=30)
        assert EvidenceFound.model_validate_json(reply.data).error.startswith(
            "invalid search request"
        )


async def test_corpus_tools_answer_a_refusal_or_their_defaults(connector_service, nc):
    """A corpus tool takes its parsed request: an invalid one is answered with `error` naming the
    tool, an empty body means every field at its default."""
    from research_contracts.corpus_tools import CorpusToolReply

    bad = CorpusToolReply.model_validate_json(
        (
            await nc.request(
                subjects.corpus_tool_subject("get_paper"), b'{"paper_ids": "corpus:1"}', timeout=30
            )
        ).data
    )
    assert (
        bad.tool == "get_paper"
        and bad.error.startswith("invalid get_paper request")
        and bad.result is None
    )
    overview = CorpusToolReply.model_validate_json(
        (await nc.request(subjects.corpus_tool_subject("corpus_overview"), b"", timeout=30)).data
    )
    assert (
        overview.error is None
        and overview.tool == "corpus_overview"
        and "papers" in json.dumps(overview.result)
    )


async def test_corpus_is_still_served_through_the_fan_out(
    connector_service, nc, sessions, tmp_path, unique
):
    from research_corpus.ingest import ingest_path

    doc_id = 900_000_000 + int(unique.removeprefix("u"), 16) % 99_999_999
    record = {
        "doc_id": doc_id,
        "title": f"Zebrafish fin regeneration after amputation {unique}",
        "abstract": [
            "Zebrafish regenerate amputated fins through a blastema.",
            "Regeneration completes in two weeks.",
        ],
        "structured": False,
    }
    (tmp_path / "one.jsonl").write_text(json.dumps(record) + "\n")
    await ingest_path(sessions, tmp_path / "one.jsonl", fmt="scifact", progress=False)
    found = await _request(
        nc,
        subjects.CONNECTOR_SEARCH,
        SearchEvidence(
            query=f"zebrafish fin regeneration {unique}", sources=["corpus", "openalex"], limit=3
        ),
    )
    assert found.error is None and found.degraded == {"openalex": "http_500"}
    assert found.hits[0].source_id == f"corpus:{doc_id}" and found.hits[0].source == "corpus"
