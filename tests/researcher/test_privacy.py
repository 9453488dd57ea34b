"""No identifier leaves the process: every connector query and every LLM prompt the
researcher sends for a task full of PHI is captured on the real transports and searched."""

from __future__ import annotations

import json

import nats
import pytest
from pydantic import SecretStr

from research_contracts import RunResearch, Tier
from research_platform.settings import LLMSettings
from tests.researcher.conftest import audit_rows, publish_task, wait_for_claims
from tests.researcher.fakes import EVIDENCE, FakeConnector, FakeOpenAI, Reply

pytestmark = pytest.mark.integration

QUESTION = (
    "Does denosumab reduce vertebral fractures for patient Margaret Whitfield (born 03/14/1956, MRN: 48213377, "
    "phone 617-555-0142, margaret.whitfield@example.com, 42 Elm Street, Springfield, MA 01103)?"
)
PATIENT_REF = (
    "Mrs. Margaret Whitfield, seen on March 3, 2024 by Dr. Alvarez; MRN 48213377; call (617) 555-0142 or "
    "email mwhit@example.org; lives at 42 Elm Street, Springfield, MA 01103. 72-year-old woman with osteoporosis."
)
PHI = [
    "Margaret",
    "Whitfield",
    "Alvarez",
    "03/14/1956",
    "March 3, 2024",
    "48213377",
    "617-555-0142",
    "555-0142",
    "(617) 555-0142",
    "margaret.whitfield@example.com",
    "mwhit@example.org",
    "42 Elm Street",
    "Elm Street",
    "01103",
]
GOOD_QUOTE = "Denosumab reduced the risk of new radiographic vertebral fractures by 68% in postmenopausal women with osteoporosis."


def draft(*supports: dict) -> str:
    return json.dumps(
        {
            "statement": "Denosumab reduces vertebral fractures in postmenopausal women with osteoporosis.",
            "entity": "denosumab",
            "confidence": 0.8,
            "supports": list(supports),
        }
    )


def leaked(texts: list[str]) -> list[str]:
    return [value for value in PHI for text in texts if value.lower() in text.lower()]


async def test_no_identifier_reaches_a_connector_or_the_remote_llm(
    start_researcher,
    connector: FakeConnector,
    openai_server: FakeOpenAI,
    nc: nats.NATS,
    sessions,
    unique: str,
) -> None:
    openai_server.queue(
        Reply(
            text=draft(
                {"source_id": EVIDENCE[0].source_id, "quote": GOOD_QUOTE, "locator": "sentence 1"},
                {
                    "source_id": "pmid:does-not-exist",
                    "quote": GOOD_QUOTE,
                    "locator": None,
                },  # unknown source
                {
                    "source_id": EVIDENCE[1].source_id,
                    "quote": "Denosumab halved mortality.",
                    "locator": None,
                },  # not in text
            )
        )
    )
    llm = LLMSettings(
        provider="openai",
        openai_api_key=SecretStr("sk-test"),
        openai_base_url=openai_server.base_url,
        openai_model="gpt-test",
        timeout_s=5.0,
    )
    task = RunResearch.model_validate(  # `patient_ref` is read by a validator, not a field
        {
            "question": QUESTION,
            "patient_ref": PATIENT_REF,
            "entity": f"denosumab {unique}",
            "tier": Tier.priority,
        }
    )

    async with start_researcher(llm=llm):
        await publish_task(nc, task)
        [claim] = await wait_for_claims(sessions, [task.task_id])

    # every outbound request was captured, and none carries an identifier
    assert connector.raw and openai_server.bodies
    connector_texts = [body.decode() for body in connector.raw] + [
        r.query for r in connector.requests
    ]
    prompts = openai_server.prompts()
    assert leaked(connector_texts) == []
    assert leaked(prompts + [body.decode() for body in openai_server.bodies]) == []
    # ...while the scientific topic and the clinical context did get through
    assert all(
        "denosumab" in r.query.lower() and "fracture" in r.query.lower() for r in connector.requests
    )
    user_prompt = next(p for p in prompts if "Research question" in p)
    assert (
        "osteoporosis" in user_prompt
        and "[NAME_1]" in user_prompt
        and "<<<CLINICAL_DATA>>>" in user_prompt
    )

    # the remote answer was used, recorded with provider + model, and its bad supports were dropped
    assert claim.model == "openai:gpt-test"
    assert [s["source_id"] for s in claim.supports] == [EVIDENCE[0].source_id]
    assert claim.dropped_supports == 2
    [proposed] = await audit_rows(sessions, task.task_id, "research.claim.proposed")
    assert proposed.payload["provider"] == "openai" and proposed.payload["llm_model"] == "gpt-test"
    assert (
        proposed.payload["dropped_unknown_source"] == 1
        and proposed.payload["dropped_quote_not_found"] == 1
    )
    assert {"NAME", "DATE", "MRN", "PHONE", "EMAIL", "ADDRESS"} <= set(
        proposed.payload["deidentified"]
    )
    assert leaked([claim.statement, json.dumps(claim.supports), claim.entity]) == []
