"""Chunk vectors are COPYed in pgvector's binary half-precision form, made by numpy: what is
stored is the model's vector rounded as the server's own float -> halfvec cast rounds it (real
Postgres + pgvector)."""

from __future__ import annotations

import numpy as np
import pytest
from sqlalchemy import text

from research_corpus.ingest import ingest_path
from research_corpus.repository import halfvec_binary
from tests.corpus.test_ingest_pipeline import TextKeyedModel, vector_of

pytestmark = pytest.mark.integration


async def test_stored_vectors_are_the_models_rounded_as_the_server_rounds(
    empty_corpus, small_corpus
):
    await ingest_path(
        empty_corpus, small_corpus, fmt="jsonl", progress=False, embedder=TextKeyedModel()
    )
    async with empty_corpus() as session:
        rows = (
            await session.execute(
                text(
                    "SELECT p.title, c.text, CAST(c.embedding AS real[]) FROM corpus_chunks c"
                    " JOIN corpus_papers p ON p.id = c.paper_id"
                )
            )
        ).all()
        assert len(rows) == 6
        for title, body, stored in rows:
            model = vector_of(f"{title} {body}".strip())
            assert stored == model.astype(np.float16).astype(np.float32).tolist()
        # halfway cases and the extremes, through the server's cast and through our encoding
        probe = np.array(
            [1 + 2**-11, 1 + 3 * 2**-11, -(2**-25), 65504, -65504, 6e-8, 0.1, 1 / 3] * 48,
            dtype=np.float32,
        )
        literal = "[" + ",".join(repr(float(x)) for x in probe) + "]"
        server = await session.scalar(
            text("SELECT CAST(CAST(CAST(:v AS vector) AS halfvec) AS real[])"), {"v": literal}
        )
        ours = np.frombuffer(halfvec_binary(probe[None, :])[0][4:], dtype=">f2")
        assert server == ours.astype(np.float32).tolist()


def test_a_vector_that_half_precision_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="not finite in half precision"):
        halfvec_binary(np.array([[0.5, np.nan]], dtype=np.float32))
    with pytest.raises(ValueError, match="not finite in half precision"):
        halfvec_binary(np.array([[70000.0, 0.0]], dtype=np.float32))
    assert halfvec_binary(np.zeros((2, 3), dtype=np.float32))[0][:4] == b"\x00\x03\x00\x00"
