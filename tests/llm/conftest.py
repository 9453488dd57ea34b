"""Fixtures of the LLM tests: a fake OpenAI/Gemini server and real SciFact evidence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from research_llm import EvidenceDoc
from tests.llm.fake_llm_server import FakeLLMServer


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def scifact(shared_dir: Path) -> dict:
    """SciFact corpus by doc id, and the train claims."""
    base = shared_dir / "data" / "scifact"
    corpus = {}
    with (base / "corpus.jsonl").open() as fh:
        for line in fh:
            doc = json.loads(line)
            corpus[doc["doc_id"]] = doc
    with (base / "claims_train.jsonl").open() as fh:
        claims = [json.loads(line) for line in fh]
    return {"corpus": corpus, "claims": claims}


def as_evidence(doc: dict, score: float | None = None) -> EvidenceDoc:
    return EvidenceDoc(
        source_id=f"corpus:{doc['doc_id']}",
        title=doc["title"],
        text=" ".join(doc["abstract"]),
        score=score,
    )
