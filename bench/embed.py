"""Embedding benchmark: the torch (sentence-transformers) and ONNX Runtime runtimes of all-MiniLM-L6-v2, side by side.

Both runtimes are loaded in one process and timed interleaved — round after round, batch size
after batch size, torch then onnx then (with --int8) the int8 candidate — so a burst of load from
other processes on the machine hits all sides alike. Texts are real SciFact sentences (the first
--texts distinct sentences of the corpus), embedded in calls of `batch` texts each, as a service
(batch 1, 8) or the ingest (32, 128) makes them. Per side and batch size it prints the median over
rounds of texts/s (wall) and CPU ms per text (the process's CPU time, every thread counted, which
stays meaningful when other processes take cores away).

Same answers: `max_cosine_gap` is the largest 1 - cosine between a text's torch and onnx vectors.
With --ndcg it also ranks the 5,183 SciFact abstracts (title + abstract, one vector each) for the
300 BEIR test queries with each runtime's vectors alone (dense only, brute force, no Postgres):
nDCG@10 per runtime — the quality cost of a runtime, on the whole corpus.

--pairs also times the judgement stance cross-encoder (research_judgement, shipped weights) on
torch and on ONNX Runtime the same way, on SciFact (claim, cited-abstract sentence) pairs.

--int8 also measures the int8 graph the engine runs by default (CORPUS__EMBED_PRECISION=int8:
`onnx_export.quantized_sentence_encoder_onnx`, dynamic quantisation of the MatMul weights, int8
per channel).

--cosine N only compares the int8 graph's vectors with the fp32 graph's (ONNX Runtime both) on
the first N distinct SciFact sentences, and the throughput of both at batch 32 (interleaved):

    bench:embed:cosine texts=… mean=… worst=… p01=… fp32_per_s=… int8_per_s=… speedup=…

    .venv/bin/python bench/embed.py [--texts 512] [--batches 1,8,32,128] [--rounds 3] [--threads 1] [--int8] [--ndcg]
    .venv/bin/python bench/embed.py --cosine 5000 [--threads 2]

Ends with:  bench:embed torch_per_s=… onnx_per_s=… speedup=… max_cosine_gap=…   (batch 32)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from retrieval_metrics import ndcg_at

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
TARGET_SPEEDUP = 2.5


def scifact_sentences(data: Path, count: int) -> list[str]:
    from research_corpus.sentences import split_sentences

    sentences: dict[str, None] = {}
    with (data / "corpus.jsonl").open() as corpus:
        for line in corpus:
            for span in split_sentences(" ".join(json.loads(line)["abstract"])):
                sentences.setdefault(" ".join(span.text.split()))
            if len(sentences) >= count:
                break
    return list(sentences)[:count]


def int8_graph() -> Path:
    """The int8 graph the engine runs (quantised from the cached fp32 export, made once)."""
    from research_corpus.embedding import MODEL_NAME, bundled_model_path
    from research_corpus.onnx_export import quantized_sentence_encoder_onnx

    return quantized_sentence_encoder_onnx(bundled_model_path(), MODEL_NAME)


def cosines(data: Path, count: int, threads: int, rounds: int) -> None:
    """int8 vs fp32 (both ONNX Runtime): cosine of each text's two vectors, and texts/s at batch 32."""
    from research_corpus.embedding import MODEL_NAME, OnnxEncoder, bundled_model_path
    from research_corpus.onnx_export import sentence_encoder_onnx

    model_dir = bundled_model_path()
    encoders = {
        "fp32": OnnxEncoder(model_dir, threads, graph=sentence_encoder_onnx(model_dir, MODEL_NAME)),
        "int8": OnnxEncoder(model_dir, threads, graph=int8_graph(), precision="int8"),
    }
    texts = scifact_sentences(data, count)
    print(
        f"{len(texts)} SciFact sentences, {threads} thread(s), load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    vectors = {name: encoder.encode(texts, 32) for name, encoder in encoders.items()}
    cos = (vectors["fp32"] * vectors["int8"]).sum(axis=1)
    worst = int(cos.argmin())
    runs: dict[str, list[float]] = {name: [] for name in encoders}
    sample = texts[:512]
    for _ in range(rounds):
        for name, encoder in encoders.items():
            runs[name].append(timed(encoder, sample, 32)[0])
    rates = {name: statistics.median(r) for name, r in runs.items()}
    print(f"cosine int8 vs fp32: mean {cos.mean():.5f}, worst {cos.min():.5f} ({texts[worst]!r})")
    print(f"load average {os.getloadavg()[0]:.1f} at end")
    print_summary(
        f"bench:embed:cosine texts={len(texts)} mean={cos.mean():.5f} worst={cos.min():.5f} "
        f"p01={np.percentile(cos, 1):.5f} fp32_per_s={rates['fp32']:.1f} int8_per_s={rates['int8']:.1f} "
        f"speedup={rates['int8'] / rates['fp32']:.2f}"
    )


def timed(encoder, texts: list[str], batch: int) -> tuple[float, float]:
    """(texts/s, CPU ms per text) of embedding `texts` in calls of `batch` texts."""
    wall, cpu = time.perf_counter(), time.process_time()
    for start in range(0, len(texts), batch):
        encoder.encode(texts[start : start + batch], batch)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return len(texts) / wall, 1000 * cpu / len(texts)


def dense_ndcg(data: Path, encoders: dict) -> dict[str, float]:
    """nDCG@10 of brute-force dense ranking of SciFact abstracts for the BEIR test queries, per encoder."""
    from retrieval import load_split

    queries, qrels = load_split(data, "test")
    ids, docs = [], []
    with (data / "corpus.jsonl").open() as corpus:
        for line in corpus:
            paper = json.loads(line)
            ids.append(str(paper["doc_id"]))
            docs.append(f"{paper['title']} {' '.join(paper['abstract'])}".strip())
    scores = {}
    for name, encoder in encoders.items():
        started = time.perf_counter()
        matrix = encoder.encode(docs, 32)
        qvecs = encoder.encode(list(queries.values()), 32)
        ranked = (qvecs @ matrix.T).argsort(axis=1)[:, ::-1][:, :10]
        scores[name] = statistics.fmean(
            ndcg_at([ids[j] for j in row], qrels[qid], 10)
            for qid, row in zip(queries, ranked, strict=True)
        )
        print(
            f"  dense nDCG@10 {name:6} {scores[name]:.4f}  ({len(docs)} abstracts + {len(queries)} queries embedded in "
            f"{time.perf_counter() - started:.0f} s)",
            flush=True,
        )
    return scores


def scifact_pairs(data: Path, count: int) -> list[tuple[str, str]]:
    abstracts = {}
    with (data / "corpus.jsonl").open() as corpus:
        for line in corpus:
            paper = json.loads(line)
            abstracts[paper["doc_id"]] = paper["abstract"]
    pairs: list[tuple[str, str]] = []
    with (data / "claims_train.jsonl").open() as claims:
        for line in claims:
            claim = json.loads(line)
            for doc in claim.get("cited_doc_ids", [])[:1]:
                pairs += [(claim["claim"], sentence) for sentence in abstracts.get(doc, [])[:4]]
            if len(pairs) >= count:
                break
    return pairs[:count]


def cross_encoders(data: Path, rounds: int, batches: list[int], threads: int) -> None:
    """The shipped stance cross-encoder: pairs/s and CPU per pair, torch vs onnx, interleaved."""
    import torch

    from research_judgement.judge import WEIGHTS
    from research_judgement.onnx_scorer import OnnxCrossEncoder
    from research_judgement.scorer import CrossEncoder, read_config

    if not (WEIGHTS / "pair" / "head.safetensors").exists():
        print("cross-encoder: no shipped stance model, skipped")
        return
    torch.set_num_threads(threads)
    max_length = int(read_config(WEIGHTS)["pair"]["max_length"])
    scorers: dict[str, CrossEncoder | OnnxCrossEncoder] = {
        "torch": CrossEncoder.load(WEIGHTS / "pair", max_length),
        "onnx": OnnxCrossEncoder.load(WEIGHTS / "pair", max_length, threads=threads),
    }
    pairs = scifact_pairs(data, 128)
    for scorer in scorers.values():
        scorer.logits(pairs[:8], 8)
    runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(rounds):
        for batch in batches:
            for name, scorer in scorers.items():
                wall, cpu = time.perf_counter(), time.process_time()
                for start in range(0, len(pairs), batch):
                    scorer.logits(pairs[start : start + batch], batch)
                wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
                runs.setdefault((name, batch), []).append(
                    (len(pairs) / wall, 1000 * cpu / len(pairs))
                )
    logits = {name: scorer.logits(pairs, 32) for name, scorer in scorers.items()}
    probs = {
        name: np.exp(v - v.max(1, keepdims=True))
        / np.exp(v - v.max(1, keepdims=True)).sum(1, keepdims=True)
        for name, v in logits.items()
    }
    gap = float(np.abs(probs["onnx"] - probs["torch"]).max())
    print(
        f"\ncross-encoder (stance, shipped weights): {len(pairs)} SciFact pairs, max_length {max_length}, {threads} thread(s)"
    )
    medians = {
        k: (statistics.median(r for r, _ in v), statistics.median(c for _, c in v))
        for k, v in runs.items()
    }
    for batch in batches:
        for name in scorers:
            rate, cpu = medians[(name, batch)]
            print(
                f"{name:8} {batch:5} {rate:9.1f} pairs/s {cpu:8.2f} CPU ms/pair {rate / medians[('torch', batch)][0]:6.2f}x wall"
                f" {medians[('torch', batch)][1] / cpu:6.2f}x CPU"
            )
    if 32 in batches:
        t, o = medians[("torch", 32)][0], medians[("onnx", 32)][0]
        print_summary(
            f"bench:embed:pairs torch_per_s={t:.1f} onnx_per_s={o:.1f} speedup={o / t:.2f} max_probability_gap={gap:.2e}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--batches", default="1,8,32,128")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--threads", type=int, default=1, help="Math threads of each runtime (a service runs 1)."
    )
    parser.add_argument(
        "--int8", action="store_true", help="Also measure the int8-quantised ONNX graph."
    )
    parser.add_argument(
        "--ndcg",
        action="store_true",
        help="Also dense nDCG@10 of each runtime on the SciFact test queries.",
    )
    parser.add_argument(
        "--pairs",
        action="store_true",
        help="Also the judgement cross-encoder's pairs/s, torch vs onnx.",
    )
    parser.add_argument(
        "--cosine",
        type=int,
        metavar="N",
        help="Only int8 vs fp32 (ONNX): cosine over N SciFact sentences and texts/s at batch 32.",
    )
    args = parser.parse_args()
    if not (args.data / "corpus.jsonl").exists():
        sys.exit(
            f"{args.data} is not present: the SciFact data (../shared/data/scifact) is needed for this benchmark"
        )
    if args.cosine:
        cosines(args.data, args.cosine, args.threads, args.rounds)
        return

    from research_corpus.embedding import MODEL_NAME, OnnxEncoder, TorchEncoder, bundled_model_path
    from research_corpus.onnx_export import sentence_encoder_onnx

    model_dir = bundled_model_path()
    started = time.perf_counter()
    graph = sentence_encoder_onnx(model_dir, MODEL_NAME)
    print(f"onnx export: {graph} ({time.perf_counter() - started:.1f} s; 0 when cached)")
    encoders: dict[str, TorchEncoder | OnnxEncoder] = {
        "torch": TorchEncoder(model_dir, args.threads),
        "onnx": OnnxEncoder(model_dir, args.threads, graph=graph),
    }
    if args.int8:
        encoders["int8"] = OnnxEncoder(
            model_dir, args.threads, graph=int8_graph(), precision="int8"
        )
    texts = scifact_sentences(args.data, args.texts)
    batches = [int(b) for b in args.batches.split(",")]
    for encoder in encoders.values():
        encoder.encode(texts[:16], 8)  # warm-up: first-call allocations are not timed
    print(
        f"{len(texts)} SciFact sentences, {args.threads} math thread(s) per runtime, {args.rounds} interleaved rounds, "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores at start"
    )

    runs: dict[tuple[str, int], list[tuple[float, float]]] = {}
    for _ in range(args.rounds):
        for batch in batches:
            for name, encoder in encoders.items():
                runs.setdefault((name, batch), []).append(timed(encoder, texts, batch))
    reference = encoders["torch"].encode(texts, 32)
    gaps = {
        name: float((1 - (reference * encoder.encode(texts, 32)).sum(axis=1)).max())
        for name, encoder in encoders.items()
        if name != "torch"
    }

    header = f"{'runtime':8} {'batch':>5} {'texts/s':>9} {'CPU ms/text':>12} {'x torch (wall)':>15} {'x torch (CPU)':>14}"
    print(header + "\n" + "-" * len(header))
    medians = {
        key: (statistics.median(r for r, _ in v), statistics.median(c for _, c in v))
        for key, v in runs.items()
    }
    for batch in batches:
        for name in encoders:
            rate, cpu = medians[(name, batch)]
            base_rate, base_cpu = medians[("torch", batch)]
            print(
                f"{name:8} {batch:5} {rate:9.1f} {cpu:12.2f} {rate / base_rate:14.2f}x {base_cpu / cpu:13.2f}x"
            )
    for name, gap in gaps.items():
        print(f"max 1 - cosine vs torch, {name}: {gap:.2e}")
    print(
        f"load average {os.getloadavg()[0]:.1f} at end (other processes share the cores: compare sides, not runs)"
    )

    if args.ndcg:
        scores = dense_ndcg(args.data, encoders)
        for name in scores:
            if name != "torch":
                print(f"dense nDCG@10 {name} - torch: {scores[name] - scores['torch']:+.4f}")

    if 32 in batches:
        torch_rate, onnx_rate = medians[("torch", 32)][0], medians[("onnx", 32)][0]
        speedup = onnx_rate / torch_rate
        print(
            f"target: onnx >= {TARGET_SPEEDUP} x torch at batch 32 -> {'met' if speedup >= TARGET_SPEEDUP else 'MISSED'} "
            f"({speedup:.2f} x wall, {medians[('torch', 32)][1] / medians[('onnx', 32)][1]:.2f} x CPU)"
        )
        if "int8" in encoders:
            int8_rate = medians[("int8", 32)][0]
            print_summary(
                f"bench:embed:int8 int8_per_s={int8_rate:.1f} speedup={int8_rate / torch_rate:.2f} max_cosine_gap={gaps['int8']:.2e}"
            )
        print_summary(
            f"bench:embed torch_per_s={torch_rate:.1f} onnx_per_s={onnx_rate:.1f} speedup={speedup:.2f} max_cosine_gap={gaps['onnx']:.2e}"
        )
    if args.pairs:
        cross_encoders(args.data, args.rounds, [b for b in batches if b <= 32], args.threads)


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
