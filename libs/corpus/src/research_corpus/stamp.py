"""Which model made the corpus's vectors: the `corpus_embedding` row, and the checks around it.

Stored vectors (chunks, sentences) and query vectors must come from one model: an fp32 query
against int8 chunks (or the reverse) still returns results, only slightly wrong ones, so the
mix is refused instead of happening silently.

- The ingest stamps an empty corpus with its embedder's `model_id` and refuses to add vectors of
  another model to a non-empty one (`claim_for_ingest`).
- Dense search reads the stamp in the round trip that sets its HNSW knobs and raises
  `EmbeddingModelMismatch` when it differs from the query embedder's (`check`).
- Stored sentence vectors are not handed to a process with another model (they are embedded
  again instead, and a warning says why).
- `research-engine corpus reembed` (`research_corpus.reembed`) converts the vectors: it sets
  `reembedding_to` first (searches are refused while vectors are mixed) and the new `model` last.
A corpus with no stamp (empty, or created before the table existed and never ingested) is
accepted by every check.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from research_corpus.errors import EmbeddingModelMismatch

# Fragments other queries embed, so the check costs no round trip of its own.
STORED_MODEL_SQL = "(SELECT model FROM corpus_embedding WHERE id = 1)"
REEMBEDDING_TO_SQL = "(SELECT reembedding_to FROM corpus_embedding WHERE id = 1)"


@dataclass(frozen=True)
class Stamp:
    model: str
    reembedding_to: str | None = None


def check(stored: str | None, reembedding_to: str | None, running: str | None) -> None:
    """Raise `EmbeddingModelMismatch` unless vectors of `running` may be compared with the corpus's."""
    if stored is None or running is None:
        return
    if reembedding_to is not None or stored != running:
        raise EmbeddingModelMismatch(stored, running, reembedding_to)


async def read(session: AsyncSession) -> Stamp | None:
    row = (
        await session.execute(
            text("SELECT model, reembedding_to FROM corpus_embedding WHERE id = 1")
        )
    ).first()
    return Stamp(row.model, row.reembedding_to) if row else None


async def write(session: AsyncSession, model: str, reembedding_to: str | None = None) -> None:
    await session.execute(
        text(
            "INSERT INTO corpus_embedding (id, model, reembedding_to) VALUES (1, :model, :to) "
            "ON CONFLICT (id) DO UPDATE SET model = EXCLUDED.model, "
            "reembedding_to = EXCLUDED.reembedding_to, updated_at = now()"
        ),
        {"model": model, "to": reembedding_to},
    )


async def _holds_vectors(session: AsyncSession) -> bool:
    return bool(
        (
            await session.execute(
                text(
                    "SELECT EXISTS (SELECT 1 FROM corpus_chunks) "
                    "OR EXISTS (SELECT 1 FROM corpus_sentences)"
                )
            )
        ).scalar_one()
    )


async def claim_for_ingest(session: AsyncSession, model: str) -> None:
    """Before vectors of `model` are written (an ingest's start, and each batch's transaction):
    stamp a corpus that holds no vectors (a stamp left by a corpus emptied since is replaced),
    refuse one whose vectors come from another model or are being re-embedded.

    Runs in the caller's transaction. The usual case (the stamp is `model`) takes a share lock on
    the stamp row, so concurrent ingest workers do not wait for each other while `reembed`, which
    updates the row, waits for their batches (and they for it). Any other case locks the row for
    update without holding the share lock first: two workers that both held it and then asked to
    update it would deadlock (each waiting for the other's share lock)."""
    row = (
        await session.execute(
            text("SELECT model, reembedding_to FROM corpus_embedding WHERE id = 1")
        )
    ).first()
    if row is not None and row.model == model and row.reembedding_to is None:
        row = (
            await session.execute(
                text("SELECT model, reembedding_to FROM corpus_embedding WHERE id = 1 FOR SHARE")
            )
        ).one()
        check(row.model, row.reembedding_to, model)  # changed in between: a reembed began
        return
    await session.execute(
        text(
            "INSERT INTO corpus_embedding (id, model) VALUES (1, :model) ON CONFLICT (id) DO NOTHING"
        ),
        {"model": model},
    )
    row = (
        await session.execute(
            text("SELECT model, reembedding_to FROM corpus_embedding WHERE id = 1 FOR UPDATE")
        )
    ).one()
    if row.model == model and row.reembedding_to is None:
        return
    if not await _holds_vectors(session):
        await write(session, model)
        return
    check(row.model, row.reembedding_to, model)
