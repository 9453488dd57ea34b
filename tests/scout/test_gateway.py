"""The source-list routes on real NATS + Postgres: bad input → 422; a schedule beyond the
workspace's limits → 409 naming the limit; admin limits (admin only) clamp a request silently
and the 202 shows the clamped values; the command lands on `research.sourcelist.requested`;
once the scout built it: the SourceList, per-source remove / prefer (the flag shown on each source,
kept on re-runs), exports, a re-run with the stored request, run history with each run's diff,
schedule verbs and the save_to filter."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from bench.harness.servers import Servers
from research_contracts.sourcelists import SourceList
from research_gateway.main import create_app
from research_ledger import UnitOfWork
from research_platform.settings import Settings
from tests.keys import bind_workspaces
from tests.scout.conftest import fake_connector, sent_request
from tests.scout.hits import VITAMIN_D, paper

pytestmark = pytest.mark.integration
API = "/api/research/v1"
PROMPT = "Does vitamin D supplementation reduce fracture risk in older adults?"
REVISITED = paper(
    70,
    "Vitamin D supplementation and fracture risk in older adults revisited",
    "Vitamin D supplementation reduced fracture risk in older adults.",
)


@pytest.fixture(scope="module")
async def gateway(servers: Servers) -> AsyncIterator[httpx.AsyncClient]:
    app: FastAPI = create_app(
        Settings(nats_url=servers.nats_url, database_url=servers.database_url)
    )
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://localhost", timeout=30
        ) as client,
    ):
        yield client


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"prompt": ""},
        {"prompt": PROMPT, "num_references": 0},
        {"prompt": PROMPT, "num_references": 10000},
        {"prompt": PROMPT, "date_from": "2022-01-01", "date_to": "2021-01-01"},
        {"prompt": PROMPT, "source_type": "books"},
        {"prompt": PROMPT, "detail_level": "everything"},
        {"prompt": PROMPT, "update_frequency": "daily"},
        {"prompt": PROMPT, "language": "not a tag!"},
    ],
)
async def test_bad_input_is_422(gateway, api_keys, body):
    response = await gateway.post(f"{API}/source-lists", json=body, headers=api_keys["researcher"])
    assert response.status_code == 422, response.text


async def test_schedules_beyond_the_limits_are_409_naming_the_limit(
    gateway, api_keys, sessions, unique
):
    workspace = f"ws-{unique}"
    await bind_workspaces(sessions, api_keys["researcher"], workspace)
    limits = {"max_scheduled_lists": 0, "min_update_interval_s": 86400}
    assert (
        await gateway.put(
            f"{API}/source-lists/limits/{workspace}", json=limits, headers=api_keys["researcher"]
        )
    ).status_code == 403
    assert (
        await gateway.put(
            f"{API}/source-lists/limits/{workspace}", json=limits, headers=api_keys["admin"]
        )
    ).status_code == 200
    short = await gateway.post(
        f"{API}/source-lists",
        headers=api_keys["researcher"],
        json={"prompt": PROMPT, "workspace": workspace, "update_frequency": "PT12H"},
    )
    assert short.status_code == 409 and "min_update_interval_s" in short.text
    full = await gateway.post(
        f"{API}/source-lists",
        headers=api_keys["researcher"],
        json={"prompt": PROMPT, "workspace": workspace, "update_frequency": "P1D"},
    )
    assert full.status_code == 409 and "max_scheduled_lists" in full.text


async def test_a_source_list_from_request_to_export(
    gateway, api_keys, nc, scout_factory, sessions, unique
):
    workspace = f"ws-{unique}"
    await bind_workspaces(sessions, api_keys["researcher"], workspace)
    limits = {
        "max_references": 3,
        "detail_level_ceiling": "citation_extract",
        "allowed_source_types": ["academic"],
        "allowed_apis": ["pubmed", "corpus"],
    }
    assert (
        await gateway.put(
            f"{API}/source-lists/limits/{workspace}", json=limits, headers=api_keys["admin"]
        )
    ).status_code == 200
    shown = (
        await gateway.get(f"{API}/source-lists/limits/{workspace}", headers=api_keys["admin"])
    ).json()
    assert shown["max_references"] == 3 and shown["min_update_interval_s"] == 86400
    save_to = {"kind": "item", "id": f"item-{unique}"}
    accepted = await gateway.post(
        f"{API}/source-lists",
        headers=api_keys["researcher"],
        json={
            "prompt": PROMPT,
            "workspace": workspace,
            "num_references": 40,
            "detail_level": "facts_list",
            "source_type": "news",
            "update_frequency": "P1D",
            "save_to": save_to,
        },
    )
    assert accepted.status_code == 202, accepted.text
    body = accepted.json()
    list_id, run_id = body["source_list_id"], body["run_id"]
    clamped = body["request"]
    assert (clamped["num_references"], clamped["detail_level"], clamped["source_type"]) == (
        3,
        "citation_extract",
        "academic",
    )
    assert (
        await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])
    ).status_code == 409  # not built yet

    command = await sent_request(nc, list_id)
    assert command.num_references == 3
    async with fake_connector(nc, f"test.connector.{unique}") as connector:
        connector.hits = [
            *VITAMIN_D,
            REVISITED,
        ]  # three on the prompt (meta-analysis, nursing homes, revisited)
        scout = scout_factory(connector.subject)
        assert (await scout.handle(command)).version == 1
        assert connector.asked[0].sources == ["pubmed", "corpus"]

        got = await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])
        assert got.status_code == 200
        source_list = SourceList.model_validate(got.json())
        assert set(got.json()) == {
            "run_id",
            "prompt",
            "keywords",
            "source_type",
            "detail_level",
            "generated_at",
            "next_run_at",
            "sources",
            "note",
        }
        assert got.json()["note"] is None, "a list with sources needs no note"
        assert source_list.keywords[0] == "vitamin D" and source_list.next_run_at is not None
        assert all(
            set(s)
            == {
                "source_id",
                "title",
                "authors",
                "publication",
                "date",
                "doi",
                "url",
                "relevance_score",
                "summary",
                "extract",
                "facts",
                "preferred",
                "origin_id",
            }
            for s in got.json()["sources"]
        )
        assert not any(s["preferred"] for s in got.json()["sources"])
        first, second = source_list.sources[0], source_list.sources[1]

        url = f"{API}/source-lists/{list_id}/sources"
        assert (
            await gateway.post(
                f"{url}/{first.source_id}", json={"action": "remove"}, headers=api_keys["reader"]
            )
        ).status_code == 403
        assert (
            await gateway.post(
                f"{url}/{first.source_id}",
                json={"action": "remove"},
                headers=api_keys["researcher"],
            )
        ).status_code == 200
        assert (
            await gateway.post(
                f"{url}/{second.source_id}",
                json={"action": "prefer"},
                headers=api_keys["researcher"],
            )
        ).status_code == 200
        assert (
            await gateway.post(
                f"{url}/{uuid.uuid4()}", json={"action": "prefer"}, headers=api_keys["researcher"]
            )
        ).status_code == 404
        third = source_list.sources[2]
        assert (
            await gateway.post(
                f"{url}/{third.source_id}",
                json={"action": "prefer"},
                headers=api_keys["researcher"],
            )
        ).status_code == 200
        assert (
            await gateway.post(
                f"{url}/{third.source_id}",
                json={"action": "unprefer"},
                headers=api_keys["researcher"],
            )
        ).status_code == 200
        shown = (
            await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])
        ).json()
        after = SourceList.model_validate(shown)
        assert first.source_id not in {s.source_id for s in after.sources}
        assert {s["source_id"] for s in shown["sources"] if s["preferred"]} == {
            str(second.source_id)
        }  # flagged, unflagged

        exports = {}
        for fmt in ("md", "bib", "ris", "csljson"):
            response = await gateway.get(
                f"{API}/source-lists/{list_id}/export",
                params={"format": fmt},
                headers=api_keys["reader"],
            )
            assert response.status_code == 200
            exports[fmt] = response.text
        assert second.title in exports["md"] and first.title not in exports["md"]
        assert "@" in exports["bib"] and "TY  -" in exports["ris"]
        assert {item["title"] for item in json.loads(exports["csljson"])} == {
            s.title for s in after.sources
        }
        bad = await gateway.get(
            f"{API}/source-lists/{list_id}/export",
            params={"format": "docx"},
            headers=api_keys["reader"],
        )
        assert bad.status_code == 422

        connector.hits = [VITAMIN_D[0], VITAMIN_D[3]]  # the preferred source is no longer found
        runs_url = f"{API}/source-lists/{list_id}/runs"
        assert (await gateway.post(runs_url, headers=api_keys["reader"])).status_code == 403
        assert (
            await gateway.post(
                f"{API}/source-lists/{uuid.uuid4()}/runs", headers=api_keys["researcher"]
            )
        ).status_code == 404
        again_accepted = await gateway.post(runs_url, headers=api_keys["researcher"])
        assert again_accepted.status_code == 202, again_accepted.text
        assert (
            await gateway.post(runs_url, headers=api_keys["researcher"])
        ).status_code == 409  # that run is under way
        rerun = await sent_request(nc, list_id, again_accepted.json()["run_id"])
        assert rerun.trigger == "rerun"
        assert rerun.model_dump(exclude={"run_id", "trigger"}) == command.model_dump(
            exclude={"run_id", "trigger"}
        )  # the stored request
        assert (await scout.handle(rerun)).version == 2
        again = SourceList.model_validate(
            (await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])).json()
        )
        ids = [s.source_id for s in again.sources]
        assert (
            ids[0] == second.source_id and first.source_id not in ids
        )  # preferred kept (first), removed stays out

    history = (
        await gateway.get(f"{API}/source-lists/{list_id}/runs", headers=api_keys["reader"])
    ).json()
    statuses = [r["status"] for r in history["runs"]]
    assert statuses == ["scheduled", "completed", "completed"]
    assert history["runs"][1]["iterations"][0]["query"].startswith("vitamin D")
    assert history["request"]["prompt"] == PROMPT and history["request"]["num_references"] == 3
    rerun_entry, first_entry = history["runs"][1], history["runs"][2]
    assert rerun_entry["trigger"] == "rerun" and first_entry["diff"]["previous_run_id"] is None
    assert (
        len(first_entry["diff"]["new"]) == first_entry["sources"]
    )  # everything is new in the first snapshot
    assert rerun_entry["diff"]["previous_run_id"] == run_id
    dropped = {c["source_id"] for c in rerun_entry["diff"]["dropped"]}
    assert (
        dropped and str(second.source_id) not in dropped
    )  # sources no longer found dropped; the preferred one kept

    schedule_url = f"{API}/source-lists/{list_id}/schedule"
    assert (
        await gateway.patch(schedule_url, json={"action": "pause"}, headers=api_keys["researcher"])
    ).status_code == 403
    paused = await gateway.patch(schedule_url, json={"action": "pause"}, headers=api_keys["admin"])
    assert paused.json()["schedule"]["status"] == "paused"
    assert (
        await gateway.patch(
            schedule_url,
            json={"action": "modify", "update_frequency": "PT1H"},
            headers=api_keys["admin"],
        )
    ).status_code == 409
    modified = await gateway.patch(
        schedule_url,
        json={"action": "modify", "update_frequency": "P7D"},
        headers=api_keys["admin"],
    )
    assert modified.json()["schedule"]["update_frequency"] == "P7D"
    assert (
        await gateway.patch(schedule_url, json={"action": "resume"}, headers=api_keys["admin"])
    ).json()["schedule"]["status"] == "active"
    assert (
        await gateway.patch(schedule_url, json={"action": "cancel"}, headers=api_keys["admin"])
    ).json()["schedule"]["status"] == "cancelled"
    assert (
        await gateway.patch(schedule_url, json={"action": "resume"}, headers=api_keys["admin"])
    ).status_code == 404

    listed = (
        await gateway.get(
            f"{API}/source-lists",
            params={"save_to_kind": "item", "save_to_id": save_to["id"]},
            headers=api_keys["reader"],
        )
    ).json()
    assert [entry["source_list_id"] for entry in listed] == [list_id] and listed[0][
        "save_to"
    ] == save_to
    assert (
        await gateway.get(f"{API}/source-lists/{uuid.uuid4()}", headers=api_keys["reader"])
    ).status_code == 404


async def test_an_empty_list_says_why_through_the_api_and_its_export(
    gateway, api_keys, nc, scout_factory, sessions, unique
):
    workspace = f"ws-{unique}"
    await bind_workspaces(sessions, api_keys["researcher"], workspace)
    limits = {"allowed_apis": ["corpus"]}
    assert (
        await gateway.put(
            f"{API}/source-lists/limits/{workspace}", json=limits, headers=api_keys["admin"]
        )
    ).status_code == 200
    accepted = await gateway.post(
        f"{API}/source-lists",
        headers=api_keys["researcher"],
        json={"prompt": PROMPT, "workspace": workspace, "detail_level": "facts_list"},
    )
    list_id = accepted.json()["source_list_id"]
    command = await sent_request(nc, list_id)
    async with fake_connector(
        nc, f"test.connector.{unique}"
    ) as connector:  # the corpus holds nothing on it
        assert (await scout_factory(connector.subject).handle(command)).version == 1
    shown = (await gateway.get(f"{API}/source-lists/{list_id}", headers=api_keys["reader"])).json()
    assert shown["sources"] == []
    assert shown["note"] == (
        "No source was judged on the prompt. Searched corpus with 2 queries "
        "('vitamin D supplementation fracture risk older adults'; 'vitamin D'); read 0 papers."
    )
    markdown = (
        await gateway.get(
            f"{API}/source-lists/{list_id}/export",
            params={"format": "md"},
            headers=api_keys["reader"],
        )
    ).text
    assert shown["note"] in markdown


async def test_a_rerun_of_a_list_without_a_stored_request_is_409(
    gateway, api_keys, sessions, unique
):
    list_id = uuid.uuid4()
    async with sessions() as session, session.begin():
        ledger = UnitOfWork(session, service="test")
        await ledger.reports.open(
            list_id, kind="source_list", run_id=f"sl-{unique}", subject=PROMPT, subject_key=PROMPT
        )
        await ledger.reports.fail(list_id, "test: the run never finished")
    response = await gateway.post(
        f"{API}/source-lists/{list_id}/runs", headers=api_keys["admin"]
    )  # nobody owns it
    assert response.status_code == 409 and "no stored request" in response.text
    async with sessions() as session:
        assert (
            await UnitOfWork(session, service="test").reports.get(list_id)
        ).status == "failed"  # left as it was
