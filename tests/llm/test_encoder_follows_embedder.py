"""The offline engine's encoder is the process's embedder of the moment: configured again (an
entry point, or a test starting a second app), the vectors a service handed to the embedder's
cache (`remember`) are the ones the offline engine finds — it never keeps an embedder that was
replaced."""

from __future__ import annotations

import numpy as np
import pytest

from research_corpus.embedding import configure_embedder, get_embedder
from research_llm.offline.relevance import default_encoder
from research_platform.settings import CorpusSettings

pytestmark = pytest.mark.unit


def test_a_remembered_vector_is_found_after_the_embedder_is_configured_again() -> None:
    encoder = default_encoder()
    if encoder is None:
        pytest.skip("the bundled embedding model is not installed")
    try:
        configure_embedder(CorpusSettings(embed_batch_size=7))  # a new process-wide embedder
        marker = np.zeros(get_embedder().dim, dtype=np.float32)
        marker[0] = 1.0
        get_embedder().remember("a question only the cache knows", marker)  # type: ignore[attr-defined]  # the micro-batching embedder's cache
        (vector,) = encoder.encode(["a question only the cache knows"])
        assert np.allclose(np.asarray(vector), marker)
    finally:
        configure_embedder(CorpusSettings())
