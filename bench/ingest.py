"""Ingest benchmark: the 5,183 SciFact abstracts into a fresh embedded Postgres, against torch embedding alone.

In one run and one process (both runtimes loaded and warmed up first, so neither side pays for it):
1. torch embed-only: chunk every paper exactly as ingest does and embed the same texts with the
   torch (sentence-transformers) runtime at the same batch size — each batch's chunks, and with
   `--sentence-vectors ingest` its sentences not seen before (that ingest stores a vector per
   distinct sentence; by default, `lazy`, the first request reading a paper does): what
   embedding alone cost before the ONNX runtime;
2. ingest: `ingest_path` with the engine's configured runtime (CORPUS__EMBED_BACKEND, onnx by
   default) into a freshly migrated, empty database (bulk COPY, late index build, incremental
   statistics, embedding overlapped with the writes).
`--embed-only-onnx` also times the configured runtime's embed-only pass (what ingest adds to it).
Both runtimes use the process's share of the cores (CORPUS__EMBED_THREADS, else all). Prints
papers/s of each, the load average around each pass, and ends with one line (target: ratio <= 0.5
and seconds <= 250 for 5,183):

    bench:ingest papers=… seconds=… torch_embed_only_seconds=… ratio=… sentence_vectors=…

`--data-dir DIR` keeps the loaded database in DIR (a new folder) for `bench:retrieval --data-dir DIR`.

`--compare-writes` measures the ingest's writes alone, COPY against row INSERTs: the same papers
ingested into a fresh database with a stand-in model (a seeded random unit vector per text, no
inference), the staging rows of chunks and sentence vectors sent by asyncpg's binary COPY
(`copy_records_to_table`, what the ingest does) or by a prepared INSERT per row (`executemany`),
in interleaved rounds; the seconds spent in the batches' write transactions are compared:

    bench:ingest:writes papers=… copy_s=… insert_s=… insert_over_copy=…

    .venv/bin/python bench/ingest.py [--data ../shared/data/scifact] [--limit N] [--embed-only-onnx] [--data-dir DIR]
    .venv/bin/python bench/ingest.py --compare-writes [--limit 1024] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import os
import statistics
import sys
import tempfile
import time
from itertools import islice
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"


def embed_only(
    path: Path, chunk_words: int, embedder, with_sentences: bool
) -> tuple[int, int, float]:
    """Seconds to embed the texts ingest would embed for `path` (papers, texts, seconds)."""
    from research_corpus.errors import MalformedRecordError
    from research_corpus.ingest import BATCH_PAPERS
    from research_corpus.records import chunk_paper, read_jsonl
    from research_corpus.sentences import sentence_key, split_sentences

    papers = [p for p in read_jsonl(path, "scifact") if not isinstance(p, MalformedRecordError)]
    groups = []  # one embed call per ingest batch, as ingest makes them: its chunks, then its new sentences
    seen: set[bytes] = set()
    for i in range(0, len(papers), BATCH_PAPERS):
        batch = papers[i : i + BATCH_PAPERS]
        sentences = {
            sentence_key(s.text): " ".join(s.text.split())
            for p in batch
            for s in split_sentences(p.abstract)
        }
        fresh = [text for key, text in sentences.items() if key not in seen and with_sentences]
        seen.update(sentences)
        groups.append(
            [f"{p.title} {c.text}".strip() for p in batch for c in chunk_paper(p, chunk_words)]
            + fresh
        )
    started = time.perf_counter()
    for texts in groups:
        embedder.embed(texts)
    return len(papers), sum(map(len, groups)), time.perf_counter() - started


async def ingest(
    url: str, path: Path, chunk_words: int, embedder, progress: bool, with_sentences: bool
):
    from research_corpus.ingest import ingest_path
    from research_platform.db import create_engine, session_factory

    engine = create_engine(url)
    try:
        started = time.perf_counter()
        report = await ingest_path(
            session_factory(engine),
            path,
            fmt="scifact",
            progress=progress,
            embedder=embedder,
            chunk_words=chunk_words,
            sentence_vectors=with_sentences,
        )
        return report, time.perf_counter() - started
    finally:
        await engine.dispose()


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


class StandInModel:
    """No inference: a seeded random unit vector per text (the writes' cost does not depend on the values)."""

    def embed(self, texts: list[str]) -> np.ndarray:
        rows = [
            np.random.default_rng(
                int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            ).standard_normal(384)
            for t in texts
        ]
        vectors = np.asarray(rows, dtype=np.float32).reshape(len(texts), 384)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


async def insert_rows(self, table_name: str, *, records, columns, **_):
    """`copy_records_to_table` done as row INSERTs: one prepared statement, one execution per row."""
    placeholders = ", ".join(f"${i}" for i in range(1, len(columns) + 1))
    await self.executemany(
        f"INSERT INTO {table_name} ({', '.join(columns)}) VALUES ({placeholders})",  # noqa: S608 - the loader's own table
        records,
    )


async def timed_writes(
    url: str, path: Path, chunk_words: int, transport: str
) -> tuple[float, int, int]:
    """(seconds in write transactions, chunks, sentences) of ingesting `path` into an emptied corpus."""
    import asyncpg
    from sqlalchemy import text

    import research_corpus.ingest as ingest_module
    from research_platform.db import create_engine, session_factory

    engine = create_engine(url)
    sessions = session_factory(engine)
    async with sessions() as session, session.begin():
        await session.execute(
            text(
                "TRUNCATE corpus_chunks, corpus_papers, corpus_lexemes, corpus_stats, corpus_sentences "
                "RESTART IDENTITY CASCADE"
            )
        )
    spent = 0.0
    write_batch, copy = ingest_module._write_batch, asyncpg.Connection.copy_records_to_table

    async def timed(*args):
        nonlocal spent
        started = time.perf_counter()
        await write_batch(*args)
        spent += time.perf_counter() - started

    ingest_module._write_batch = timed
    if transport == "insert":
        asyncpg.Connection.copy_records_to_table = insert_rows
    try:
        report = await ingest_module.ingest_path(
            sessions,
            path,
            fmt="scifact",
            progress=False,
            embedder=StandInModel(),  # type: ignore[arg-type]  # a stand-in with the embedder's interface
            chunk_words=chunk_words,
        )
    finally:
        ingest_module._write_batch, asyncpg.Connection.copy_records_to_table = write_batch, copy
        await engine.dispose()
    return spent, report.chunks, report.sentences


def compare_writes(source: Path, chunk_words: int, rounds: int) -> None:
    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    seconds: dict[str, list[float]] = {"copy": [], "insert": []}
    with tempfile.TemporaryDirectory(prefix="re-bench-writes-") as tmp:
        pg = EmbeddedPostgres(Path(tmp) / "pg").start()
        try:
            upgrade(pg.url)
            asyncio.run(
                timed_writes(pg.url, source, chunk_words, "copy")
            )  # warm-up: caches, prepared statements
            for _ in range(rounds):
                for transport, spents in seconds.items():
                    spent, chunks, sentences = asyncio.run(
                        timed_writes(pg.url, source, chunk_words, transport)
                    )
                    spents.append(spent)
                    print(
                        f"{transport:6} writes: {spent:.2f} s ({chunks} chunks, {sentences} sentence vectors); {load()}",
                        flush=True,
                    )
        finally:
            pg.stop()
    papers = sum(1 for line in source.open() if line.strip())
    copy_s, insert_s = statistics.median(seconds["copy"]), statistics.median(seconds["insert"])
    print(
        f"median of {rounds}: COPY {copy_s:.2f} s, row INSERTs {insert_s:.2f} s -> "
        f"{'COPY' if copy_s <= insert_s else 'INSERT'} is faster ({insert_s / copy_s:.2f} x)"
    )
    print_summary(
        f"bench:ingest:writes papers={papers} copy_s={copy_s:.2f} insert_s={insert_s:.2f} insert_over_copy={insert_s / copy_s:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--limit", type=int, help="Only the first N abstracts (a quick look, not the benchmark)."
    )
    parser.add_argument("--progress", action="store_true")
    parser.add_argument(
        "--sentence-vectors",
        choices=("lazy", "ingest"),
        help="When sentences are embedded (default: the configured CORPUS__SENTENCE_VECTORS).",
    )
    parser.add_argument(
        "--embed-only-onnx",
        action="store_true",
        help="Also time the configured runtime's embed-only pass.",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="Keep the loaded database in this new folder (for bench:retrieval --data-dir).",
    )
    parser.add_argument(
        "--compare-writes", action="store_true", help="Time the writes alone: COPY vs row INSERTs."
    )
    parser.add_argument(
        "--rounds", type=int, default=3, help="Interleaved rounds of --compare-writes."
    )
    args = parser.parse_args()
    source = args.data / "corpus.jsonl"
    if not source.exists():
        sys.exit(
            f"{args.data} is not present: the SciFact data (../shared/data/scifact) is needed for this benchmark"
        )
    if args.data_dir and args.data_dir.exists() and any(args.data_dir.iterdir()):
        sys.exit(f"{args.data_dir} is not empty: the ingest is timed into a fresh database")
    if args.compare_writes:
        with tempfile.TemporaryDirectory(prefix="re-bench-writes-src-") as tmp:
            if args.limit:
                source = Path(tmp) / "corpus.jsonl"
                with (args.data / "corpus.jsonl").open() as full:
                    source.write_text("".join(islice(full, args.limit)))
            from research_platform.settings import get_settings

            compare_writes(source, get_settings().corpus.chunk_words, args.rounds)
        return

    from research_corpus.embedding import Embedder
    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade
    from research_platform.settings import get_settings

    settings = get_settings().corpus
    mode = args.sentence_vectors or settings.sentence_vectors
    with_sentences = mode == "ingest"
    # Plain models, no process embedder: its vector cache would hand the ingest the vectors the
    # embed-only pass just computed.
    torch_embedder = Embedder(
        settings.model_path,
        batch_size=settings.embed_batch_size,
        backend="torch",
        threads=settings.embed_threads,
    )
    embedder = Embedder.configured(get_settings().corpus)
    with tempfile.TemporaryDirectory(prefix="re-bench-ingest-") as tmp:
        if args.limit:
            source = Path(tmp) / "corpus.jsonl"
            with (args.data / "corpus.jsonl").open() as full:
                source.write_text("".join(islice(full, args.limit)))
        for model in (torch_embedder, embedder):
            model.embed(["warm-up", "the model is loaded before anything is timed"])
        print(f"start: {load()} on {os.cpu_count()} cores", flush=True)
        papers, chunks, embed_s = embed_only(
            source, settings.chunk_words, torch_embedder, with_sentences
        )
        what = "chunks + distinct sentences" if with_sentences else "chunks; sentences lazily"
        print(
            f"torch embed-only: {papers} papers, {chunks} texts ({what}) in {embed_s:.1f} s"
            f" ({papers / embed_s:.1f} papers/s, {chunks / embed_s:.1f} texts/s); {load()}",
            flush=True,
        )
        if args.embed_only_onnx:
            _, _, own_s = embed_only(source, settings.chunk_words, embedder, with_sentences)
            print(
                f"{embedder.backend} embed-only: same texts in {own_s:.1f} s ({papers / own_s:.1f} papers/s,"
                f" {chunks / own_s:.1f} texts/s; {embed_s / own_s:.2f} x torch); {load()}",
                flush=True,
            )
        pg = EmbeddedPostgres(args.data_dir or Path(tmp) / "pg").start()
        try:
            upgrade(pg.url)
            report, ingest_s = asyncio.run(
                ingest(
                    pg.url, source, settings.chunk_words, embedder, args.progress, with_sentences
                )
            )
        finally:
            pg.stop()
    print(
        f"ingest ({embedder.backend}, {embedder.precision}): {report.added} added, {report.chunks} chunks, {report.sentences} sentences, "
        f"{len(report.errors)} errors in {ingest_s:.1f} s ({report.added / ingest_s:.1f} papers/s)"
    )
    ratio = ingest_s / embed_s
    print(
        f"target: ingest <= 0.5 x torch embed-only -> {'met' if ratio <= 0.5 else 'MISSED'} ({ratio:.2f} x); "
        f"{load()} on {os.cpu_count()} cores at the end"
    )
    print(
        "target: full SciFact ingest <= 250 s -> "
        + (
            f"{'met' if ingest_s <= 250 else 'MISSED'} ({ingest_s:.0f} s, sentence vectors {mode})"
            if not args.limit
            else f"not measured (--limit {args.limit}: not the full corpus)"
        )
    )
    print_summary(
        f"bench:ingest papers={report.added} seconds={ingest_s:.1f} torch_embed_only_seconds={embed_s:.1f}"
        f" ratio={ratio:.2f} sentence_vectors={mode}",
        keep=not args.limit,
    )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
