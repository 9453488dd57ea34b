"""The ONNX export of a packaged model, made once per machine and kept in a cache keyed by the weights.

ONNX Runtime runs the embedding model (and, through the same cache, any other encoder whose
weights ship in a package) faster than PyTorch eager on a CPU. Nothing is downloaded: the graph
is traced from the installed weights with `torch.onnx.export(..., dynamo=False)`, the first time
a process needs it (or at set-up: `python -m research_corpus.embedding`), and written to

    <cache>/<name>-<sha256 of the weights, 16 hex>-v<EXPORT_VERSION>/model.onnx

so changed weights get a new export and every process, test and service of the machine shares
one file. A lock file serialises concurrent first uses (parallel services starting together wait
for one export instead of each tracing the model); the file appears under its final name only
when complete (written to a temporary name, then renamed).

The embedding graph contains the whole sentence-transformers pipeline after tokenisation:
BERT (batch and sequence axes dynamic), mean pooling over the attention mask and L2
normalisation — the same arithmetic as `SentenceTransformer.encode(normalize_embeddings=True)`.

The int8 variant (`quantized_sentence_encoder_onnx`) is made from that export on this machine,
next to it (`model.int8.onnx`), by ONNX Runtime's dynamic quantisation: the MatMul weights become
int8 per output channel, activations are quantised per call (no calibration data, so nothing but
the fp32 graph goes in and the same graph always gives the same file). That is the shipped recipe
(`SHIPPED_RECIPE`); the others of `RECIPES` (calibrated activations, sensitive MatMuls kept in
fp32) are measured against it by `bench/quantise.py`.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from research_platform.logging import get_logger

# Bump when the exported graph changes (inputs, pooling, opset): old exports are then ignored.
EXPORT_VERSION = 1
OPSET = 17
log = get_logger(__name__)


def default_cache_dir() -> Path:
    """Where ONNX exports are kept when the caller names no folder (the settings name one
    under `XDG_CACHE_HOME` when that is set: `CorpusSettings.onnx_cache_dir`)."""
    return Path.home() / ".cache" / "research-engine" / "onnx"


def weights_digest(model_dir: Path, key_files: Sequence[Path] = ()) -> str:
    """sha256 of the model's weight files (safetensors, else PyTorch bin) and of `key_files`
    (an adapter and head merged at export, say), 16 hex digits."""
    files = sorted(model_dir.glob("*.safetensors")) or sorted(model_dir.glob("*.bin"))
    if not files:
        raise FileNotFoundError(f"no weights (*.safetensors, *.bin) in {model_dir}")
    digest = hashlib.sha256()
    for file in [*files, *key_files]:
        with file.open("rb") as handle:
            digest.update(hashlib.file_digest(handle, "sha256").digest())
    return digest.hexdigest()[:16]


def cached_export(
    model_dir: Path,
    name: str,
    export: Callable[[Path, Path], None],
    cache_dir: Path | None = None,
    key_files: Sequence[Path] = (),
) -> Path:
    """The cached `model.onnx` of `model_dir` (+ `key_files`), made by `export(model_dir, target)` if missing.

    Side effects: creates the cache folder and, on the machine's first call, the export (seconds).
    """
    folder = (
        cache_dir or default_cache_dir()
    ) / f"{name}-{weights_digest(model_dir, key_files)}-v{EXPORT_VERSION}"
    target = folder / "model.onnx"
    if target.exists():
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if target.exists():  # another process exported while this one waited
            return target
        log.info("onnx.exporting", model=str(model_dir), target=str(target))
        handle, partial = tempfile.mkstemp(dir=folder, suffix=".onnx.partial")
        os.close(handle)
        try:
            export(model_dir, Path(partial))
            os.chmod(partial, 0o644)  # mkstemp makes it private; the cache is the machine's
            os.replace(partial, target)
        finally:
            Path(partial).unlink(missing_ok=True)
    return target


def inference_session(
    graph: Path, threads: int
) -> Any:  # an onnxruntime.InferenceSession (untyped)
    """An ONNX Runtime session of `graph` on the CPU: every graph optimisation, `threads` math threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    # Idle pool threads sleep instead of spin-waiting: the cores are shared by several
    # model-using processes, and a spinning thread burns CPU another process needs.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])


def trace_encoder(module: Any, target: Path, output: str) -> None:
    """Trace `module` (a torch module: `forward(input_ids, attention_mask, token_type_ids)`, int64
    (batch, sequence), to one tensor named `output`, batch first) to the ONNX graph `target`, the
    batch and sequence axes dynamic, with TorchScript tracing (`dynamo=False`) at opset `OPSET`."""
    import torch

    sample = torch.ones((2, 8), dtype=torch.long)
    inputs = ("input_ids", "attention_mask", "token_type_ids")
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter(
            "ignore"
        )  # tracer warnings about Python branches on shapes fixed at export
        torch.onnx.export(
            module,
            (sample, sample, torch.zeros_like(sample)),
            str(target),
            input_names=list(inputs),
            output_names=[output],
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in inputs}
            | {output: {0: "batch"}},
            opset_version=OPSET,
            dynamo=False,
        )


def export_sentence_encoder(model_dir: Path, target: Path) -> None:
    """Trace BERT + mean pooling + L2 normalisation to `target` (inputs: input_ids, attention_mask,
    token_type_ids, int64 (batch, sequence); output: `embedding`, float32 (batch, dim))."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()
    # Eager attention traces to plain MatMul/Softmax nodes, which ONNX Runtime's optimiser fuses;
    # the SDPA path traces shape-dependent branches.
    model = AutoModel.from_pretrained(
        str(model_dir), attn_implementation="eager", local_files_only=True
    ).eval()

    class MeanPooled(torch.nn.Module):
        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(
            self,
            input_ids: torch.Tensor,
            attention_mask: torch.Tensor,
            token_type_ids: torch.Tensor,
        ) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            # sentence-transformers' Pooling (mean tokens) and Normalize, step for step.
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    trace_encoder(MeanPooled(model), target, "embedding")


def sentence_encoder_onnx(model_dir: Path, name: str, cache_dir: Path | None = None) -> Path:
    """The cached ONNX sentence encoder of `model_dir` (exported on the machine's first call)."""
    return cached_export(model_dir, name, export_sentence_encoder, cache_dir)


# Bump when the shipped quantisation recipe changes: old int8 files are then ignored.
QUANTIZE_VERSION = 2


@dataclass(frozen=True)
class QuantizeRecipe:
    """How an int8 graph is made from the fp32 export.

    Always: MatMul weights int8 per output channel (symmetric) in 7 bits (`reduce_range`): on
    x86 CPUs without VNNI (AVX2 only) the u8 x s8 kernels sum pairs of products in 16 bits and
    saturate with full-range weights (measured on such a CPU over 500 SciFact sentences: cosine
    to fp32 mean 0.9916, worst 0.9646; with 7 bits 0.9926 and 0.9828).

    `calibrated`: activations quantised with fixed ranges measured on calibration text (static
    quantisation, QDQ format) instead of per call (dynamic). `keep_fp32`: MatMul nodes left in
    fp32, the ones whose quantisation alone moves the vectors most (`bench/quantise.py --scan`).
    """

    name: str
    calibrated: bool = False
    calibration_method: str = "MinMax"  # or Percentile (99.999th), Entropy
    keep_fp32: tuple[str, ...] = ()


def _matmuls(kind: str, layers: Sequence[int] = range(6)) -> tuple[str, ...]:
    """The MatMul nodes of `kind` (`output/dense`: the feed-forward output) in `layers`."""
    return tuple(f"/encoder/encoder/layer.{layer}/{kind}/MatMul" for layer in layers)


# The sensitivity scan (`bench/quantise.py --scan`, dynamic, each group quantised alone, cosine
# to fp32 on the selection sample): worst the feed-forward outputs (`output/dense`, mean 0.9967)
# and layer 0 (0.9983); every other kind >= 0.9984, every other layer >= 0.9987. One node at a
# time inside `output/dense` (`--within`): layer 0 (0.9986), then layer 2 (0.9991), the rest >= 0.9994.
_FEED_FORWARD_OUT = _matmuls("output/dense")
_LAYER_0 = tuple(
    node
    for kind in (
        "attention/self/query",
        "attention/self/key",
        "attention/self/value",
        "attention/output/dense",
        "intermediate/dense",
        "output/dense",
    )
    for node in _matmuls(kind, [0])
)
RECIPES = {
    recipe.name: recipe
    for recipe in (
        QuantizeRecipe("dynamic"),
        QuantizeRecipe("dynamic-keep-ffn-out-0-2", keep_fp32=_matmuls("output/dense", [0, 2])),
        QuantizeRecipe("dynamic-keep-ffn-out", keep_fp32=_FEED_FORWARD_OUT),
        QuantizeRecipe(
            "dynamic-keep-ffn-out-layer0",
            keep_fp32=tuple(dict.fromkeys(_FEED_FORWARD_OUT + _LAYER_0)),
        ),
        QuantizeRecipe("static", calibrated=True),
        QuantizeRecipe("static-percentile", calibrated=True, calibration_method="Percentile"),
    )
}
# The recipe `CORPUS__EMBED_PRECISION=int8` runs (cached as `model.int8-q<QUANTIZE_VERSION>.onnx`).
SHIPPED_RECIPE = RECIPES["dynamic"]


class TextCalibration:
    """Calibration feeds for static quantisation: `texts` tokenised one per feed, in the inputs of
    the exported encoder (onnxruntime's `CalibrationDataReader` protocol). Every feed has `length`
    tokens (truncated or padded): the histogram calibrators stack the feeds' tensors."""

    def __init__(self, model_dir: Path, texts: Sequence[str], length: int = 128) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tokenizer.enable_truncation(max_length=length)
        tokenizer.enable_padding(length=length, pad_id=tokenizer.token_to_id("[PAD]") or 0)
        self.feeds = [
            {
                "input_ids": np.array([e.ids], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids], dtype=np.int64),
            }
            for e in tokenizer.encode_batch(list(texts))
        ]
        self.position = 0

    def get_next(self) -> dict[str, Any] | None:
        if self.position >= len(self.feeds):
            return None
        self.position += 1
        return self.feeds[self.position - 1]

    def rewind(self) -> None:
        self.position = 0


def quantize_int8(
    fp32: Path,
    target: Path,
    recipe: QuantizeRecipe = SHIPPED_RECIPE,
    calibration: TextCalibration | None = None,
    only: Sequence[str] = (),
) -> None:
    """Quantise `fp32` into `target` by `recipe`; deterministic for a given graph (and calibration).

    `calibration` is required by a calibrated recipe. `only` restricts quantisation to these
    MatMul nodes (a sensitivity scan quantises one at a time)."""
    from onnxruntime.quantization import (
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_dynamic,
        quantize_static,
    )

    common: dict[str, Any] = {
        "weight_type": QuantType.QInt8,
        "per_channel": True,
        "reduce_range": True,
        "op_types_to_quantize": ["MatMul"],
        "nodes_to_exclude": list(recipe.keep_fp32),
        "nodes_to_quantize": list(only) or None,
    }
    if not recipe.calibrated:
        quantize_dynamic(str(fp32), str(target), **common)
        return
    if calibration is None:
        raise ValueError(f"the {recipe.name} recipe is calibrated: pass calibration text")
    calibration.rewind()
    quantize_static(
        str(fp32),
        str(target),
        calibration,  # onnxruntime reads it through its reader protocol (get_next)
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8,
        calibrate_method=CalibrationMethod[recipe.calibration_method],
        extra_options={"CalibPercentile": 99.999},
        calibration_providers=["CPUExecutionProvider"],
        **common,
    )


def quantized_sentence_encoder_onnx(
    model_dir: Path, name: str, cache_dir: Path | None = None
) -> Path:
    """The cached int8 sentence encoder of `model_dir`, quantised from the fp32 export (made first
    if missing) on the machine's first call; kept beside it as `model.int8-q<version>.onnx`."""
    fp32 = sentence_encoder_onnx(model_dir, name, cache_dir)
    target = fp32.with_name(f"model.int8-q{QUANTIZE_VERSION}.onnx")
    if target.exists():
        return target
    with (fp32.parent / "export.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.exists():
            return target
        log.info("onnx.quantizing", source=str(fp32), target=str(target))
        handle, partial = tempfile.mkstemp(dir=fp32.parent, suffix=".onnx.partial")
        os.close(handle)
        try:
            quantize_int8(fp32, Path(partial))
            os.chmod(partial, 0o644)
            os.replace(partial, target)
        finally:
            Path(partial).unlink(missing_ok=True)
    return target
