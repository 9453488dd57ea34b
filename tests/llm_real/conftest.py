"""The `llm` tier: every LLM engine against a real llama.cpp `llama-server` serving
SmolLM2-135M-Instruct (bench/harness/llama_server.py), one thread, a 2,048-token context.

The server is started once per test module on a free port and stopped after it. When the binary
is missing it is built first (`scripts/setup_llm.py`, ~10+ min with one job; `task setup:llm` does
it ahead); the tier skips, saying why, only when it cannot be built (no cmake / C++ compiler).
Run: `.venv/bin/task test:llm` (the default `task test` leaves this tier out).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr

from bench.harness.llama_server import MODEL_NAME, LlamaServer, Unavailable
from research_llm import EvidenceDoc, ProviderChain, build_chain
from research_platform.settings import LLMSettings

CONTEXT = 2048


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    server = LlamaServer(context=CONTEXT, threads=1)
    try:
        server.start()
    except Unavailable as exc:
        if "cannot build" in str(exc) or "missing" in str(exc):
            pytest.skip(f"llama-server cannot be built here: {exc}")
        raise
    yield server
    server.stop()


def llm_settings(server: LlamaServer, **overrides: object) -> LLMSettings:
    values: dict = {
        "provider": "openai",
        "openai_api_key": SecretStr(""),
        "openai_base_url": server.base_url,
        "openai_model": MODEL_NAME,
        "timeout_s": 90.0,
        "max_output_tokens": 400,
        "concurrency": 1,
    }
    values.update(overrides)
    return LLMSettings(**values)


@pytest.fixture(scope="module")
def chain(llama: LlamaServer) -> ProviderChain:
    """openai (the real server) → offline, no embedder for the offline engine (lexical only)."""
    return build_chain(llm_settings(llama), encoder=None)


@pytest.fixture(scope="session")
def scifact_docs(shared_dir: Path) -> dict[int, dict]:
    docs = {}
    with (shared_dir / "data" / "scifact" / "corpus.jsonl").open() as fh:
        for line in fh:
            doc = json.loads(line)
            docs[doc["doc_id"]] = doc
    return docs


@pytest.fixture(scope="session")
def scifact_claims(shared_dir: Path) -> list[dict]:
    with (shared_dir / "data" / "scifact" / "claims_train.jsonl").open() as fh:
        claims = [json.loads(line) for line in fh]
    return [c for c in claims if c["evidence"]]


def evidence_of(doc: dict) -> EvidenceDoc:
    return EvidenceDoc(
        source_id=f"corpus:{doc['doc_id']}", title=doc["title"], text=" ".join(doc["abstract"])
    )
