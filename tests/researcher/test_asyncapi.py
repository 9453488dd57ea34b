"""Publishing a task straight to the bus is a supported interface: FastStream's AsyncAPI
document describes every task subject with the RunResearch schema."""

from __future__ import annotations

import pytest
from faststream.specification import AsyncAPI

from research_contracts import RunResearch
from research_researcher.main import create_app
from research_researcher.settings import ResearcherServiceSettings

pytestmark = pytest.mark.unit


def _document() -> dict:
    app = create_app(
        ResearcherServiceSettings(
            nats_url="nats://127.0.0.1:1", database_url="postgresql://u@127.0.0.1:1/db"
        )
    )
    assert app.broker is not None
    return (
        AsyncAPI(app.broker, title="researcher", schema_version="3.0.0")
        .to_specification()
        .to_jsonable()
    )


def _resolve(document: dict, ref: str) -> dict:
    node: dict = document
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


@pytest.mark.parametrize(
    "subject", ["research.task.emergency", "research.task.priority", "research.task.batched"]
)
def test_every_task_subject_is_documented_with_the_run_research_schema(subject: str) -> None:
    document = _document()
    [(name, channel)] = [(k, c) for k, c in document["channels"].items() if c["address"] == subject]
    [message_ref] = channel["messages"].values()
    payload = _resolve(document, _resolve(document, message_ref["$ref"])["payload"]["$ref"])
    assert set(payload["properties"]) == set(RunResearch.model_fields)
    assert payload["required"] == ["question"]
    assert payload["additionalProperties"] is False
    tier = _resolve(document, payload["properties"]["tier"]["$ref"])
    assert tier["enum"] == ["emergency", "priority", "batched"]
    assert "RunResearch" in channel["description"]
    [operation] = [
        o for o in document["operations"].values() if o["channel"]["$ref"] == f"#/channels/{name}"
    ]
    assert operation["action"] == "receive"


def test_the_rerun_request_is_documented() -> None:
    document = _document()
    [channel] = [
        c for c in document["channels"].values() if c["address"] == "research.researcher.rerun"
    ]
    [message_ref] = channel["messages"].values()
    message = _resolve(document, message_ref["$ref"])
    payload = _resolve(document, message["payload"]["$ref"])
    assert {"claim_id", "question", "sources", "limit"} <= set(payload["properties"])
