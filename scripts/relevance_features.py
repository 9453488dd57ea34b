"""Would another feature beside the relevance logit and the vocabulary coverage help? Measured.

Builds fold 0's held-out relevance rows exactly as `train_judgement.py` calibrates on them (the
claims and, for half, their topic forms; TF-IDF, dense MiniLM and random negatives), scores them
with the **shipped** relevance model (trained on folds 1-4, so the rows are held out) and fits the
calibration's logistic regression with each candidate feature added, 5-fold cross-validated by
question. Prints AUC and precision / recall at the modes' cut-offs. SciFact train only.

    .venv/bin/python scripts/relevance_features.py          # ~10 min on 2 cores

Candidates: the coverage of the title alone; the relative IDF of the rarest question word the
paper lacks; the IDF mass it lacks; the coverage of the question's two rarest words, of its first
k content words (the subject); the relevance model's logit on the title alone; the MiniLM cosine of
question and paper; the pair model's highest
P(evidence) / P(SUPPORT) over the paper's sentences. None was shipped (docs/judgement.md).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import train_judgement as T

from research_judgement.coverage import STOP, WORD, stem, terms, vocabulary
from research_judgement.judge import get_judge

CUTS = (0.45, 0.5, 0.6, 0.65)


def held_rows(data: Path):
    claims = T.load_claims(data / "claims_train.jsonl")
    corpus = T.load_corpus(data / "corpus.jsonl")
    relevant: dict[int, set[int]] = {}
    for line in (data / "beir" / "qrels" / "train.tsv").read_text().splitlines()[1:]:
        qid, did, _ = line.split("\t")
        relevant.setdefault(int(qid), set()).add(int(did))
    fold0 = [c for k, c in enumerate(claims) if k % 5 == 0]
    dense = T.dense_index(corpus)
    rows = T.relevance_rows(
        fold0,
        corpus,
        relevant,
        T.tfidf_index(corpus),
        random.Random(T.SEED + 1),
        **T.HELD_OUT,
        dense=dense,
    )
    papers = {T.abstract_text(a.title, a.sentences): a for a in corpus.values()}
    return rows, [papers[text] for _, text, _ in rows], dense


def lexical(voc, question: str, paper) -> dict[str, float]:
    wanted = [stem(w) for w in WORD.findall(question.lower()) if w not in STOP]
    unique = set(wanted)
    have = terms(T.abstract_text(paper.title, paper.sentences))
    idf = {t: voc.idf(t) for t in unique}
    missing = [idf[t] for t in unique if t not in have]
    rare = sorted(unique, key=lambda t: -idf[t])[:2]

    def share(words) -> float:
        total = sum(idf[t] for t in words)
        return sum(idf[t] for t in words if t in have) / total if total else 0.0

    return {
        "title": voc.coverage(question, paper.title),
        "missing_rarest": max(missing) / max(idf.values()) if missing else 0.0,
        "missing_mass": sum(missing),
        "rarest_two": share(rare),
        **{f"first{k}": share(list(dict.fromkeys(wanted))[:k]) for k in (2, 3, 4)},
    }


def main() -> None:
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    rows, papers, (_ids, embedder, _matrix) = held_rows(
        T.REPO.parent / "shared" / "data" / "scifact"
    )
    judge = get_judge()
    voc = vocabulary(T.VOCABULARY)
    y = np.array([r[2] for r in rows])
    logit = judge.logits("relevance", [(q, text) for q, text, _ in rows])[:, 0]
    coverage = np.array([voc.coverage(q, text) for q, text, _ in rows])
    per_row = [lexical(voc, q, p) for (q, _, _), p in zip(rows, papers, strict=True)]
    features = {name: np.array([r[name] for r in per_row]) for name in per_row[0]}
    features["title_logit"] = judge.logits(
        "relevance", [(q, p.title) for (q, _, _), p in zip(rows, papers, strict=True)]
    )[:, 0]
    features["cosine"] = (
        embedder.embed([q for q, _, _ in rows]) * embedder.embed([t for _, t, _ in rows])
    ).sum(1)
    best_evidence, best_support = [], []
    for (q, _, _), p in zip(rows, papers, strict=True):
        st = judge.stance(q, list(p.sentences), [p.title] * len(p.sentences))
        best_evidence.append(float((1 - st[:, 2]).max()))
        best_support.append(float(st[:, 0].max()))
    features["best_evidence"], features["best_support"] = (
        np.array(best_evidence),
        np.array(best_support),
    )

    questions = sorted({q for q, _, _ in rows})
    random.Random(T.SEED).shuffle(questions)
    group = np.array([{q: i % 5 for i, q in enumerate(questions)}[q] for q, _, _ in rows])

    def report(name: str, x: np.ndarray) -> None:
        oof = np.zeros(len(y))
        for k in range(5):
            fit = LogisticRegression(C=10.0, max_iter=1000).fit(x[group != k], y[group != k])
            oof[group == k] = fit.predict_proba(x[group == k])[:, 1]
        cuts = " ".join(
            f"p@{t}={y[oof >= t].mean():.3f}/r@{t}={(oof[y == 1] >= t).mean():.3f}" for t in CUTS
        )
        print(f"{name:32s} auc={roc_auc_score(y, oof):.4f} {cuts}", flush=True)

    print(f"rows={len(rows)} positives={int(y.sum())}")
    report("logit", logit[:, None])
    report("logit+coverage (shipped)", np.c_[logit, coverage])
    for name, column in features.items():
        report(f"logit+coverage+{name}", np.c_[logit, coverage, column])


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
