"""The HTTP edge refuses text Postgres / JSON cannot hold with 422 (never a 500), answers 405
with the path's real `Allow`, and documents the statuses it sends. Real NATS + Postgres behind."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from research_contracts.sourcelists import UPDATE_FREQUENCY_PATTERN
from research_gateway.main import create_app
from research_gateway.storable import UNSTORABLE, storable_text
from research_platform.settings import Settings
from tests.security.conftest import Gateway

API = "/api/research/v1"
UNSTORABLE_SAMPLES = [
    "nul \x00 here",
    "lone \ud800 surrogate",
    "bell \x07",
    "escape \x1b[31m",
    "c1 \x85",
    "del \x7f",
]


@pytest.mark.unit
def test_the_validator_names_what_cannot_be_stored() -> None:
    for sample in UNSTORABLE_SAMPLES:
        with pytest.raises(ValueError, match="cannot be stored"):
            storable_text(sample)
    for fine in [
        "Does vitamin D help?",
        "tab\tnew\nline\r",
        "Ünïcödé — 维生素D 😀",
        "\u2028 \ufeff",
    ]:
        assert storable_text(fine) == fine
    assert UNSTORABLE.pattern.startswith("[\x00")


@pytest.mark.unit
def test_every_body_operation_documents_400_and_422() -> None:
    paths = create_app(
        Settings(nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x")
    ).openapi()["paths"]
    for path, item in paths.items():
        for method, operation in item.items():
            if "requestBody" in operation:
                assert {"400", "422"} <= set(operation["responses"]), (method, path)


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "pattern" and isinstance(v, str)] + [
            p for v in node.values() for p in _patterns(v)
        ]
    return [p for v in node for p in _patterns(v)] if isinstance(node, list) else []


@pytest.mark.unit
def test_every_published_pattern_is_one_a_fuzzer_can_generate_from() -> None:
    """No lookaround in the document: JSON Schema's recommended regex subset has none, and
    schemathesis can only filter for one (its coverage phase ran for minutes on a topic pattern
    with a lookahead, and its fuzzing phase gave up: "too many examples filtered out")."""
    document = create_app(
        Settings(nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x")
    ).openapi()
    # The one exception: the re-run period (an ISO duration with some digit not 0) is short and
    # anchored, generated from in milliseconds; written without lookahead it would be unreadable.
    patterns = set(_patterns(document)) - {UPDATE_FREQUENCY_PATTERN}
    assert len(patterns) >= 5, "the document states its patterns"
    assert [p for p in patterns if "(?=" in p or "(?!" in p or "(?<" in p] == []


@pytest.mark.unit
def test_published_patterns_mean_the_same_to_ecma_262_and_to_python() -> None:
    """`\\s` and `\\d` name different characters to ECMA-262 (JSON Schema, a fuzzer) and to Python (the
    validators): a topic that was schema-valid ("G", blanks, U+D3C94, a space, U+001C) was refused,
    U+001C being whitespace to Python only. Published patterns spell those classes out."""
    document = create_app(
        Settings(nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x")
    ).openapi()
    shorthand = re.compile(r"(?<!\\)\\[sSdD]")
    # Idioms left: `[\s\S]` is any character to both; a letter `[^\W\d_]` or letter-or-digit `[^\W_]` is
    # ASCII to ECMA-262 and Unicode to Python, so what the schema admits the validator accepts too.
    idioms = re.compile(r"\[\\s\\S\]|\[\^\\W\\d_\]|\[\^\\W_\]")
    assert [p for p in _patterns(document) if shorthand.search(idioms.sub("", p))] == []
    topic = document["components"]["schemas"]["ReviewRequest"]["properties"]["topic"]["pattern"]
    assert (
        re.search(topic, "G\r\x0b\n\f\t\t\U000d3c94\n\n \x0b \x1c") is None
    )  # two non-blank characters only


@pytest.mark.unit
@pytest.mark.parametrize(
    "text",
    [
        "abc",
        "  a b c ",
        "ab",
        "a  b",
        "000",
        "1a2",
        "_ _ _",
        "? ! x",
        "é..",
        "..語",
        "x\x01yz",
        "ab\x85c",
        "\ta\n\tbc",
        "a\x1cb\x1f",
        "a\ufeffbc",
        "\u3000ab\u3000c",
    ],
)
def test_a_published_wording_pattern_admits_exactly_what_its_validator_accepts(text: str) -> None:
    from pydantic import ValidationError

    from research_contracts.reviews import ReviewRequest
    from research_contracts.verifications import RequestVerification
    from research_gateway.verifications import CLAIM_SCHEMA_PATTERN

    def accepted(model: type, **fields: str) -> bool:
        try:
            model(**fields)
        except ValidationError:
            return False
        return True

    document = create_app(
        Settings(nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x")
    ).openapi()
    topic = document["components"]["schemas"]["ReviewRequest"]["properties"]["topic"]["pattern"]
    claim = document["components"]["schemas"]["VerificationRequest"]["properties"]["claim"][
        "pattern"
    ]
    assert claim == CLAIM_SCHEMA_PATTERN
    assert (re.search(topic, text) is not None) == accepted(ReviewRequest, topic=text)
    storable = (
        UNSTORABLE.search(text) is None
    )  # the route's claim: storable (the edge), then worded
    assert (re.search(claim, text) is not None) == (
        storable and accepted(RequestVerification, claim=text)
    )


@pytest.mark.integration
async def test_unstorable_text_is_422_at_the_edge(
    gateway: Gateway, api_keys: dict[str, dict[str, str]]
) -> None:
    headers = {**api_keys["researcher"], "content-type": "application/json"}
    async with gateway() as (_, client):
        for sample in UNSTORABLE_SAMPLES:
            for body in (
                {"question": f"Does {sample} help?"},
                {"question": "Does it help?", "entity": sample},
                {"question": "Does it help?", "patient_ref": sample},
                {"question": "Does it help?", "filters": {"sources": [sample]}},
            ):
                # json.dumps escapes a lone surrogate as \ud800, exactly what a broken client sends
                reply = await client.post(f"{API}/tasks", content=json.dumps(body), headers=headers)
                assert reply.status_code == 422, (body, reply.text)
                reply.json()  # the 422 body itself is valid JSON
            if "\ud800" in sample:
                continue  # a URL cannot carry a lone surrogate (it is not UTF-8 encodable)
            found = await client.get(
                f"{API}/search", params={"q": sample}, headers=api_keys["reader"]
            )
            assert found.status_code == 422, sample
            audit = await client.get(
                f"{API}/audit", params={"action": sample}, headers=api_keys["reader"]
            )
            assert audit.status_code == 422, sample
        not_utf8 = await client.post(
            f"{API}/tasks", content=b'{"question": "\xff\xfe"}', headers=headers
        )
        assert not_utf8.status_code in (400, 422)


@pytest.mark.integration
async def test_405_lists_every_method_of_the_path(
    gateway: Gateway, api_keys: dict[str, dict[str, str]]
) -> None:
    async with gateway() as (app, client):
        for path, item in app.openapi()["paths"].items():
            methods = {method.upper() for method in item}
            if "{" in path or "DELETE" in methods or not path.startswith(API):
                continue
            reply = await client.delete(path, headers=api_keys["admin"])
            assert reply.status_code == 405, path
            assert set(reply.headers["allow"].split(", ")) == methods, path


@pytest.mark.integration
async def test_a_422_names_the_field_and_the_rule_never_the_rejected_value(
    gateway: Gateway, api_keys: dict[str, dict[str, str]]
) -> None:
    name = "Johanna Pemberton-Quayle"
    researcher = {**api_keys["researcher"], "content-type": "application/json"}
    refused: list[
        tuple[str, str, Any, Any, str]
    ] = [  # (method, path, body, params, the field named)
        (
            "POST",
            f"{API}/verifications",
            {"claim": f"Aspirin cured {name}\x07 of her stroke"},
            None,
            "claim",
        ),
        (
            "POST",
            f"{API}/tasks",
            {"question": f"Did {name} respond to aspirin?", "entity": f"{name}\x1b"},
            None,
            "entity",
        ),
        (
            "POST",
            f"{API}/verifications",
            {"claim": "Aspirin reduces the risk of stroke", "sources": [name]},
            None,
            "sources",
        ),
        (
            "POST",
            f"{API}/source-lists",
            {"prompt": "vitamin D and fractures", "update_frequency": name},
            None,
            "update_frequency",
        ),
        ("GET", f"{API}/search", None, {"q": f"{name}\x07"}, "q"),
        ("GET", f"{API}/claims", None, {"status": name}, "status"),
        ("GET", f"{API}/audit", None, [("action", "ok"), ("action", name)], "action"),
    ]
    async with gateway() as (app, client):
        for method, path, body, params, field in refused:
            reply = await client.request(
                method,
                path,
                content=json.dumps(body) if body else None,
                params=params,
                headers=researcher,
            )
            assert reply.status_code == 422, (path, reply.text)
            assert "pemberton" not in reply.text.lower() and "johanna" not in reply.text.lower(), (
                reply.text
            )
            errors = reply.json()["detail"]
            assert all(set(error) == {"type", "loc", "msg"} for error in errors), errors
            assert any(error["loc"][-1] == field or field in error["loc"] for error in errors), (
                field,
                errors,
            )
        documented = app.openapi()["components"]["schemas"]["ValidationError"]
        assert (
            set(documented["properties"]) == {"type", "loc", "msg"}
            and documented["additionalProperties"] is False
        )


@pytest.mark.integration
async def test_the_requests_schemathesis_found_refused_though_schema_valid_are_accepted(
    gateway: Gateway, api_keys: dict[str, dict[str, str]]
) -> None:
    async with gateway() as (_, client):
        # The ledger read a request's typed fields as a person's text: a date range as a date of birth,
        # a re-run period's digits as a record number, and refused the list.
        for typed in (
            {"date_from": "2000-01-01", "date_to": "2000-01-01"},
            {"update_frequency": "P561784Y81DT05H06M"},
        ):
            listed = await client.post(
                f"{API}/source-lists",
                headers=api_keys["researcher"],
                json={"prompt": "vitamin D supplementation and fracture risk", **typed},
            )
            assert listed.status_code == 202, listed.text
        # A topic that named a patient: its placeholders made the subject key's words ("help name ...") a name.
        reviewed = await client.post(
            f"{API}/reviews",
            headers=api_keys["researcher"],
            json={
                "topic": "Does metformin help Jane Roe (MRN 48213377, DOB 03/04/1961) with type 2 diabetes?"
            },
        )
        assert reviewed.status_code == 202, reviewed.text
        # JSON Schema's integer: 321.0 is 321 (it was "Input should be a valid integer").
        limits = await client.put(
            f"{API}/source-lists/limits/fuzzed",
            headers=api_keys["admin"],
            json={"min_update_interval_s": 321.0, "max_references": 45.0},
        )
        assert limits.status_code == 200, limits.text
        assert (
            await client.get(f"{API}/source-lists/limits/fuzzed", headers=api_keys["admin"])
        ).json()["min_update_interval_s"] == 321
        for not_an_integer in (True, "321", 321.5):
            refused = await client.put(
                f"{API}/source-lists/limits/fuzzed",
                headers=api_keys["admin"],
                json={"min_update_interval_s": not_an_integer},
            )
            assert refused.status_code == 422, not_an_integer


@pytest.mark.unit
def test_every_event_stream_is_documented_as_one() -> None:
    """`GET /events` answers text/event-stream; the document said application/json (ST105)."""
    paths = create_app(
        Settings(nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x")
    ).openapi()["paths"]
    for path in (f"{API}/events", f"{API}/runs/{{run_id}}/events"):
        assert list(paths[path]["get"]["responses"]["200"]["content"]) == ["text/event-stream"], (
            path
        )
