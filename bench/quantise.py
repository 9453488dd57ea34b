"""Int8 recipes of the sentence encoder, measured step by step (issue 48): how close each stays to fp32.

A recipe (`research_corpus.onnx_export.RECIPES`) is quantised from this machine's fp32 export
into a scratch folder and measured on fixed samples of SciFact corpus text (never the test
queries):

- **cosine to fp32** over the 500 sentences the fidelity test uses (`tests/corpus`; mean and
  worst) and over 200 chunk texts (`title + abstract`, as the ingest embeds a chunk);
- with `--data-dir DIR` (a database holding the whole corpus: `bench/full_corpus.py`), **hybrid
  nDCG@10 and Recall@100 on SciFact test** through the engine's search: the fp32 reference
  first (the corpus must then be stamped fp32, or pass `--ndcg-fp32`), then per recipe the
  corpus re-embedded with its graph (`corpus reembed`, forced) and the test queries run. The
  corpus is left in the last recipe's vectors: `research-engine corpus reembed` restores fp32.

`--scan` quantises one group of MatMuls at a time (a layer, or one kind in every layer; `--recipe`
decides how) and prints the selection sample's cosine to fp32 (60 texts of other papers), worst
first: a recipe's `keep_fp32` nodes come from the worst groups (`--within GROUP`: that group's
MatMuls one at a time). Calibrated recipes calibrate on a
third disjoint sample (128 texts: sentences and chunk texts of random papers).

    .venv/bin/python bench/quantise.py --recipes dynamic static [--data-dir DIR]
    .venv/bin/python bench/quantise.py --scan [--recipe dynamic] [--within output/dense]

Prints one `bench:quantise recipe=… cosine_mean=… cosine_worst=… [ndcg10=… ndcg10_fp32=… delta=…]`
line per recipe (recorded in bench/results.jsonl).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.corpus_database import bench_database, require_scifact
from bench.harness.results import print_summary

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact"
FIDELITY_SENTENCES = 500
SEED = 48


def corpus_samples(data: Path) -> dict[str, list[str]]:
    """The fixed samples: `fidelity` (the first 500 distinct sentences, as `tests/corpus` takes
    them), `chunks` (200 chunk texts), and from random other papers `selection` and
    `calibration` (sentences and chunk texts, disjoint)."""
    from research_corpus.sentences import split_sentences

    papers = [json.loads(line) for line in (data / "corpus.jsonl").read_text().splitlines()]
    fidelity: dict[str, None] = {}
    used = 0
    for paper in papers:
        if len(fidelity) >= FIDELITY_SENTENCES:
            break
        used += 1
        for span in split_sentences(" ".join(paper["abstract"])):
            fidelity.setdefault(" ".join(span.text.split()))
    rest = papers[used:]
    random.Random(SEED).shuffle(rest)

    def chunk(paper: dict[str, Any]) -> str:
        return f"{paper['title']} {' '.join(paper['abstract'])}".strip()

    def sentences(group: list[dict[str, Any]]) -> list[str]:
        spans = (
            " ".join(split_sentences(" ".join(p["abstract"]))[0].text.split())
            for p in group
            if p["abstract"]
        )
        return list(spans)

    return {
        "fidelity": list(fidelity)[:FIDELITY_SENTENCES],
        "chunks": [chunk(p) for p in rest[:200]],
        "selection": sentences(rest[200:300]) + [chunk(p) for p in rest[300:400]],
        "calibration": sentences(rest[400:464]) + [chunk(p) for p in rest[464:528]],
    }


def encoder(graph: Path, dynamic: bool) -> Any:
    """An ONNX encoder of `graph`: dynamic int8 one text per call (its activations are quantised
    per call), fp32 and calibrated int8 in batches (their vectors do not depend on the batch)."""
    from research_corpus.embedding import bundled_model_path
    from research_corpus.embedding.embedder import OnnxEncoder

    return OnnxEncoder(bundled_model_path(), 1, graph=graph, precision="int8", dynamic=dynamic)


def cosines(reference: np.ndarray, got: np.ndarray) -> np.ndarray:
    return np.sum(reference * got, axis=1)  # both unit length


def matmul_groups(fp32: Path) -> dict[str, list[str]]:
    """The graph's MatMul nodes grouped by layer (`layer.3`) and by kind across layers
    (`attention/self/query`, `output/dense`, ...)."""
    import onnx

    groups: dict[str, list[str]] = {}
    for node in onnx.load(str(fp32), load_external_data=False).graph.node:
        if node.op_type == "MatMul" and "/layer." in node.name:
            layer, kind = node.name.split("/layer.")[1].split("/", 1)
            groups.setdefault(f"layer.{layer}", []).append(node.name)
            groups.setdefault(kind.removesuffix("/MatMul"), []).append(node.name)
    return groups


def scan(args: argparse.Namespace, fp32: Path, samples: dict[str, list[str]]) -> None:
    """Quantise one group of MatMuls at a time (a layer, or a kind in every layer): the cosine of
    the selection sample to fp32, worst first. Groups, not single nodes: 14 quantisations instead
    of 48 on a shared 2-core machine."""
    from research_corpus.embedding import bundled_model_path
    from research_corpus.onnx_export import RECIPES, TextCalibration, quantize_int8

    recipe = RECIPES[args.recipe]
    texts = (
        samples["selection"][: args.scan_texts // 2]
        + samples["selection"][100:][: args.scan_texts // 2]
    )
    reference = encoder(fp32, dynamic=False).encode(texts, 32)
    calibration = (
        TextCalibration(
            bundled_model_path(), samples["calibration"][:32] + samples["calibration"][64:96]
        )
        if recipe.calibrated
        else None
    )
    groups = matmul_groups(fp32)
    if args.within:  # one node at a time inside one group
        groups = {node: [node] for node in groups[args.within]}
    rows = []
    for group, nodes in groups.items():
        target = fp32.with_name("one-group.onnx")
        quantize_int8(fp32, target, recipe, calibration, only=nodes)
        found = cosines(reference, encoder(target, dynamic=not recipe.calibrated).encode(texts, 32))
        rows.append((float(found.mean()), float(found.min()), group))
        print(f"{found.mean():.5f} {found.min():.5f} {group}", flush=True)
    print("worst first (mean, worst):")
    for mean, worst, group in sorted(rows):
        print(f"{mean:.5f} {worst:.5f} {group}")


async def hybrid(database_url: str, embedder: Any) -> dict[str, float]:
    from retrieval import evaluate, load_split

    from research_platform.db import create_engine, session_factory
    from research_platform.settings import get_settings

    engine = create_engine(database_url)
    try:
        queries, qrels = load_split(DATA, "test")
        return await evaluate(
            session_factory(engine), queries, qrels, "hybrid", get_settings().corpus, embedder
        )
    finally:
        await engine.dispose()


async def reembed_with(database_url: str, embedder: Any) -> float:
    from research_corpus.reembed import reembed
    from research_platform.db import create_engine, session_factory

    engine = create_engine(database_url)
    try:
        report = await reembed(session_factory(engine), embedder, force=True)
    finally:
        await engine.dispose()
    return report.seconds


def measure(args: argparse.Namespace, fp32: Path, samples: dict[str, list[str]]) -> None:
    from research_corpus.embedding import Embedder, bundled_model_path
    from research_corpus.onnx_export import RECIPES, TextCalibration, quantize_int8

    reference = encoder(fp32, dynamic=False)
    fidelity = reference.encode(samples["fidelity"], 32)
    chunks = reference.encode(samples["chunks"], 32)
    calibration = TextCalibration(bundled_model_path(), samples["calibration"])
    with tempfile.TemporaryDirectory(prefix="re-quantise-") as scratch:
        graphs: dict[str, Path] = {}
        figures: dict[str, str] = {}
        for name in args.recipes:
            recipe = RECIPES[name]
            graphs[name] = Path(scratch) / f"{name}.onnx"
            quantize_int8(fp32, graphs[name], recipe, calibration)
            model = encoder(graphs[name], dynamic=not recipe.calibrated)
            found = cosines(fidelity, model.encode(samples["fidelity"], 32))
            chunk = cosines(chunks, model.encode(samples["chunks"], 32))
            figures[name] = (
                f"cosine_mean={found.mean():.4f} cosine_worst={found.min():.4f} "
                f"chunk_cosine_mean={chunk.mean():.4f} chunk_cosine_worst={chunk.min():.4f}"
            )
            print(f"{name}: {figures[name]}", flush=True)
        if args.data_dir is None:
            for name in args.recipes:
                print_summary(f"bench:quantise recipe={name} {figures[name]}")
            return
        require_scifact(DATA)
        with bench_database(None, args.data_dir, "re-bench-quantise-", stop_reused=True) as url:
            baseline = args.ndcg_fp32
            if baseline is None:
                h = asyncio.run(hybrid(url, Embedder(threads=1)))
                baseline = h["ndcg@10"]
                print(
                    f"fp32: hybrid nDCG@10 {baseline:.4f} R@100 {h['recall@100']:.4f}", flush=True
                )
            for name in args.recipes:
                embedder = Embedder(
                    threads=1,
                    precision="int8",
                    graph=graphs[name],
                    dynamic=not RECIPES[name].calibrated,
                )
                started = time.perf_counter()
                took = asyncio.run(reembed_with(url, embedder))
                h = asyncio.run(hybrid(url, embedder))
                print(
                    f"{name}: re-embedded in {took:.0f} s, measured in "
                    f"{time.perf_counter() - started - took:.0f} s (load {os.getloadavg()[0]:.1f})",
                    flush=True,
                )
                print_summary(
                    f"bench:quantise recipe={name} {figures[name]} "
                    f"ndcg10={h['ndcg@10']:.4f} recall100={h['recall@100']:.4f} "
                    f"ndcg10_fp32={baseline:.4f} delta={h['ndcg@10'] - baseline:+.4f}"
                )


def main() -> None:
    from research_corpus.embedding import MODEL_NAME, bundled_model_path
    from research_corpus.onnx_export import RECIPES, sentence_encoder_onnx

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--recipes", nargs="+", default=list(RECIPES), choices=list(RECIPES))
    parser.add_argument("--scan", action="store_true", help="Quantise each MatMul alone.")
    parser.add_argument("--recipe", default="dynamic", choices=list(RECIPES))
    parser.add_argument("--within", help="Scan this group's MatMuls one at a time (output/dense).")
    parser.add_argument(
        "--scan-texts", type=int, default=60, help="Selection texts the scan embeds."
    )
    parser.add_argument("--data-dir", type=Path, help="A database holding the whole corpus.")
    parser.add_argument("--ndcg-fp32", type=float, help="fp32's hybrid nDCG@10, measured before.")
    args = parser.parse_args()
    samples = corpus_samples(DATA)
    with tempfile.TemporaryDirectory(prefix="re-quantise-") as scratch:
        # A private copy: the quantiser writes scratch files beside its input graph.
        fp32 = Path(scratch) / "model.onnx"
        shutil.copyfile(sentence_encoder_onnx(bundled_model_path(), MODEL_NAME), fp32)
        (scan if args.scan else measure)(args, fp32, samples)


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()
    main()
