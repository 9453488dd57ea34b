"""Offline researcher quality on SciFact: hit@1 / hit@5 of gold evidence documents.

Every TRAIN claim that has gold evidence is used as a research question. Evidence comes from
pure in-memory hybrid retrieval over all 5,183 SciFact abstracts (BM25 over content terms +
all-MiniLM-L6-v2 cosine, fused by reciprocal rank fusion, k=60) — faster than ingesting a
fresh embedded database and the same fusion the corpus search uses. The top `--evidence`
documents (default 8, the researcher's `evidence_limit`) go to the offline engine, which
drafts a claim; a claim is a hit@1 when its first support cites a gold document, hit@5 when
any of its first five supports does. Retrieval's own hit@1 and recall@k are printed as the
reference the engine is measured against (the engine can only pick what retrieval found).

With `--judged` the researcher's own steps around the engine run too (`research_researcher.
experiment`): the evidence is cut to the papers the relevance model puts on the question, and the
grounded supports to those whose quote the stance model reads as supporting the statement. Those
models were trained on folds 1-4 of these claims, so `--judged` scores fold 0 only (claim index
mod 5 == 0 of the train file, as `train_judgement.py` folds it) and prints, beside hit@1 / hit@5,
the share of cited supports from a gold document (support precision), with and without the steps.

    .venv/bin/python bench/researcher.py [--mode hybrid|lexical] [--limit N] [--evidence 8] [--judged]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np

from research_llm import EvidenceDoc, OfflineProvider
from research_llm.offline import lexicon
from research_llm.offline.relevance import default_encoder

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
CACHE = REPO / "bench" / "results"


class MemoEncoder:
    """Caches vectors by text: sentences of popular abstracts recur across claims."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.memo: dict[str, np.ndarray] = {}

    def encode(self, texts):
        missing = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if missing:
            for text, row in zip(missing, np.asarray(self.inner.encode(missing)), strict=True):
                self.memo[text] = row
        return np.stack([self.memo[t] for t in texts])


class InMemoryRetriever:
    """BM25 + dense cosine over the corpus, fused with reciprocal rank fusion."""

    def __init__(
        self, docs: list[dict], encoder, k1: float = 0.9, b: float = 0.4, rrf_k: int = 60
    ) -> None:
        self.docs = docs
        self.k1, self.b, self.rrf_k = k1, b, rrf_k
        self.terms = [
            Counter(lexicon.content_terms(d["title"] + " " + " ".join(d["abstract"]))) for d in docs
        ]
        self.lengths = np.array([sum(t.values()) for t in self.terms], dtype=float)
        self.avg = float(self.lengths.mean())
        df: Counter = Counter()
        for t in self.terms:
            df.update(t.keys())
        n = len(docs)
        self.idf = {term: math.log(1 + (n - f + 0.5) / (f + 0.5)) for term, f in df.items()}
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, t in enumerate(self.terms):
            for term, tf in t.items():
                self.postings.setdefault(term, []).append((i, tf))
        self.encoder = encoder
        self.vectors = self._doc_vectors() if encoder is not None else None

    def _doc_vectors(self) -> np.ndarray:
        CACHE.mkdir(parents=True, exist_ok=True)
        path = CACHE / "scifact_doc_vectors.npy"
        if path.exists():
            cached = np.load(path)
            if cached.shape[0] == len(self.docs):
                return cached
        started = time.perf_counter()
        texts = [d["title"] + " " + " ".join(d["abstract"]) for d in self.docs]
        vectors = np.asarray(self.encoder.inner.encode(texts), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        np.save(path, vectors)
        print(
            f"embedded {len(texts)} abstracts in {time.perf_counter() - started:.0f}s (cached in {path})",
            flush=True,
        )
        return vectors

    def search(self, query: str, k: int) -> list[tuple[int, float]]:
        scores = np.zeros(len(self.docs))
        for term in set(lexicon.content_terms(query)):
            idf = self.idf.get(term)
            if idf is None:
                continue
            for i, tf in self.postings[term]:
                norm = tf + self.k1 * (1 - self.b + self.b * self.lengths[i] / self.avg)
                scores[i] += idf * tf * (self.k1 + 1) / norm
        lexical = np.argsort(-scores, kind="stable")[:100]
        fused: dict[int, float] = {}
        for rank, i in enumerate(lexical):
            if scores[i] > 0:
                fused[int(i)] = fused.get(int(i), 0.0) + 1.0 / (self.rrf_k + rank + 1)
        if self.vectors is not None:
            q = np.asarray(self.encoder.inner.encode([query]), dtype=np.float32)[0]
            dense = np.argsort(-(self.vectors @ (q / np.linalg.norm(q))), kind="stable")[:100]
            for rank, i in enumerate(dense):
                fused[int(i)] = fused.get(int(i), 0.0) + 1.0 / (self.rrf_k + rank + 1)
        return sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:k]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["hybrid", "lexical"], default="hybrid")
    parser.add_argument(
        "--limit", type=int, default=0, help="Only the first N claims with evidence (0 = all)."
    )
    parser.add_argument(
        "--evidence", type=int, default=8, help="Documents handed to the engine per claim."
    )
    parser.add_argument(
        "--judged",
        action="store_true",
        help="Also run the researcher's relevance cut and agreeing-supports step (fold 0 claims only).",
    )
    args = parser.parse_args()

    docs = [json.loads(line) for line in (DATA / "corpus.jsonl").read_text().splitlines()]
    claims = [json.loads(line) for line in (DATA / "claims_train.jsonl").read_text().splitlines()]
    if args.judged:
        claims = [
            c for k, c in enumerate(claims) if k % 5 == 0
        ]  # the fold the judgement models never saw
    claims = [c for c in claims if c["evidence"]]
    if args.limit:
        claims = claims[: args.limit]

    encoder = None
    if args.mode == "hybrid":
        inner = default_encoder()
        if inner is None:
            sys.exit("the corpus embedder could not be loaded; run with --mode lexical")
        encoder = MemoEncoder(inner)
    started = time.perf_counter()
    retriever = InMemoryRetriever(docs, encoder)
    print(
        f"indexed {len(docs)} abstracts in {time.perf_counter() - started:.1f}s ({args.mode})",
        flush=True,
    )
    engine = OfflineProvider(encoder=encoder)

    judged = Judged() if args.judged else None
    hit1 = hit5 = retrieved_any = retrieved_first = 0
    supports_per_claim: list[int] = []
    confidence_hit: list[float] = []
    confidence_miss: list[float] = []
    timings: list[float] = []
    for number, claim in enumerate(claims, start=1):
        if number % 100 == 0:
            print(f"  … {number}/{len(claims)} claims", flush=True)
        gold = {f"corpus:{d}" for d in claim["evidence"]}
        ranked = retriever.search(claim["claim"], args.evidence)
        evidence = [
            EvidenceDoc(
                source_id=f"corpus:{docs[i]['doc_id']}",
                title=docs[i]["title"],
                text=" ".join(docs[i]["abstract"]),
                score=round(score, 6),
            )
            for i, score in ranked
        ]
        retrieved = [e.source_id for e in evidence]
        retrieved_any += bool(gold & set(retrieved))
        retrieved_first += bool(retrieved and retrieved[0] in gold)
        t0 = time.perf_counter()
        draft = engine.draft_sync(claim["claim"], None, evidence)
        timings.append(time.perf_counter() - t0)
        cited = [s.source_id for s in draft.supports]
        first = bool(cited and cited[0] in gold)
        hit1 += first
        hit5 += bool(gold & set(cited[:5]))
        supports_per_claim.append(len(cited))
        (confidence_hit if first else confidence_miss).append(draft.confidence)
        if judged is not None:
            judged.score(claim["claim"], evidence, draft, gold, engine)

    n = len(claims)
    print()
    print(
        f"SciFact train claims with gold evidence: {n}   evidence docs per claim: {args.evidence}   mode: {args.mode}"
    )
    print(
        f"  retrieval  hit@1 {retrieved_first / n:.3f}   recall@{args.evidence} {retrieved_any / n:.3f}  (upper bound)"
    )
    print(f"  engine     hit@1 {hit1 / n:.3f}   hit@5 {hit5 / n:.3f}")
    print(
        f"  ratios     hit@1 / retrieval hit@1 = {hit1 / max(1, retrieved_first):.2f}   "
        f"hit@5 / recall@{args.evidence} = {hit5 / max(1, retrieved_any):.2f}"
    )
    print(
        f"  supports per claim: mean {statistics.mean(supports_per_claim):.2f}   "
        f"mean confidence when hit@1 {statistics.mean(confidence_hit or [0]):.3f} vs miss "
        f"{statistics.mean(confidence_miss or [0]):.3f}"
    )
    print(
        f"  draft latency: p50 {1000 * statistics.median(timings):.0f} ms   "
        f"p95 {1000 * sorted(timings)[int(0.95 * (n - 1))]:.0f} ms (embeddings memoised across claims)"
    )
    if judged is not None:
        judged.report(n, hit1, hit5)


class Judged:
    """The researcher's judged steps around the engine: `relevant_docs` before, `agreeing_supports` after."""

    def __init__(self) -> None:
        from research_researcher import experiment

        self.experiment = experiment
        self.hit1 = self.hit5 = 0
        self.cited = self.cited_gold = self.cited_plain = self.cited_plain_gold = self.left_out = (
            self.dropped
        ) = 0

    def score(
        self, question: str, evidence: list[EvidenceDoc], plain, gold: set[str], engine
    ) -> None:
        from research_contracts import Support

        self.cited_plain += len(plain.supports)
        self.cited_plain_gold += sum(s.source_id in gold for s in plain.supports)
        kept, left_out = self.experiment.relevant_docs(question, evidence)
        self.left_out += left_out
        draft = engine.draft_sync(question, None, kept)
        supports = [
            Support(
                source_id=s.source_id,
                title=next(d.title for d in kept if d.source_id == s.source_id),
                quote=s.quote,
            )
            for s in draft.supports
        ]
        supports, dropped = self.experiment.agreeing_supports(draft.statement, supports)
        self.dropped += dropped
        cited = [s.source_id for s in supports]
        self.hit1 += bool(cited and cited[0] in gold)
        self.hit5 += bool(gold & set(cited[:5]))
        self.cited += len(cited)
        self.cited_gold += sum(c in gold for c in cited)

    def report(self, n: int, hit1: int, hit5: int) -> None:
        plain = self.cited_plain_gold / max(self.cited_plain, 1)
        judged = self.cited_gold / max(self.cited, 1)
        print(
            f"  judged     hit@1 {self.hit1 / n:.3f}   hit@5 {self.hit5 / n:.3f}   (engine alone {hit1 / n:.3f} / {hit5 / n:.3f})"
        )
        print(
            f"  supports   from a gold paper: {judged:.3f} of {self.cited} judged vs {plain:.3f} of {self.cited_plain} "
            f"engine alone; papers left out as off topic {self.left_out / n:.2f} per claim, quotes dropped "
            f"{self.dropped / n:.2f} per claim"
        )
        print_summary(
            f"bench:researcher claims={n} hit1={self.hit1 / n:.4f} hit5={self.hit5 / n:.4f} "
            f"support_precision={judged:.4f} support_precision_engine={plain:.4f}"
        )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
