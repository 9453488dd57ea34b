"""Set-up: export the bundled embedding model (and its int8 quantisation) to the ONNX cache now,
rather than on a process's first use: `python -m research_corpus.embedding [--cache-dir DIR]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from research_corpus.embedding.model import MODEL_NAME, bundled_model_path
from research_corpus.onnx_export import quantized_sentence_encoder_onnx, sentence_encoder_onnx
from research_platform.settings import Settings


def main(configured: str | None) -> None:
    """Export to `--cache-dir`, else to `configured` (`CORPUS__ONNX_CACHE_DIR`), else the default."""
    parser = argparse.ArgumentParser(
        prog="python -m research_corpus.embedding",
        description="Export the bundled all-MiniLM-L6-v2 (and its int8 quantisation) to the ONNX cache.",
    )
    parser.add_argument("--cache-dir", type=Path, default=Path(configured) if configured else None)
    args = parser.parse_args()
    print(sentence_encoder_onnx(bundled_model_path(), MODEL_NAME, args.cache_dir))
    print(quantized_sentence_encoder_onnx(bundled_model_path(), MODEL_NAME, args.cache_dir))


if __name__ == "__main__":
    main(Settings().corpus.onnx_cache_dir)  # the entry point: the environment's settings
