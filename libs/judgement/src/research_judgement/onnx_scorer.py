"""`CrossEncoder` on ONNX Runtime: the same `logits(pairs)`, from a graph with the LoRA merged in.

The graph is traced once per machine from the torch `CrossEncoder` (packaged base weights +
the adapter merged by peft + the head: encoder → mean pooling → linear head, one ONNX graph with
dynamic batch and sequence axes) and cached by the hash of the base weights, the adapter and the
head (`research_corpus.onnx_export`), so retrained files get a new export. Pairs are tokenised by
the base model's own `tokenizer.json` (the Rust tokenizer the torch path uses through
transformers), with the same longest-first truncation and token type ids.

Logits agree with the torch path to ~1e-5 (probabilities within 1e-3:
tests/judgement/test_onnx_scorer.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from research_judgement.scorer import CrossEncoder, base_model_path, mean_pool
from research_platform.offline import keep_models_offline

# The files of a shipped model folder that the export merges; their bytes key the cache.
MODEL_FILES = ("adapter_model.safetensors", "adapter_config.json", "head.safetensors")


def _export(folder: Path, max_length: int) -> Callable[[Path, Path], None]:
    def export(_base: Path, target: Path) -> None:
        import torch

        from research_corpus.onnx_export import trace_encoder

        scorer = CrossEncoder.load(folder, max_length)
        encoder, head = scorer.encoder, scorer.head
        if hasattr(encoder, "set_attn_implementation"):
            encoder.set_attn_implementation(
                "eager"
            )  # plain MatMul/Softmax nodes, which the optimiser fuses

        class Scored(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.encoder, self.head = encoder, head

            def forward(
                self,
                input_ids: torch.Tensor,
                attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor,
            ) -> torch.Tensor:
                hidden = self.encoder(
                    input_ids=input_ids,
                    attention_mask=attention_mask,
                    token_type_ids=token_type_ids,
                ).last_hidden_state
                logits: torch.Tensor = self.head(mean_pool(hidden, attention_mask))
                return logits

        trace_encoder(Scored().eval(), target, "logits")

    return export


class OnnxCrossEncoder:
    """A pair scorer with `CrossEncoder`'s interface: `logits(pairs)` → (n, n_out) float32. Thread-safe."""

    def __init__(self, session: Any, tokenizer: Any, max_length: int) -> None:
        self.session, self.tokenizer, self.max_length = session, tokenizer, max_length
        self.n_out = int(session.get_outputs()[0].shape[1])

    @classmethod
    def load(
        cls,
        folder: str | Path,
        max_length: int,
        threads: int | None = None,
        cache_dir: Path | None = None,
    ) -> OnnxCrossEncoder:
        """The cached export of the model in `folder` (exported on the machine's first call)."""
        from tokenizers import Tokenizer

        from research_corpus.embedding import default_threads
        from research_corpus.onnx_export import cached_export, inference_session

        keep_models_offline()
        folder = Path(folder)
        base = base_model_path()
        graph = cached_export(
            base,
            f"judgement-{folder.name}",
            _export(folder, max_length),
            cache_dir,
            key_files=[folder / name for name in MODEL_FILES if (folder / name).exists()],
        )
        tokenizer = Tokenizer.from_file(str(base / "tokenizer.json"))
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=max_length, strategy="longest_first")
        return cls(inference_session(graph, threads or default_threads()), tokenizer, max_length)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Head outputs for `pairs` (first text, second text), batched by length to waste no padding."""
        if not pairs:
            return np.zeros((0, self.n_out), dtype=np.float32)
        encodings = self.tokenizer.encode_batch([(a, b) for a, b in pairs])
        lengths = np.array([len(e.ids) for e in encodings])
        order = np.argsort(lengths, kind="stable")
        out = np.zeros((len(pairs), self.n_out), dtype=np.float32)
        for start in range(
            0, len(order), batch_size
        ):  # ONNX Runtime sessions run concurrently: no lock
            rows = order[start : start + batch_size]
            width = int(lengths[rows].max())
            ids = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for i, row in enumerate(rows):
                n = lengths[row]
                ids[i, :n], types[i, :n], mask[i, :n] = (
                    encodings[row].ids,
                    encodings[row].type_ids,
                    1,
                )
            out[rows] = self.session.run(
                ["logits"], {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            )[0]
        return out
