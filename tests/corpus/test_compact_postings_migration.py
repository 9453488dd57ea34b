"""Migration 0020 round trip: compact postings and no stored chunk tsvector, converted in place.

An existing corpus (ingested at 0019) keeps every posting's values, its lexical answers and its
topic analytics after the upgrade, and the way back restores the wide postings and the `tsv`
column with the vectors the ingest had stored (real Postgres, a database of its own)."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from sqlalchemy import make_url, text

from research_corpus.analytics import publication_trends, top_cited
from research_corpus.ingest import ingest_path
from research_corpus.search import search
from research_platform.db import create_engine, session_factory
from research_platform.migrate import downgrade, upgrade
from tests.corpus.conftest import SMALL_CORPUS, _create_database, _in_thread, write_jsonl
from tests.corpus.test_ingest_pipeline import TextKeyedModel

pytestmark = pytest.mark.integration

_COLUMNS = """SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
WHERE attrelid = CAST(:table AS regclass) AND attnum > 0 AND NOT attisdropped ORDER BY attnum"""


async def _state(url: str) -> dict[str, object]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            postings = await conn.execute(
                text(
                    "SELECT lexeme, chunk_id, tf_text, tf_title, doc_len, impact FROM corpus_postings"
                    " ORDER BY lexeme, chunk_id"
                )
            )
            indexes = await conn.execute(
                text(
                    "SELECT indexname, indexdef FROM pg_indexes"
                    " WHERE tablename IN ('corpus_chunks', 'corpus_postings')"
                )
            )
            columns: dict[str, dict[str, str]] = {
                table: dict((await conn.execute(text(_COLUMNS), {"table": table})).all())
                for table in ("corpus_chunks", "corpus_postings")
            }
            tsv = None
            if "tsv" in columns["corpus_chunks"]:
                tsv = (
                    await conn.execute(
                        text("SELECT id, CAST(tsv AS text) FROM corpus_chunks ORDER BY id")
                    )
                ).all()
        async with session_factory(engine)() as session:
            answers = {
                query: [
                    (h.external_id, round(h.score, 9))
                    for h in await search(session, query, 6, "lexical")
                ]
                for query in ("aspirin myocardial infarction", "exercise heart failure", "older")
            }
            trends = [
                (p.year, p.papers) for p in await publication_trends(session, "older -bleeding")
            ]
            cited = [p.external_id for p in await top_cited(session, '"heart failure"', 5)]
        return {
            "postings": [tuple(r) for r in postings],
            "indexes": dict(indexes.all()),
            "columns": columns,
            "tsv": tsv,
            "answers": answers,
            "topics": (trends, cited),
        }
    finally:
        await engine.dispose()


# The postings the ingest derived from a chunk's full-text vector (the counting of migration 0019's
# ingest): checks that the vector the downgrade computes again is the one they came from.
_FROM_TSV = """SELECT u.lexeme, c.id, cardinality(u.positions) - cardinality(array_positions(u.weights, 'A')),
       cardinality(array_positions(u.weights, 'A'))
FROM corpus_chunks c CROSS JOIN LATERAL unnest(c.tsv) AS u ORDER BY 1, 2"""


def test_postings_become_compact_and_chunk_tsv_goes_and_both_come_back(servers, tmp_path) -> None:
    name = f"compact_{uuid.uuid4().hex[:8]}"
    _in_thread(lambda: asyncio.run(_create_database(servers.database_url, name)))
    url = make_url(servers.database_url).set(database=name).render_as_string(hide_password=False)
    upgrade(url, "head")

    async def load() -> None:
        engine = create_engine(url)
        try:
            await ingest_path(
                session_factory(engine),
                write_jsonl(tmp_path / "papers.jsonl", SMALL_CORPUS),
                fmt="jsonl",
                progress=False,
                embedder=TextKeyedModel(),  # type: ignore[arg-type]  # a stand-in with the embedder's interface
            )
        finally:
            await engine.dispose()

    async def from_tsv() -> list[tuple[object, ...]]:
        engine = create_engine(url)
        try:
            async with engine.connect() as conn:
                return [tuple(r) for r in await conn.execute(text(_FROM_TSV))]
        finally:
            await engine.dispose()

    asyncio.run(load())
    compact = asyncio.run(_state(url))
    assert compact["columns"]["corpus_postings"] == {  # type: ignore[index]
        "chunk_id": "integer",
        "impact": "real",
        "tf_text": "smallint",
        "tf_title": "smallint",
        "doc_len": "smallint",
        "lexeme": "text",
    }
    assert "tsv" not in compact["columns"]["corpus_chunks"]  # type: ignore[index]
    assert compact["tsv"] is None and "ix_corpus_chunks_tsv" not in compact["indexes"]  # type: ignore[operator]
    assert "fillfactor='100'" in compact["indexes"]["ix_corpus_postings_impact"]  # type: ignore[index]
    assert "USING brin (chunk_id)" in compact["indexes"]["ix_corpus_postings_chunk_id"]  # type: ignore[index]
    assert len(compact["postings"]) > 50 and all(compact["answers"].values())  # type: ignore[arg-type, attr-defined]
    # 'older' is in two papers, one of which mentions bleeding; the phrase is in one paper
    assert compact["topics"] == (
        [(2009, 0), (2013, 0), (2015, 0), (2018, 0), (2020, 1)],
        ["exercise-hf"],
    )

    downgrade(url, "0019")  # the corpus as migration 0019's ingest stored it
    wide = asyncio.run(_state(url))
    assert wide["columns"]["corpus_postings"] == {  # type: ignore[index]
        "lexeme": "text",
        "chunk_id": "bigint",
        "tf_text": "integer",
        "tf_title": "integer",
        "doc_len": "integer",
        "impact": "real",
    }
    assert wide["columns"]["corpus_chunks"]["tsv"] == "tsvector"  # type: ignore[index]
    assert "ix_corpus_chunks_tsv" in wide["indexes"]  # type: ignore[operator]
    assert wide["postings"] == compact["postings"]  # the same values, wider types
    assert asyncio.run(from_tsv()) == [p[:4] for p in compact["postings"]]  # type: ignore[attr-defined]
    assert wide["answers"] == compact["answers"] and wide["topics"] == compact["topics"]

    upgrade(url, "0020")  # an existing wide corpus, converted in place
    again = asyncio.run(_state(url))
    assert again == compact
    # in chunk-id order on disk, as the ingest writes them: the BRIN then reads a chunk's few pages
    assert asyncio.run(_heap_chunk_ids(url)) == sorted(asyncio.run(_heap_chunk_ids(url)))


async def _heap_chunk_ids(url: str) -> list[int]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(text("SELECT chunk_id FROM corpus_postings ORDER BY ctid"))
            return [chunk_id for (chunk_id,) in rows]
    finally:
        await engine.dispose()


async def test_an_ingest_writes_compact_postings_and_the_topic_filter_reads_text(
    empty_corpus, small_corpus
):
    await ingest_path(
        empty_corpus,
        small_corpus,
        fmt="jsonl",
        progress=False,
        embedder=TextKeyedModel(),
    )
    async with empty_corpus() as session:
        tokens = dict(
            (await session.execute(text("SELECT id, token_count FROM corpus_chunks"))).all()
        )
        postings = (
            await session.execute(text("SELECT chunk_id, doc_len, tf_title FROM corpus_postings"))
        ).all()
        assert postings and all(doc_len == tokens[chunk] for chunk, doc_len, _ in postings)
        assert any(tf_title > 0 for *_, tf_title in postings)  # title lexemes counted apart
        # the title counts: 'risk' is in the vitamin D paper's title only
        cited = [p.external_id for p in await top_cited(session, "supplementation risk", 5)]
    assert cited == ["vitd-fracture"]
