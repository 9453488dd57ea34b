"""The API documents in docs/ are what the code generates now (`task docs:export` rewrites them):
the gateway's OpenAPI and each service's AsyncAPI (subjects, operations, payload schemas)."""

from __future__ import annotations

import json

import pytest

from research_contracts import subjects
from research_engine import docs_export
from research_runs import RUN_EVENTS_ADDRESS

pytestmark = pytest.mark.unit


@pytest.fixture(scope="module")
def documents() -> dict:
    return docs_export.documents()


def test_exported_documents_are_current(documents: dict) -> None:
    outdated = [str(p.relative_to(docs_export.REPO)) for p in docs_export.stale(documents)]
    assert not outdated, f"stale API documents, run `.venv/bin/task docs:export`: {outdated}"


def test_generation_is_stable(documents: dict) -> None:
    assert (
        docs_export.documents() == documents
    )  # no ids, times or ordering that change between runs


def test_documents_describe_the_routes_and_subjects(documents: dict) -> None:
    paths = json.loads(documents[docs_export.DOCS / "openapi.json"])["paths"]
    assert {
        "/api/research/v1/tasks",
        "/api/research/v1/claims",
        "/api/research/v1/runs/{run_id}/events",
    } <= set(paths)
    assert {p.stem for p in documents if p.parent.name == "asyncapi"} == set(docs_export.services())
    researcher = json.loads(documents[docs_export.DOCS / "asyncapi" / "researcher.json"])
    addresses = {channel["address"] for channel in researcher["channels"].values()}
    assert {
        subjects.task_subject(tier) for tier in ("emergency", "priority", "batched")
    } <= addresses
    assert any("RunResearch" in name for name in researcher["components"]["schemas"])


def sends(document: str) -> dict[str, str]:
    """The subjects a service's AsyncAPI says it publishes, each with its payload schema's name."""
    spec = json.loads(document)
    found = {}
    for operation in spec["operations"].values():
        if operation["action"] != "send":
            continue
        channel = spec["channels"][operation["channel"]["$ref"].rsplit("/", 1)[1]]
        message = spec["components"]["messages"][
            next(iter(channel["messages"].values()))["$ref"].rsplit("/", 1)[1]
        ]
        found[channel["address"]] = message["payload"]["$ref"].rsplit("/", 1)[1]
    return found


def test_the_replicator_documents_what_it_publishes_with_the_payload(documents: dict) -> None:
    document = documents[docs_export.DOCS / "asyncapi" / "replicator.json"]
    sent = sends(document)
    assert RUN_EVENTS_ADDRESS in sent  # the STALE events a retraction sends to each report's run
    assert {s: p for s, p in sent.items() if s != RUN_EVENTS_ADDRESS} == {
        subjects.CLAIM_RECRITIQUE: "RecritiqueClaim",
        subjects.VERIFY_REQUESTED: "RequestVerification",
        subjects.SOURCE_RETRACTED: "SourcesRetracted",
    }
    schemas = json.loads(document)["components"]["schemas"]
    assert {"source_ids", "origin", "notice"} <= set(schemas["SourcesRetracted"]["properties"])
    assert {"claim_id", "reason", "finding_id"} <= set(schemas["RecritiqueClaim"]["properties"])
    assert all(
        field.get("description") for field in schemas["RecritiqueClaim"]["properties"].values()
    )


def test_the_agents_operator_verbs_document_the_control_request(documents: dict) -> None:
    for agent in ("correlator", "librarian", "replicator", "scout"):
        spec = json.loads(documents[docs_export.DOCS / "asyncapi" / f"{agent}.json"])
        payloads = {
            name: message["payload"].get("$ref", "")
            for name, message in spec["components"]["messages"].items()
            if name.startswith(f"{agent}.control.")
        }
        assert len(payloads) == 5 and all(
            ref.endswith("/ControlRequest") for ref in payloads.values()
        ), (agent, payloads)


def test_each_mode_documents_its_completion_event_and_its_run_events(documents: dict) -> None:
    """Every mode publishes through declared publishers: its completion event with the payload
    schema, and the run events its recorder sends (`research.run.{run_id}.event`)."""
    completions = {
        "reviewer": (subjects.REVIEW_COMPLETED, "ReviewCompleted"),
        "verifier": (subjects.VERIFICATION_CHANGED, "VerificationChanged"),
        "scout": (subjects.SOURCELIST_UPDATED, "SourceListUpdated"),
    }
    for mode, (subject, schema) in completions.items():
        sent = sends(documents[docs_export.DOCS / "asyncapi" / f"{mode}.json"])
        assert sent[subject] == schema, (mode, sent)
        assert RUN_EVENTS_ADDRESS in sent, (mode, sent)
    reviewer = json.loads(documents[docs_export.DOCS / "asyncapi" / "reviewer.json"])
    completed = reviewer["components"]["schemas"]["ReviewCompleted"]
    assert {"review_id", "run_id", "version", "verdict", "claims"} <= set(completed["required"])
