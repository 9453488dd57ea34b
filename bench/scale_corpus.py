"""Distractor papers for bench/scale.py: deterministic, biomedical-looking, never SciFact's gold text.

How a distractor is made (`Distractors.paper(i)`, seeded by `(seed, i)` alone, so paper i is the
same whatever the corpus size and a 10^4 corpus is the first 10^4 papers of the 10^5 one):

1. The *pool* is every SciFact abstract that is gold for no SciFact claim (cited by no claim of
   train/dev, in no BEIR qrel of train/test): 3,800-odd abstracts. Gold abstracts never enter it,
   so no distractor holds a sentence of a gold abstract, even perturbed.
2. A base paper is drawn from the pool; the distractor keeps its length (sentence count) and
   draws each sentence from the base paper (p = 0.6) or from another random pool paper (0.4):
   topically close to one real paper, with sentences of others mixed in.
3. Every sentence, and the title, is perturbed word by word: each lower-case word of 4+
   letters is replaced (p = 0.25) by a word drawn from the pool's word frequencies (so the
   vocabulary stays biomedical and Zipfian), and neighbouring words are swapped (p = 0.05). A
   sentence that comes out unchanged gets one forced substitution (one that has no word to
   substitute is dropped), so no SciFact sentence is ever repeated verbatim; `verbatim_check`
   counts them over the generated corpus to show it.

Chunk vectors, three paths (`bench/scale.py --vectors`):
- `model`: the engine's own MiniLM on the chunk text, cached in shards of `SHARD` papers under
  `~/.cache/research-engine/scale/` (1.65 chunks per paper of up to 180 words: 12 chunks/s
  measured on the 2 cores at load average 3, 2.5 at load average 18 — 10^4 papers are 23 min to
  2 h of model time, 10^5 four hours at best).
- `sentences` (`sentence_mean`): the normalised mean of the model vectors of the pool sentences
  each chunk was made from, before the word substitutions (no model call: the full-SciFact
  database holds every SciFact sentence's vector). The run prints its cosine to the `model`
  vectors where both exist.
- `perturbed`: model vectors of other chunks plus Gaussian noise (sigma `PERTURB_SIGMA` per
  coordinate, renormalised: cosine ≈ 0.9 to the source) — the 10^6 infrastructure run.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
CACHE = Path.home() / ".cache" / "research-engine" / "scale"
SHARD = 2_000  # papers per cached vector shard
P_BASE = 0.6  # a sentence comes from the base paper
P_SUBSTITUTE = 0.25  # a content word is replaced
P_SWAP = 0.05  # two neighbouring words are swapped
PERTURB_SIGMA = 0.025  # per coordinate, on unit 384-d vectors: cosine to the source ≈ 0.9


def _norm(sentence: str) -> str:
    return " ".join(sentence.split()).lower()


def gold_ids(data: Path = DATA) -> set[str]:
    """Every SciFact doc id that is gold for some claim (claims' citations and BEIR qrels)."""
    gold: set[str] = set()
    for split in ("train", "dev"):
        for line in (data / f"claims_{split}.jsonl").read_text().splitlines():
            claim = json.loads(line)
            gold |= {str(d) for d in claim.get("cited_doc_ids", [])}
            gold |= set(claim.get("evidence", {}))
    for split in ("train", "test"):
        for line in (data / "beir" / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
            gold.add(line.split("\t")[1])
    return gold


def scifact_records(data: Path = DATA) -> list[dict]:
    with (data / "corpus.jsonl").open() as lines:
        return [json.loads(line) for line in lines if line.strip()]


class Distractors:
    """The distractor generator over the non-gold SciFact pool (see the module docstring)."""

    def __init__(self, seed: int = 0, data: Path = DATA) -> None:
        self.seed = seed
        records = scifact_records(data)
        gold = gold_ids(data)
        self.pool = [
            (r["title"], [s for s in r["abstract"] if s.strip()])
            for r in records
            if str(r["doc_id"]) not in gold and r["abstract"]
        ]
        self.gold_sentences = {
            _norm(s) for r in records if str(r["doc_id"]) in gold for s in r["abstract"]
        }
        self.all_sentences = {_norm(s) for r in records for s in r["abstract"]} | {
            _norm(r["title"]) for r in records
        }
        words = [
            w
            for _, sentences in self.pool
            for s in sentences
            for w in s.split()
            if len(w) >= 4 and w.isalpha() and w.islower()
        ]
        self.words = words  # with repeats: drawing uniformly from it follows the word frequencies

    def _perturb(self, rng: random.Random, sentence: str) -> str | None:
        tokens = sentence.split()
        eligible = [i for i, w in enumerate(tokens) if len(w) >= 4 and w.isalpha() and w.islower()]
        if not eligible:
            return None
        out = list(tokens)
        for i in eligible:
            if rng.random() < P_SUBSTITUTE:
                out[i] = rng.choice(self.words)
        for i in range(len(out) - 1):
            if rng.random() < P_SWAP:
                out[i], out[i + 1] = out[i + 1], out[i]
        while _norm(" ".join(out)) == _norm(sentence):
            i = rng.choice(eligible)
            out[i] = rng.choice(self.words)
        return " ".join(out)

    def paper(self, i: int) -> dict:
        """Distractor `i` as a SciFact-format record (doc_id `d<i>`)."""
        rng = random.Random(self.seed * 1_000_003 + i)
        base_index = rng.randrange(len(self.pool))
        title, base = self.pool[base_index]
        sentences, sources = [], []
        for position in range(len(base)):
            if rng.random() < P_BASE:
                source = base[position]
            else:
                other = self.pool[rng.randrange(len(self.pool))][1]
                source = other[rng.randrange(len(other))]
            if (perturbed := self._perturb(rng, source)) is not None:
                sentences.append(perturbed)
                sources.append(source)
        new_title = self._perturb(rng, title) or title + " revisited"
        # `sources`: the pool sentence each abstract sentence was made from (not ingested: the
        # `sentences` vector path averages their model vectors)
        return {"doc_id": f"d{i}", "title": new_title, "abstract": sentences, "sources": sources}

    def papers(self, start: int, stop: int) -> Iterator[dict]:
        for i in range(start, stop):
            yield self.paper(i)

    def verbatim_check(self, papers: list[dict]) -> tuple[int, int, int]:
        """(distractor sentences, of them verbatim SciFact sentences, verbatim gold sentences)."""
        total = verbatim = gold = 0
        for paper in papers:
            for s in [paper["title"], *paper["abstract"]]:
                key = _norm(s)
                total += 1
                verbatim += key in self.all_sentences
                gold += key in self.gold_sentences
        return total, verbatim, gold


class VectorCache:
    """Chunk vectors of distractors by shard of `SHARD` papers, model-embedded or perturbed."""

    def __init__(self, folder: Path = CACHE, seed: int = 0, precision: str = "int8") -> None:
        self.folder = folder
        self.seed = seed
        self.precision = precision  # of the model that embeds them: precisions are never mixed
        folder.mkdir(parents=True, exist_ok=True)

    def path(self, shard: int) -> Path:
        return self.folder / f"distractors-{self.precision}-s{self.seed}-{shard:04d}.npy"

    def have(self, shard: int) -> bool:
        return self.path(shard).exists()

    def load(self, shard: int) -> np.ndarray:
        return np.load(self.path(shard))

    def save(self, shard: int, vectors: np.ndarray) -> None:
        tmp = self.path(shard).with_suffix(".tmp.npy")
        np.save(tmp, vectors.astype(np.float32))
        tmp.replace(self.path(shard))

    def scifact_path(self) -> Path:
        return self.folder / "scifact-chunks.npz"


def sentence_mean(
    papers: list[dict], chunk_texts: list[list[str]], vectors: dict[bytes, np.ndarray]
) -> np.ndarray:
    """Per chunk: the normalised mean of the model vectors of the pool sentences it was made from.

    `papers` are generated records (with `sources`), `chunk_texts[i]` paper i's chunk texts in
    order (each the join of consecutive abstract sentences, as `chunk_paper` makes them),
    `vectors` the model's sentence vectors by `sentence_key`.
    """
    from research_corpus.sentences import sentence_key

    rows = []
    for paper, chunks in zip(papers, chunk_texts, strict=True):
        position = 0
        for text in chunks:
            taken: list[str] = []
            while " ".join(taken) != text:
                taken.append(paper["abstract"][position])
                position += 1
            sources = paper["sources"][position - len(taken) : position]
            rows.append(np.mean([vectors[sentence_key(s)] for s in sources], axis=0))
    out = np.asarray(rows, dtype=np.float32)
    return out / np.linalg.norm(out, axis=1, keepdims=True)


def perturbed(source: np.ndarray, n: int, key: int) -> np.ndarray:
    """`n` unit vectors: rows of `source` (cycled from a seeded offset) plus Gaussian noise."""
    rng = np.random.default_rng(key)
    rows = source[(rng.integers(len(source)) + np.arange(n)) % len(source)]
    noisy = rows + rng.normal(0.0, PERTURB_SIGMA, size=rows.shape).astype(np.float32)
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
