"""A library import killed outright (SIGKILL, no `finally`) resumes where it stopped: the next
import embeds only the papers the killed one had not committed, and the corpus ends as a clean
import leaves it (real Postgres, a database of its own; a stand-in model that counts its texts).

The killed import runs in a child process through the path `research-engine corpus ingest
FILE.bib` takes (`ingest_path`, format detected from the file); its model kills the process on
its fourth call, so batches are in every state at once: committed, being written, being
embedded."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from sqlalchemy import make_url, text

from research_corpus.ingest import ingest_path
from research_platform.db import create_engine, session_factory
from research_platform.migrate import upgrade
from tests.corpus.conftest import _create_database, _in_thread
from tests.corpus.test_ingest_pipeline import TextKeyedModel

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[2]
PAPERS = 60
BATCH = 8

# The child: the CLI's import path with a model that dies (SIGKILL) on its `KILL_ON`-th call,
# after writing every text it was given before to a file (what was embedded before the kill).
CHILD = """
import asyncio, os, signal, sys
from research_corpus.ingest import ingest_path
from research_platform.db import create_engine, session_factory
from tests.corpus.test_ingest_pipeline import TextKeyedModel

url, library, log, kill_on, batch = sys.argv[1:6]

class Dying(TextKeyedModel):
    def embed(self, texts):
        if len(self.calls) + 1 == int(kill_on):
            os.kill(os.getpid(), signal.SIGKILL)
        with open(log, "a") as out:
            out.writelines(t.replace(chr(10), " ") + chr(10) for t in texts)
        return super().embed(texts)

async def main():
    engine = create_engine(url)
    await ingest_path(session_factory(engine), library, fmt="auto", progress=False,
                      embedder=Dying(), batch_papers=int(batch))

asyncio.run(main())
"""


def _library(path: Path) -> Path:
    """A BibTeX export of `PAPERS` records, half with a DOI, each with its own abstract."""
    entries = []
    for i in range(PAPERS):
        doi = f"  doi = {{10.5555/lib.{i}}},\n" if i % 2 == 0 else ""
        entries.append(
            f"@article{{paper{i},\n  title = {{Trial {i} of compound {i * 7}}},\n"
            f"  author = {{Ruiz, Ana and Chen, Bo}},\n  year = {{{2000 + i % 20}}},\n"
            f"  journal = {{Journal {i % 5}}},\n{doi}"
            f"  abstract = {{We randomly assigned {100 + i} adults to compound {i * 7} or placebo. "
            f"The primary outcome fell by {i % 30} percent over {i % 4 + 1} years.}}\n}}\n"
        )
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


async def _rows(url: str) -> list[tuple[object, ...]]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT p.external_id, p.content_hash, c.chunk_index, c.text, c.token_count,"
                    " CAST(c.embedding AS text),"
                    " (SELECT count(*) FROM corpus_postings ps WHERE ps.chunk_id = c.id)"
                    " FROM corpus_papers p JOIN corpus_chunks c ON c.paper_id = p.id"
                    " ORDER BY p.external_id, c.chunk_index"
                )
            )
            return [tuple(r) for r in rows]
    finally:
        await engine.dispose()


async def _statistics(url: str) -> tuple[object, ...]:
    engine = create_engine(url)
    try:
        async with engine.connect() as conn:
            lexemes = (
                await conn.execute(text("SELECT lexeme, doc_freq FROM corpus_lexemes ORDER BY 1"))
            ).all()
            stats = (await conn.execute(text("SELECT chunks, avg_doc_len FROM corpus_stats"))).all()
            return tuple(lexemes), tuple(stats)
    finally:
        await engine.dispose()


def _database(servers) -> str:
    name = f"killed_{uuid.uuid4().hex[:8]}"
    _in_thread(lambda: asyncio.run(_create_database(servers.database_url, name)))
    url = make_url(servers.database_url).set(database=name).render_as_string(hide_password=False)
    _in_thread(upgrade, url)
    return url


def test_a_killed_library_import_resumes_without_re_embedding_what_it_stored(
    servers, tmp_path
) -> None:
    library = _library(tmp_path / "library.bib")
    url = _database(servers)
    log = tmp_path / "embedded.txt"
    child = subprocess.run(
        [sys.executable, "-c", CHILD, url, str(library), str(log), "4", str(BATCH)],
        check=False,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), *sys.path])},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr[-3000:]
    before_kill = log.read_text().splitlines()
    assert len(before_kill) == 3 * BATCH  # three batches were embedded, one paper = one chunk

    kept = asyncio.run(_rows(url))
    stored = {row[0] for row in kept}
    assert 0 < len(stored) < PAPERS  # some batches committed, not all
    assert len(stored) % BATCH == 0  # whole batches: a batch is one transaction

    model = TextKeyedModel()
    engine = create_engine(url)

    async def resume() -> object:
        try:
            return await ingest_path(
                session_factory(engine),
                library,
                fmt="auto",
                progress=False,
                embedder=model,  # type: ignore[arg-type]  # a stand-in with the embedder's interface
                batch_papers=BATCH,
            )
        finally:
            await engine.dispose()

    report = asyncio.run(resume())
    assert (report.added, report.unchanged, report.errors) == (  # type: ignore[attr-defined]
        PAPERS - len(stored),
        len(stored),
        [],
    )
    assert len(model.texts) == PAPERS - len(stored)  # only the papers the kill lost
    assert not [t for t in model.texts for row in kept if t.endswith(str(row[3]))]
    resumed = asyncio.run(_rows(url))
    assert [r for r in resumed if r[0] in stored] == kept  # what was stored is untouched

    clean_url = _database(servers)
    clean_engine = create_engine(clean_url)

    async def clean() -> None:
        try:
            await ingest_path(
                session_factory(clean_engine),
                library,
                fmt="auto",
                progress=False,
                embedder=TextKeyedModel(),  # type: ignore[arg-type]  # a stand-in with the embedder's interface
                batch_papers=BATCH,
            )
        finally:
            await clean_engine.dispose()

    asyncio.run(clean())
    assert resumed == asyncio.run(_rows(clean_url))  # the same rows and vectors as a clean import
    assert asyncio.run(_statistics(url)) == asyncio.run(_statistics(clean_url))
