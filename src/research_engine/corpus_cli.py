"""`research-engine corpus …`: ingest, search (one query or a BEIR batch), and analytics.

Every command works on its own: against `DATABASE_URL` when set, otherwise against the
embedded PostgreSQL in `--data-dir` (default: the folder `research-engine up` uses), which is
started (and migrated) when it is not running.
"""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar, cast

import typer
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

if TYPE_CHECKING:  # the corpus library loads on first use, not at the CLI's start
    from research_corpus.analytics import PaperSummary
    from research_corpus.ingest import IngestReport
    from research_corpus.ingest_bus import BusIngestReport
    from research_corpus.search import PaperHit

corpus_app = typer.Typer(help="Ingest, search and analyse the local corpus.", no_args_is_help=True)


@corpus_app.callback()
def _models() -> None:
    """Every corpus command: the embedding and judgement models get this process's settings."""
    from research_engine.models import configure_models

    configure_models()


T = TypeVar("T")

DataDir = Annotated[
    Path | None, typer.Option("--data-dir", help="Embedded database folder (default: DATA_DIR).")
]
AsJson = Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")]
Mode = Annotated[str, typer.Option("--mode", help="hybrid | lexical | dense")]
YearFrom = Annotated[int | None, typer.Option("--year-from")]
YearTo = Annotated[int | None, typer.Option("--year-to")]


def database_url(data_dir: Path | None) -> str:
    """`DATABASE_URL` (migrated), else the embedded database in `data_dir`, started if needed."""
    from research_engine.stack import ensure_embedded_database
    from research_platform.settings import Settings

    settings = Settings()
    if settings.database_url:
        from research_platform.migrate import upgrade

        upgrade(settings.database_url, migrations=settings.research_engine_migrations)
        return settings.database_url
    return ensure_embedded_database((data_dir or settings.data_dir).resolve())


def run_with_sessions(
    data_dir: Path | None, work: Callable[[async_sessionmaker[AsyncSession]], Awaitable[T]]
) -> T:
    """Run `work(sessions)` against the corpus database, disposing of the engine afterwards."""
    from research_platform.db import create_engine, session_factory

    url = database_url(data_dir)

    async def _main() -> T:
        engine = create_engine(url)
        try:
            return await work(session_factory(engine))
        finally:
            await engine.dispose()

    return asyncio.run(_main())


def run_in_session(data_dir: Path | None, work: Callable[[AsyncSession], Awaitable[T]]) -> T:
    """Run `work(session)` in one session of the corpus database (see `run_with_sessions`)."""

    async def _work(sessions: async_sessionmaker[AsyncSession]) -> T:
        async with sessions() as session:
            return await work(session)

    return run_with_sessions(data_dir, _work)


def _dump(value: object) -> str:
    from pydantic import BaseModel

    if isinstance(value, list):
        return json.dumps(
            [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value], indent=2
        )
    return (
        value.model_dump_json(indent=2)
        if isinstance(value, BaseModel)
        else json.dumps(value, indent=2)
    )


@corpus_app.command()
def ingest(
    path: Annotated[
        Path,
        typer.Argument(
            exists=True, help="A JSONL file, a folder of PDFs, or a BibTeX / RIS / CSL-JSON export."
        ),
    ],
    fmt: Annotated[
        str,
        typer.Option("--format", help="scifact | jsonl | pdf-dir | bibtex | ris | csl-json | auto"),
    ] = "auto",
    data_dir: DataDir = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            min=0,
            help="Queue the papers as jobs on the bus and start this many local ingest workers "
            "(0: ingest in this process). Without NATS_URL a private NATS server serves the run.",
        ),
    ] = 0,
    bus: Annotated[
        bool,
        typer.Option(
            "--bus",
            help="Queue the papers as jobs on NATS_URL's bus for workers running elsewhere "
            "(`research-engine corpus worker`) and follow their progress.",
        ),
    ] = False,
) -> None:
    """Add new papers, re-index changed ones, skip unchanged ones. Exit 1 if any record was malformed.

    A library export's attached PDFs are ingested with their records; records without abstract or
    PDF are kept as metadata-only papers; re-ingesting an export updates papers by DOI or record key.
    With --workers N or --bus the papers become jobs on a JetStream work queue that any number of
    workers share (docs/operations.md)."""
    from research_corpus.errors import CorpusError
    from research_corpus.ingest import ingest_path
    from research_corpus.ingest_bus import BusIngestReport
    from research_corpus.library import LIBRARY_FORMATS
    from research_platform.settings import get_settings

    corpus = get_settings().corpus
    report: IngestReport
    try:
        if workers or bus:
            report = _ingest_over_bus(data_dir, path, fmt, progress, workers, bus)
        else:
            report = run_with_sessions(
                data_dir,
                lambda sessions: ingest_path(
                    sessions,
                    path,
                    fmt=fmt,
                    progress=progress,
                    chunk_words=corpus.chunk_words,
                    sentence_vectors=corpus.sentence_vectors == "ingest",
                    settings=corpus,
                ),
            )
    except CorpusError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(
        f"{report.format} {report.path}: {report.added} added, {report.updated} updated, "
        f"{report.unchanged} unchanged, {report.chunks} chunks, {len(report.errors)} malformed ({report.seconds}s)"
    )
    if isinstance(report, BusIngestReport) and report.left:
        typer.echo(
            f"{report.left} of {report.queued} jobs are still queued (no worker took them in time; "
            f"they stay queued for `research-engine corpus worker`)",
            err=True,
        )
    if report.format in LIBRARY_FORMATS:
        typer.echo(
            f"{report.attachments} with attached PDF, {report.metadata_only} metadata-only (no abstract or PDF)"
        )
    for note in report.notes:
        typer.echo(f"{path}: line {note.line}: {note.reason}", err=True)
    for error in report.errors:
        typer.echo(f"{path}: line {error.line}: {error.reason}", err=True)
    if report.errors:
        raise typer.Exit(1)


def _ingest_over_bus(
    data_dir: Path | None, path: Path, fmt: str, progress: bool, workers: int, bus: bool
) -> BusIngestReport:
    """Queue `path` on the bus and follow it; `workers` local worker processes while it runs."""
    import subprocess
    import tempfile

    from research_corpus.ingest_bus import ingest_over_bus
    from research_platform.embedded import EmbeddedNats, env_for
    from research_platform.settings import Settings

    settings = Settings()
    url = database_url(data_dir)
    nats_url = settings.nats_url
    if bus and not nats_url:
        raise typer.BadParameter("--bus needs NATS_URL (the bus the workers listen on)")
    with tempfile.TemporaryDirectory(prefix="re-ingest-nats-") as tmp:
        private = None
        if not nats_url:
            private = EmbeddedNats(Path(tmp)).start()
            nats_url = private.url
        env = env_for(nats_url, url)
        command = [sys.executable, "-m", "research_engine.cli", "corpus", "worker"]
        children = [
            subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)  # noqa: S603 - our own CLI
            for _ in range(workers)
        ]
        try:

            async def follow(sessions: async_sessionmaker[AsyncSession]) -> BusIngestReport:
                from research_platform.nats_seeds import connect

                nc = await connect(nats_url)
                try:
                    return await ingest_over_bus(
                        sessions, nc, path, fmt=fmt, progress=progress, settings=settings
                    )
                finally:
                    await nc.close()

            return run_with_sessions(data_dir, follow)
        finally:
            for child in children:
                child.terminate()  # a worker finishes its batch in hand (or hands it back) and exits
            for child in children:
                try:
                    child.wait(60)
                except subprocess.TimeoutExpired:
                    child.kill()
            if private is not None:
                private.stop()


@corpus_app.command()
def worker(
    data_dir: DataDir = None,
) -> None:
    """Ingest worker: write the papers queued by `corpus ingest --bus/--workers` until stopped.

    Run one per machine (or per core) sharing NATS_URL and DATABASE_URL; each job goes to one
    worker, a killed worker's jobs go to the others after CORPUS__INGEST_ACK_WAIT_S."""
    import signal

    from research_corpus.errors import CorpusError
    from research_corpus.ingest_bus import IngestWorker
    from research_platform.nats_seeds import connect
    from research_platform.settings import Settings

    settings = Settings()
    nats_url = settings.require_nats_url()

    async def work(sessions: async_sessionmaker[AsyncSession]) -> int:
        nc = await connect(nats_url, max_reconnect_attempts=-1)
        runner = IngestWorker(sessions, nc, settings)
        await asyncio.to_thread(
            runner.embedder.load
        )  # before the first job, not inside its ack wait
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, runner.stop)
        try:
            await runner.run()
        finally:
            await nc.close()
        return runner.papers

    try:
        papers = run_with_sessions(data_dir, work)
    except CorpusError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    typer.echo(f"worker stopped: {papers} papers written")


@corpus_app.command()
def reembed(
    data_dir: DataDir = None,
    force: Annotated[
        bool, typer.Option("--force", help="Re-embed even if the corpus already has this model.")
    ] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress")] = True,
) -> None:
    """Recompute every chunk and sentence vector with the configured model and precision
    (CORPUS__EMBED_PRECISION) and record it; searches refuse the corpus while it runs.

    Run it after changing the precision; killed half way, run it again."""
    from research_corpus.embedding import get_embedder
    from research_corpus.reembed import reembed as reembed_corpus

    embedder = get_embedder()
    report = run_with_sessions(
        data_dir,
        lambda sessions: reembed_corpus(sessions, embedder, force=force, progress=progress),
    )
    if report.skipped:
        typer.echo(f"the corpus is already embedded with {report.model}: nothing to do (--force)")
        return
    typer.echo(
        f"re-embedded {report.papers} papers ({report.chunks} chunks, {report.sentences} sentences) "
        f"from {report.previous or 'nothing'} to {report.model} in {report.seconds}s; "
        f"{report.orphan_sentences_deleted} orphan sentence vectors deleted"
    )


def _read_queries(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    queries, problems = [], []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            queries.append((str(obj["_id"]), str(obj["text"])))
        except (json.JSONDecodeError, KeyError, TypeError):
            problems.append(f"{path}: line {number}: expected a JSON object with `_id` and `text`")
    return queries, problems


def _print_hits(hits: list[PaperHit]) -> None:
    if not hits:
        typer.echo("no results")
    for rank, hit in enumerate(hits, start=1):
        meta = ", ".join(str(v) for v in (hit.year, hit.venue) if v)
        typer.echo(
            f"{rank:>3}. [{hit.score:.4f}] corpus:{hit.external_id}  {hit.title}"
            + (f" ({meta})" if meta else "")
        )
        typer.echo(
            textwrap.fill(
                f"{hit.locator}: {hit.passage}",
                width=110,
                initial_indent="     ",
                subsequent_indent="     ",
                max_lines=3,
                placeholder=" …",
            )
        )


@corpus_app.command()
def search(
    query: Annotated[str | None, typer.Argument(help="The query (omit with --queries).")] = None,
    queries: Annotated[
        Path | None, typer.Option("--queries", exists=True, help="BEIR-style JSONL {_id, text}.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Run file for --queries (default: stdout).")
    ] = None,
    k: Annotated[int, typer.Option("--k", min=1)] = 10,
    mode: Mode = "hybrid",
    year_from: YearFrom = None,
    year_to: YearTo = None,
    venue: Annotated[str | None, typer.Option("--venue")] = None,
    section: Annotated[str | None, typer.Option("--section")] = None,
    as_json: AsJson = False,
    data_dir: DataDir = None,
) -> None:
    """Search one query, or a batch: `--queries FILE.jsonl --out run.tsv` writes
    `query-id<TAB>corpus-id<TAB>rank<TAB>score` (corpus-id = the id in the ingested file)."""
    from research_corpus.search import MODES, SearchFilters, SearchMode, search_many
    from research_platform.settings import get_settings

    if (query is None) == (queries is None):
        raise typer.BadParameter("give either a QUERY or --queries FILE")
    if mode not in MODES:
        raise typer.BadParameter(f"--mode must be one of {', '.join(MODES)}")
    checked = cast(SearchMode, mode)  # one of MODES: checked above
    filters = SearchFilters(year_from=year_from, year_to=year_to, venue=venue, section=section)
    batch, problems = _read_queries(queries) if queries else ([("", query or "")], [])

    async def _work(
        sessions: async_sessionmaker[AsyncSession],
    ) -> list[tuple[str, list[PaperHit]]]:
        # One embedding call for the whole batch, then one search per query.
        hits = await search_many(
            sessions,
            [text for _, text in batch],
            k=k,
            mode=checked,
            filters=filters,
            settings=get_settings().corpus,
        )
        return [(qid, found) for (qid, _), found in zip(batch, hits, strict=True)]

    results = run_with_sessions(data_dir, _work)
    if queries is None:
        hits = results[0][1]
        typer.echo(_dump(hits)) if as_json else _print_hits(hits)
        return
    lines = ["query-id\tcorpus-id\trank\tscore"]
    lines += [
        f"{qid}\t{hit.external_id}\t{rank}\t{hit.score:.6f}"
        for qid, hits in results
        for rank, hit in enumerate(hits, 1)
    ]
    if out:
        out.write_text("\n".join(lines) + "\n", encoding="utf-8")
        typer.echo(f"{len(results)} queries, {len(lines) - 1} results -> {out}", err=True)
    else:
        sys.stdout.write("\n".join(lines) + "\n")
    for problem in problems:
        typer.echo(problem, err=True)
    if problems:
        raise typer.Exit(1)


@corpus_app.command()
def overview(data_dir: DataDir = None, as_json: AsJson = False) -> None:
    """Papers, chunks, papers per year, mean citations, largest venues."""
    from research_corpus.analytics import corpus_overview

    view = run_in_session(data_dir, corpus_overview)
    if as_json:
        typer.echo(_dump(view))
        return
    typer.echo(
        f"papers {view.papers}  chunks {view.chunks}  without year {view.papers_without_year}"
    )
    mean = (
        f"{view.mean_citations:.2f} over {view.papers_with_citations} papers"
        if view.mean_citations is not None
        else "n/a"
    )
    typer.echo(f"mean citations {mean}")
    for year, n in view.papers_per_year.items():
        typer.echo(f"  {year}: {n}")
    for venue, n in view.top_venues:
        typer.echo(f"  venue {venue}: {n}")


@corpus_app.command()
def trends(
    topic: Annotated[str, typer.Argument(help="Words that must all occur (web-search syntax).")],
    year_from: YearFrom = None,
    year_to: YearTo = None,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Papers about TOPIC per year, and their share of that year's papers."""
    from research_corpus.analytics import publication_trends

    points = run_in_session(
        data_dir, lambda session: publication_trends(session, topic, year_from, year_to)
    )
    if as_json:
        typer.echo(_dump(points))
        return
    if not points:
        typer.echo("no papers with a year")
    for p in points:
        typer.echo(f"{p.year}: {p.papers:>5}  ({p.share:.1%})  " + "#" * min(p.papers, 60))


def _print_summaries(papers: list[PaperSummary]) -> None:
    if not papers:
        typer.echo("no papers")
    for p in papers:
        cited = f"{p.citation_count} citations" if p.citation_count is not None else "citations n/a"
        meta = ", ".join(str(v) for v in (p.year, p.venue) if v)
        typer.echo(
            f"corpus:{p.external_id}  {p.title}" + (f" ({meta})" if meta else "") + f" — {cited}"
        )


@corpus_app.command("top-cited")
def top_cited_command(
    topic: Annotated[
        str | None, typer.Argument(help="Topic words (omit for the whole corpus).")
    ] = None,
    k: Annotated[int, typer.Option("--k", min=1)] = 10,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """The most cited papers about TOPIC."""
    from research_corpus.analytics import top_cited

    papers = run_in_session(data_dir, lambda session: top_cited(session, topic, k))
    typer.echo(_dump(papers)) if as_json else _print_summaries(papers)


@corpus_app.command()
def find(
    title: Annotated[str | None, typer.Option("--title")] = None,
    author: Annotated[str | None, typer.Option("--author")] = None,
    venue: Annotated[str | None, typer.Option("--venue")] = None,
    year: Annotated[int | None, typer.Option("--year")] = None,
    year_from: YearFrom = None,
    year_to: YearTo = None,
    limit: Annotated[int, typer.Option("--limit", min=1)] = 20,
    data_dir: DataDir = None,
    as_json: AsJson = False,
) -> None:
    """Metadata search: title / author / venue substrings, a year or a year range."""
    from research_corpus.analytics import find_papers

    papers = run_in_session(
        data_dir,
        lambda session: find_papers(
            session,
            title=title,
            author=author,
            venue=venue,
            year=year,
            year_from=year_from,
            year_to=year_to,
            limit=limit,
        ),
    )
    typer.echo(_dump(papers)) if as_json else _print_summaries(papers)
