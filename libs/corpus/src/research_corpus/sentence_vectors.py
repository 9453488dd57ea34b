"""`SentenceVectors`: the stored vector of every sentence of the corpus (`corpus_sentences`).

The offline engine scores each evidence sentence against the question by embedding cosine;
embedding ~50 sentences per task at run time costs far more than the rest of the task. Each
distinct corpus sentence is embedded once and stored under `sentences.sentence_key`: by the first
request that reads its paper (the default; the researcher embeds what `vectors_of` did not find
and `keep`s it), or by the ingest with the chunks of the same batch (`corpus.sentence_vectors =
"ingest"`). A task then fetches the vectors of all its evidence sentences in one query
(`vectors_of`). Sentences the corpus never held (outside sources) are never stored and are
embedded by the engine every time.

Rows are keyed by content, never by paper: a sentence shared by two papers is stored once, a
re-ingested paper's new sentences are added, and a row is never rewritten (same text, same
model, same vector), so writes are `INSERT … ON CONFLICT DO NOTHING`.

The vectors are handed only to a process whose embedder is the model that made them (the
corpus's stamp, `research_corpus.stamp`): with another model or precision `vectors_of` finds
nothing (the caller embeds the sentences itself, as for outside sources) and logs why.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from sqlalchemy import LargeBinary, bindparam, select, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.ext.asyncio import AsyncSession

from research_corpus import stamp
from research_corpus.errors import EmbeddingModelMismatch
from research_corpus.sentences import sentence_key
from research_platform.logging import get_logger
from research_platform.tables import CorpusSentence

log = get_logger(__name__)

_STAGING = "corpus_sentence_load"
_CREATE_STAGING = f"CREATE TEMP TABLE IF NOT EXISTS {_STAGING} (key bytea, embedding real[]) ON COMMIT DELETE ROWS"
_LOAD = text(
    f"""INSERT INTO corpus_sentences (key, embedding)
        SELECT key, CAST(embedding AS vector) FROM {_STAGING}
        ON CONFLICT (key) DO NOTHING"""  # noqa: S608 - a constant table name
)


_VECTORS_OF = text(
    "SELECT key, CAST(embedding AS real[]) FROM corpus_sentences WHERE key = ANY(:keys)"
).bindparams(bindparam("keys", type_=ARRAY(LargeBinary)))


class SentenceVectors:
    """Reads and writes of `corpus_sentences` within the caller's session."""

    def __init__(self, session: AsyncSession) -> None:
        self.session = session

    async def unknown(self, keys: Sequence[bytes]) -> set[bytes]:
        """The `keys` that have no stored vector yet."""
        if not keys:
            return set()
        stored = await self.session.scalars(
            select(CorpusSentence.key).where(CorpusSentence.key.in_(list(set(keys))))
        )
        return set(keys) - set(stored)

    async def keep(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        """Store the vectors of `keys` (row i of `vectors` for key i); keys already stored are left."""
        if not keys:
            return
        records = list(zip(keys, vectors.astype(np.float32).tolist(), strict=True))
        # Through the session first: that opens its transaction, so the COPY below lands in it
        # (a COPY on the bare driver connection would commit alone and its rows be deleted).
        await self.session.execute(text(_CREATE_STAGING))
        connection = await self.session.connection()
        raw = (await connection.get_raw_connection()).driver_connection
        assert raw is not None, "an open connection has its driver's"
        await raw.copy_records_to_table(_STAGING, records=records, columns=("key", "embedding"))
        await self.session.execute(_LOAD)
        await self.session.execute(text(f"DELETE FROM {_STAGING}"))  # noqa: S608 - a constant table name

    async def usable(self, model: str | None = None) -> bool:
        """Whether the stored vectors are `model`'s (default: the process embedder's), by the
        corpus's stamp: only then may they be read, or vectors made by `model` be added."""
        if model is None:
            from research_corpus.embedding import get_embedder

            model = get_embedder().model_id
        stored = await stamp.read(self.session)
        try:
            stamp.check(
                stored.model if stored else None,
                stored.reembedding_to if stored else None,
                model,
            )
        except EmbeddingModelMismatch as exc:
            log.warning("corpus.sentence_vectors_unusable", reason=str(exc))
            return False
        return True

    async def vectors_of(
        self, sentences: Iterable[str], model: str | None = None
    ) -> dict[str, list[float]]:
        """The stored vector of each of `sentences` that has one, by sentence text; none when the
        corpus was embedded by another model than `model` (default: the process embedder's)."""
        by_key: dict[bytes, list[str]] = {}
        for sentence in sentences:
            by_key.setdefault(sentence_key(sentence), []).append(sentence)
        if not by_key or not await self.usable(model):
            return {}
        # As real[]: asyncpg decodes a float array in C, where pgvector's text form is parsed
        # float by float in Python (384 per sentence, ~50 sentences per task). `= ANY(array)`,
        # not `IN (…)`: one statement whatever the count, so it stays in the prepared-statement cache.
        # Plain SQL: the driver's lists come back as they are (an ARRAY(REAL) column type would
        # run a Python processor over every float again).
        rows = await self.session.execute(_VECTORS_OF, {"keys": list(by_key)})
        found: dict[str, list[float]] = {}
        for key, vector in rows:
            for sentence in by_key[key]:
                found[sentence] = vector
        return found
