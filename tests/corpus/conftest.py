"""Corpus tests run in a database of their own on the shared test server.

The corpus tables are global (one corpus per deployment), so a private database keeps other
areas' tests (the demo corpus, e2e runs) out of these rankings and counts. Each test starts
from an empty corpus.
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from research_platform.db import create_engine, session_factory
from research_platform.migrate import upgrade


def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - re-raised below
            box["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    thread.join()
    if "error" in box:
        raise box["error"]
    return box.get("value")


async def _create_database(server_url: str, name: str) -> None:
    url = make_url(server_url)
    conn = await asyncpg.connect(
        host=url.host,
        port=url.port,
        user=url.username,
        password=url.password,
        database=url.database,
    )
    try:
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def corpus_database_url(servers) -> str:
    """A freshly migrated database used only by the corpus tests."""
    name = f"corpus_{uuid.uuid4().hex[:8]}"
    _in_thread(lambda: asyncio.run(_create_database(servers.database_url, name)))
    url = make_url(servers.database_url).set(database=name).render_as_string(hide_password=False)
    _in_thread(upgrade, url)
    return url


@pytest.fixture(scope="session")
async def corpus_sessions(
    corpus_database_url: str,
) -> AsyncIterator[async_sessionmaker[AsyncSession]]:
    engine = create_engine(corpus_database_url)
    yield session_factory(engine)
    await engine.dispose()


@pytest.fixture
async def empty_corpus(
    corpus_sessions: async_sessionmaker[AsyncSession],
) -> async_sessionmaker[AsyncSession]:
    """The corpus sessions, with every corpus table emptied first."""
    async with corpus_sessions() as session, session.begin():
        await session.execute(
            text(
                "TRUNCATE corpus_chunks, corpus_papers, corpus_lexemes, corpus_stats, corpus_sentences RESTART IDENTITY CASCADE"
            )
        )
    return corpus_sessions


def write_jsonl(path: Path, records: Sequence[object]) -> Path:
    """Write records (dicts are JSON-encoded, strings written as they are) one per line."""
    lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def small_corpus(tmp_path: Path) -> Path:
    """Six generic-JSONL papers with years, venues, authors and citation counts."""
    return write_jsonl(tmp_path / "papers.jsonl", SMALL_CORPUS)


SMALL_CORPUS = [
    {
        "id": "aspirin-mi",
        "title": "Low-dose aspirin and myocardial infarction in older adults",
        "abstract": "Daily low-dose aspirin reduced the incidence of first myocardial infarction. Major bleeding increased.",
        "authors": ["Ana Ruiz", "Bo Chen"],
        "year": 2018,
        "venue": "Lancet",
        "citation_count": 120,
        "keywords": ["aspirin"],
    },
    {
        "id": "statin-ldl",
        "title": "Statins lower LDL cholesterol and cardiovascular events",
        "abstract": "Statin therapy lowered LDL cholesterol by 40 percent and reduced major cardiovascular events.",
        "authors": ["Chen Li"],
        "year": 2015,
        "venue": "NEJM",
        "citation_count": 300,
    },
    {
        "id": "vitd-fracture",
        "title": "Vitamin D supplementation and fracture risk",
        "abstract": "Vitamin D supplementation did not reduce hip fractures in community-dwelling older people.",
        "authors": ["Dora Ng"],
        "year": 2020,
        "venue": "JAMA",
        "citation_count": 45,
    },
    {
        "id": "exercise-hf",
        "title": "Exercise training in chronic heart failure",
        "abstract": "Supervised exercise training modestly improved self-reported health status in heart failure patients.",
        "authors": ["Eve Park", "Ana Ruiz"],
        "year": 2009,
        "venue": "JAMA",
        "citation_count": 210,
    },
    {
        "id": "crispr-ecoli",
        "title": "CRISPR interference in Escherichia coli",
        "abstract": "Guide RNAs directed dCas9 to repress transcription of target genes in bacteria.",
        "authors": ["Finn Olsen"],
        "year": 2013,
        "venue": "Cell",
        "citation_count": 800,
    },
    {
        "id": "aspirin-cancer",
        "title": "Aspirin use and colorectal cancer",
        "abstract": "Regular aspirin use was associated with lower colorectal cancer mortality over twenty years.",
        "authors": ["Gus Hale"],
        "year": 2020,
        "venue": "Lancet",
        "citation_count": None,
    },
]
