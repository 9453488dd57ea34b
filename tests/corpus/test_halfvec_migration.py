"""Migration 0019 round trip: chunk vectors become `halfvec(384)` in place, dense search keeps its
answers, and the way back restores `vector(384)` (real Postgres + pgvector, a database of its own)."""

from __future__ import annotations

import asyncio
import uuid

import numpy as np
import pytest
from sqlalchemy import make_url, text

from research_corpus.ingest import ingest_path
from research_corpus.search import SearchFilters, dense_chunks
from research_platform.db import create_engine, session_factory
from research_platform.migrate import downgrade, upgrade
from tests.corpus.conftest import SMALL_CORPUS, _create_database, _in_thread, write_jsonl
from tests.corpus.test_ingest_pipeline import TextKeyedModel, vector_of

pytestmark = pytest.mark.integration


async def _state(url: str) -> tuple[str, str, list[tuple[int, list[float]]]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            kind = await conn.scalar(
                text(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute"
                    " WHERE attrelid = 'corpus_chunks'::regclass AND attname = 'embedding'"
                )
            )
            index = await conn.scalar(
                text(
                    "SELECT indexdef FROM pg_indexes WHERE indexname = 'ix_corpus_chunks_embedding'"
                )
            )
            rows = await conn.execute(
                text("SELECT id, CAST(embedding AS real[]) FROM corpus_chunks ORDER BY id")
            )
            return str(kind), str(index), [(i, list(v)) for i, v in rows]
    finally:
        await engine.dispose()


async def _nearest(url: str, vector: list[float]) -> list[int]:
    engine = create_engine(url)
    try:
        async with session_factory(engine)() as session:
            return [h.chunk_id for h in await dense_chunks(session, vector, 3, SearchFilters())]
    finally:
        await engine.dispose()


def test_chunk_vectors_go_to_half_precision_and_back_in_place(servers, tmp_path) -> None:
    name = f"halfvec_{uuid.uuid4().hex[:8]}"
    _in_thread(lambda: asyncio.run(_create_database(servers.database_url, name)))
    url = make_url(servers.database_url).set(database=name).render_as_string(hide_password=False)
    upgrade(url, "head")

    async def load() -> None:
        """A corpus ingested by today's writer, taken back to 0018, with the full-precision
        vectors a 0018 ingest stored (the model's own)."""
        engine = create_engine(url)
        try:
            await ingest_path(
                session_factory(engine),
                write_jsonl(tmp_path / "papers.jsonl", SMALL_CORPUS),
                fmt="jsonl",
                progress=False,
                embedder=TextKeyedModel(),  # type: ignore[arg-type]  # a stand-in with the embedder's interface
            )
            await asyncio.to_thread(downgrade, url, "0018")
            async with engine.begin() as conn:
                rows = (
                    await conn.execute(
                        text(
                            "SELECT c.id, p.title, c.text FROM corpus_chunks c"
                            " JOIN corpus_papers p ON p.id = c.paper_id"
                        )
                    )
                ).all()
                for chunk_id, title, body in rows:
                    vector = vector_of(f"{title} {body}".strip())
                    await conn.execute(
                        text(
                            "UPDATE corpus_chunks SET embedding = CAST(:v AS vector) WHERE id = :id"
                        ),
                        {"v": "[" + ",".join(repr(float(x)) for x in vector) + "]", "id": chunk_id},
                    )
        finally:
            await engine.dispose()

    asyncio.run(load())
    kind, index, full = asyncio.run(_state(url))
    assert kind == "vector(384)" and "vector_cosine_ops" in index and len(full) >= 3
    query = full[1][1]
    before = asyncio.run(_nearest(url, query))
    assert before[0] == full[1][0]

    upgrade(url, "0019")
    kind, index, half = asyncio.run(_state(url))
    assert kind == "halfvec(384)" and "halfvec_cosine_ops" in index
    assert [i for i, _ in half] == [i for i, _ in full]
    for (_, a), (_, b) in zip(full, half, strict=True):
        assert np.allclose(a, b, rtol=1e-3, atol=1e-4)  # fp16: 11 significant bits
    assert asyncio.run(_nearest(url, query)) == before

    downgrade(url, "0018")
    kind, index, back = asyncio.run(_state(url))
    assert kind == "vector(384)" and "vector_cosine_ops" in index
    assert back == half  # the rounding stays until `corpus reembed`
    upgrade(url, "head")
    assert asyncio.run(_state(url))[0] == "halfvec(384)"
