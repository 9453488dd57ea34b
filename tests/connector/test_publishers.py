"""Publisher sources: the configurable bearer-key JSON client, Elsevier's Search API answer shape,
Cochrane's review-type counts; and the transport's reading of `Retry-After`.

The payloads here are written for the test in the shapes the publishers document (no recorded
responses of these licensed APIs exist in ../shared/fixtures)."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
from pydantic import SecretStr

from research_connector.fanout import search_all
from research_connector.incidents import Incidents
from research_connector.settings import ConnectorSettings
from research_connector.sources.base import SourceAnswer
from research_connector.sources.elsevier import parse_search
from research_connector.transport import retry_after_seconds
from research_contracts import SourceHit, TaskFilters

pytestmark = pytest.mark.unit


def test_retry_after_accepts_seconds_and_http_dates() -> None:
    assert retry_after_seconds("7") == 7.0
    now = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
    assert retry_after_seconds("Thu, 01 Jan 2026 12:00:30 GMT", now=now) == 30.0
    assert retry_after_seconds("soon") is None and retry_after_seconds(None) is None


async def test_publisher_client_sends_the_bearer_key_and_maps_fields(
    make_sources, fake_api, unique
) -> None:
    settings = ConnectorSettings()
    settings.wiley.base_url = "https://tdm.wiley.example/api"
    settings.wiley.api_key = SecretStr("wiley-key-42")
    seen: list[httpx.Request] = []

    def wiley(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(
            200,
            json={
                "results": [
                    {
                        "id": "10.1002/JOR.12345",
                        "title": "Tendon healing <i>in vivo</i>",
                        "authors": [{"name": "A. Author"}],
                        "date": "2021-04-02",
                        "doi": "10.1002/JOR.12345",
                        "journal": "Journal of Orthopaedic Research",
                        "url": "https://onlinelibrary.wiley.com/doi/10.1002/jor.12345",
                        "abstract": "Abstract text.",
                    }
                ]
            },
        )

    fake_api.routes["tdm.wiley.example"] = wiley
    (hit,) = await make_sources(settings)["wiley"].search(
        f"tendon {unique}", TaskFilters(year_from=2020), 5
    )
    assert seen[0].headers["Authorization"] == "Bearer wiley-key-42"
    assert seen[0].url.params.get_list("journal") == settings.wiley.journals
    assert hit.source_id == "doi:10.1002/jor.12345" and hit.title == "Tendon healing in vivo"
    assert (
        hit.year == 2021
        and hit.authors == ["A. Author"]
        and hit.venue == "Journal of Orthopaedic Research"
    )


async def test_publisher_answer_in_another_shape_is_malformed(
    make_sources, fake_api, unique
) -> None:
    settings = ConnectorSettings()
    settings.nejm.base_url = "https://api.nejm.example"
    settings.nejm.api_key = SecretStr("nejm-key")
    fake_api.routes["api.nejm.example"] = lambda request: httpx.Response(200, json={"items": []})
    answer = await make_sources(settings)["nejm"].lookup(f"heart failure {unique}")
    assert answer.degraded == "malformed_payload"


def test_elsevier_entries_and_the_empty_set_marker() -> None:
    payload = {
        "search-results": {
            "opensearch:totalResults": "1",
            "entry": [
                {
                    "dc:identifier": "DOI:10.1016/j.spinee.2020.01.001",
                    "prism:doi": "10.1016/j.spinee.2020.01.001",
                    "dc:title": "Lumbar fusion outcomes",
                    "prism:publicationName": "The Spine Journal",
                    "prism:coverDate": [{"$": "2020-05-01"}],
                    "pii": "S1529943020300012",
                    "authors": {"author": [{"$": "Jane Roe"}, {"$": "John Poe"}]},
                    "link": [
                        {
                            "@ref": "scidir",
                            "@href": "https://www.sciencedirect.com/science/article/pii/S1529943020300012",
                        }
                    ],
                }
            ],
        }
    }
    (hit,) = parse_search(payload)
    assert hit.source_id == "doi:10.1016/j.spinee.2020.01.001" and hit.year == 2020
    assert hit.authors == ["Jane Roe", "John Poe"] and hit.venue == "The Spine Journal"
    assert hit.url and hit.url.endswith("S1529943020300012")
    empty = {
        "search-results": {
            "opensearch:totalResults": "0",
            "entry": [{"@_fa": "true", "error": "Result set was empty"}],
        }
    }
    assert parse_search(empty) == []


async def test_elsevier_key_goes_in_its_header_never_the_url(
    make_sources, fake_api, unique
) -> None:
    settings = ConnectorSettings()
    settings.elsevier.api_key = SecretStr("els-key-9")
    seen: list[httpx.Request] = []

    def elsevier(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"search-results": {"entry": []}})

    fake_api.routes["api.elsevier.com"] = elsevier
    answer = await make_sources(settings)["elsevier"].lookup(f"arthroplasty {unique}")
    assert answer.degraded is None and answer.hits == []
    assert seen[0].headers["X-ELS-APIKey"] == "els-key-9" and "els-key-9" not in str(seen[0].url)
    assert 'SRCTITLE("Acta Biomaterialia")' in seen[0].url.params["query"]


async def test_cochrane_counts_review_types(make_sources, fake_api, unique) -> None:
    settings = ConnectorSettings()
    settings.cochrane.base_url = "https://api.cochrane.example"
    settings.cochrane.api_key = SecretStr("cochrane-key")
    reviews = [
        {
            "doi": f"10.1002/14651858.CD00{i}",
            "title": f"Review {i} of something clinical",
            "review_type": kind,
        }
        for i, kind in enumerate(["Intervention", "Intervention", "Diagnostic", None])
    ]
    fake_api.routes["api.cochrane.example"] = lambda request: httpx.Response(
        200, json={"results": reviews}
    )
    found = await search_all(
        ["cochrane"],
        f"asthma {unique}",
        None,
        10,
        5.0,
        registry=make_sources(settings),
        incidents=Incidents(),
    )
    assert len(found.hits) == 4 and found.hits[0].metadata["review_type"] == "Intervention"
    assert found.facets == {
        "cochrane": {"review_type": {"diagnostic": 1, "intervention": 2, "unknown": 1}}
    }


class LocalOnly:
    """A source that never sends the query anywhere (like `corpus`)."""

    name = "local"
    leaves_process = False

    async def lookup(self, query: str, filters=None, limit: int = 10) -> SourceAnswer:
        return SourceAnswer(
            "local", hits=[SourceHit(source_id="corpus:1", source="local", title="A local passage")]
        )


async def test_identifiers_stay_in_process_but_local_sources_still_answer(
    make_sources, fake_api
) -> None:
    registry = {**make_sources(), "local": LocalOnly()}
    found = await search_all(
        ["local", "crossref"],
        "Mrs. Alvarez lupus nephritis",
        None,
        5,
        5.0,
        registry=registry,
        incidents=Incidents(),
    )
    assert found.error is None and [h.source_id for h in found.hits] == ["corpus:1"]
    assert found.degraded == {"crossref": "phi_refused"} and fake_api.requests == []
