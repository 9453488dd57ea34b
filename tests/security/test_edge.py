"""The HTTP edge refuses text Postgres / JSON cannot hold with 422 (never a 500), answers 405
with the path's real `Allow`, and documents the statuses it sends. Real NATS + Postgres behind."""

from __future__ import annotations

import json

import pytest

from research_gateway.main import create_app
from research_gateway.storable import UNSTORABLE, storable_text
from research_platform.settings import Settings
from tests.security.conftest import Gateway

API = "/api/research/v1"
UNSTORABLE_SAMPLES = ["nul \x00 here", "lone \ud800 surrogate", "bell \x07", "escape \x1b[31m", "c1 \x85", "del \x7f"]


@pytest.mark.unit
def test_the_validator_names_what_cannot_be_stored() -> None:
    for sample in UNSTORABLE_SAMPLES:
        with pytest.raises(ValueError, match="cannot be stored"):
            storable_text(sample)
    for fine in ["Does vitamin D help?", "tab\tnew\nline\r", "Ünïcödé — 维生素D 😀", "\u2028 \ufeff"]:
        assert storable_text(fine) == fine
    assert UNSTORABLE.pattern.startswith("[\x00")


@pytest.mark.unit
def test_every_body_operation_documents_400_and_422() -> None:
    paths = create_app(Settings(nats_url="nats://unused", database_url="postgresql+asyncpg://unused/x")).openapi()["paths"]
    for path, item in paths.items():
        for method, operation in item.items():
            if "requestBody" in operation:
                assert {"400", "422"} <= set(operation["responses"]), (method, path)


@pytest.mark.integration
async def test_unstorable_text_is_422_at_the_edge(gateway: Gateway, api_keys: dict[str, dict[str, str]]) -> None:
    headers = {**api_keys["researcher"], "content-type": "application/json"}
    async with gateway() as (_, client):
        for sample in UNSTORABLE_SAMPLES:
            for body in ({"question": f"Does {sample} help?"}, {"question": "Does it help?", "entity": sample},
                         {"question": "Does it help?", "patient_ref": sample},
                         {"question": "Does it help?", "filters": {"sources": [sample]}}):
                # json.dumps escapes a lone surrogate as \ud800, exactly what a broken client sends
                reply = await client.post(f"{API}/tasks", content=json.dumps(body), headers=headers)
                assert reply.status_code == 422, (body, reply.text)
                reply.json()  # the 422 body itself is valid JSON
            if "\ud800" in sample:
                continue  # a URL cannot carry a lone surrogate (it is not UTF-8 encodable)
            found = await client.get(f"{API}/search", params={"q": sample}, headers=api_keys["reader"])
            assert found.status_code == 422, sample
            audit = await client.get(f"{API}/audit", params={"action": sample}, headers=api_keys["reader"])
            assert audit.status_code == 422, sample
        not_utf8 = await client.post(f"{API}/tasks", content=b'{"question": "\xff\xfe"}', headers=headers)
        assert not_utf8.status_code in (400, 422)


@pytest.mark.integration
async def test_405_lists_every_method_of_the_path(gateway: Gateway, api_keys: dict[str, dict[str, str]]) -> None:
    async with gateway() as (app, client):
        for path, item in app.openapi()["paths"].items():
            methods = {method.upper() for method in item}
            if "{" in path or "DELETE" in methods or not path.startswith(API):
                continue
            reply = await client.delete(path, headers=api_keys["admin"])
            assert reply.status_code == 405, path
            assert set(reply.headers["allow"].split(", ")) == methods, path
