"""SciFact files as the classifier and the benchmark read them (Wadden et al. 2020, CC BY-NC 2.0).

`claims_<split>.jsonl`: a claim, the abstracts it cites and, per evidence abstract, rationale
sentence sets labelled SUPPORT or CONTRADICT. `corpus.jsonl`: abstracts as lists of sentences.
A cited abstract without rationales is NOT ENOUGH INFO for that claim (the SciFact definition).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, slots=True)
class Abstract:
    doc_id: int
    title: str
    sentences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SciFactClaim:
    id: int
    claim: str
    cited_doc_ids: tuple[int, ...]
    # doc_id -> (label, indices of every rationale sentence in that abstract)
    evidence: dict[int, tuple[str, frozenset[int]]] = field(default_factory=dict)

    def gold_label(self, doc_id: int) -> str:
        """SUPPORT / CONTRADICT for an evidence abstract, NEI for any other cited abstract."""
        return self.evidence[doc_id][0] if doc_id in self.evidence else "NEI"

    def sentence_label(self, doc_id: int, index: int) -> str:
        """The label of one sentence: its abstract's label if it is a rationale, else NEI."""
        if doc_id in self.evidence and index in self.evidence[doc_id][1]:
            return self.evidence[doc_id][0]
        return "NEI"


def load_claims(path: str | Path) -> list[SciFactClaim]:
    claims = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        evidence = {}
        for doc, sets in (raw.get("evidence") or {}).items():
            indices = frozenset(i for s in sets for i in s["sentences"])
            evidence[int(doc)] = (sets[0]["label"], indices)
        claims.append(
            SciFactClaim(
                int(raw["id"]), raw["claim"], tuple(int(d) for d in raw["cited_doc_ids"]), evidence
            )
        )
    return claims


def load_corpus(path: str | Path) -> dict[int, Abstract]:
    corpus = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            sentences = tuple(s.strip() for s in raw["abstract"])
            corpus[int(raw["doc_id"])] = Abstract(int(raw["doc_id"]), raw["title"], sentences)
    return corpus


def cached_vectors(
    texts: list[str], cache_dir: str | Path, embed: Callable[[list[str]], npt.ArrayLike]
) -> dict[str, np.ndarray]:
    """Vectors by text, embedding only texts no earlier run stored in `cache_dir`.

    Every `verify_embeddings_*.npz` there holds `texts` and `vectors`; a run adds one file with
    the texts it had to embed. Training and the benchmark share the files (MiniLM on SciFact's
    sentences takes minutes on two cores). `embed` maps a list of texts to an (n, 384) array.
    """
    cache = Path(cache_dir)
    found: dict[str, np.ndarray] = {}
    wanted = set(texts)
    for path in sorted(cache.glob("verify_embeddings_*.npz")):
        with np.load(path, allow_pickle=False) as data:
            for text, vec in zip(data["texts"], data["vectors"], strict=True):
                if str(text) in wanted:
                    found[str(text)] = vec
    missing = sorted(wanted - found.keys())
    if missing:
        vectors = np.asarray(embed(missing), dtype=np.float32)
        cache.mkdir(parents=True, exist_ok=True)
        key = hashlib.sha256("\n".join(missing).encode()).hexdigest()[:16]
        np.savez(cache / f"verify_embeddings_{key}.npz", texts=np.asarray(missing), vectors=vectors)
        found.update(zip(missing, vectors, strict=True))
    return found
