"""Reproduce the shipped judgement models (LoRA adapters + heads) from the SciFact TRAIN split only.

    .venv/bin/python scripts/train_judgement.py [--ablate] [--folds 1] [--out DIR]

Two cross-encoders on the packaged all-MiniLM-L6-v2, each a LoRA adapter (r=16 on every attention
and feed-forward projection) and a linear head over the mean-pooled tokens:

* `pair` — claim × "title: sentence" → SUPPORT / CONTRADICT / NEI. Evidence = 1 − P(NEI),
  stance = the three probabilities. Rows: every rationale sentence of a train claim's cited
  abstracts, half of their other sentences (NEI), and the augmentations in `AUGMENTATIONS`.
* `relevance` — question × "title: abstract" → on topic or not. Rows: BEIR train qrels as
  positives; TF-IDF top hits that are not relevant, plus one random abstract, as negatives.

Model selection: cross-validation grouped by claim (claim index mod 5). On two shared cores a fold
costs as much as a whole training, so by default only fold 0 of 5 (162 held-out claims) is run,
and the model SHIPPED is that fold's model (fit on the other 4/5 of train): fold 0's held-out
predictions give its temperature / Platt calibration, the abstract rule's thresholds and the CV
figures in `judgement.json`, all on claims it never saw. `--folds 5` runs all five folds (CV only
adds figures), `--ship all` refits on all of train (calibration then still from fold 0).
`--ablate` measures each augmentation of the pair model on the same fold(s). The dev split is
never read here.
Fixed seeds; training runs on the CPU under `nice` in the Taskfile.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import torch

from research_judgement.coverage import STOP
from research_judgement.metrics import (
    ScoredAbstract,
    abstract_decision,
    ece,
    f1_per_label,
    fit_platt,
    fit_temperature,
    label_only_f1,
    label_rationale_f1,
    macro_f1,
    rationale_f1,
    sigmoid,
    softmax,
    tune_thresholds,
)
from research_judgement.scifact import (
    LABELS,
    abstract_text,
    load_claims,
    load_corpus,
    negate_claim,
    passage_text,
)
from research_judgement.scorer import HIDDEN, LORA_TARGETS, base_model_path, mean_pool

REPO = Path(__file__).resolve().parents[1]
WEIGHTS = REPO / "libs" / "judgement" / "src" / "research_judgement" / "weights"
VOCABULARY = (
    WEIGHTS / "document_frequency.json.gz"
)  # research_judgement.coverage; `--vocabulary` rebuilds it
SEED = 2020
PAIR_MAX_LEN, REL_MAX_LEN = 128, 128
AUGMENTATIONS = ("negate", "hard")
HELD_OUT = {
    "topics": 0.5
}  # the relevance model's calibration rows: half the claims also as topics (+ dense negatives)
WORD = re.compile(r"[a-z0-9]+")


def seed_all(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


# ---------------------------------------------------------------- rows


def tfidf_index(corpus):
    from sklearn.feature_extraction.text import TfidfVectorizer

    ids = sorted(corpus)
    vec = TfidfVectorizer(stop_words="english", sublinear_tf=True, min_df=2)
    matrix = vec.fit_transform([corpus[d].title + " " + " ".join(corpus[d].sentences) for d in ids])
    return ids, vec, matrix


def top_docs(index, text: str, k: int) -> list[int]:
    ids, vec, matrix = index
    scores = (matrix @ vec.transform([text]).T).toarray().ravel()
    return [ids[i] for i in np.argsort(-scores)[:k]]


def overlap(a: str, b: str) -> float:
    x, y = set(WORD.findall(a.lower())), set(WORD.findall(b.lower()))
    return len(x & y) / (len(x | y) or 1)


def pair_rows(
    claims,
    corpus,
    augment: set[str],
    index,
    rng: random.Random,
    nei_keep: float = 0.35,
    title_drop: float = 0.3,
):
    """Training rows (claim text, passage text, label index) of the pair model."""
    rows = []
    for c in claims:
        for doc in c.cited_doc_ids:
            a = corpus[doc]
            for i, sentence in enumerate(a.sentences):
                label = c.sentence_label(doc, i)
                if label == "NEI" and rng.random() > nei_keep:
                    continue
                text = passage_text(sentence, None if rng.random() < title_drop else a.title)
                rows.append((c.claim, text, LABELS.index(label)))
                if "negate" in augment and label != "NEI" and (flipped := negate_claim(c.claim)):
                    rows.append(
                        (
                            flipped,
                            text,
                            LABELS.index("CONTRADICT" if label == "SUPPORT" else "SUPPORT"),
                        )
                    )
        if "hard" in augment:
            # sentences of retrieved, uncited abstracts that share the most words with the claim
            for doc in [d for d in top_docs(index, c.claim, 4) if d not in c.cited_doc_ids][:1]:
                a = corpus[doc]
                for sentence in sorted(a.sentences, key=lambda s: -overlap(c.claim, s))[:2]:
                    rows.append((c.claim, passage_text(sentence, a.title), LABELS.index("NEI")))
    return rows


def topic_form(claim: str, rng: random.Random) -> str:
    """The claim as a reviewer or a scout states a topic: its content words in order, half the
    time only a 3–6-word stretch of them (a noun phrase such as "vitamin D nursing home falls")."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9-]+", claim) if w.lower() not in STOP]
    if len(words) > 6 and rng.random() < 0.5:
        size = rng.randint(3, 6)
        start = rng.randint(0, len(words) - size)
        words = words[start : start + size]
    return " ".join(words)


def dense_index(corpus):
    """The packaged MiniLM's vectors of every abstract (title + text), as the corpus search has them."""
    from research_corpus.embedding import Embedder

    ids = sorted(corpus)
    embedder = Embedder(backend="onnx", threads=int(os.environ.get("JUDGEMENT_THREADS", "2")))
    started = time.perf_counter()
    matrix = embedder.embed([abstract_text(corpus[d].title, corpus[d].sentences) for d in ids])
    print(f"dense index: {len(ids)} abstracts in {time.perf_counter() - started:.0f}s", flush=True)
    return ids, embedder, matrix


def top_dense(index, text: str, k: int) -> list[int]:
    ids, embedder, matrix = index
    scores = matrix @ embedder.embed([text])[0]
    return [ids[i] for i in np.argsort(-scores)[:k]]


def relevance_rows(
    claims,
    corpus,
    relevant: dict[int, set[int]],
    index,
    rng: random.Random,
    topics: float = 0.0,
    dense=None,
):
    """Rows (question, title + abstract, 1/0) of the relevance model; questions are train claims,
    and with probability `topics` the claim's topic form besides (`topic_form`), over the same
    papers. Negatives: the two uncited abstracts sharing most words with the claim (TF-IDF), with
    `dense` the two nearest to it by meaning (the MiniLM vectors the corpus search uses: papers
    about a neighbouring subject), and one random abstract.

    The shipped model trains on claims with TF-IDF and random negatives (the defaults); it is
    calibrated and measured on the held-out fold with topic forms and dense negatives as well
    (`HELD_OUT`), the mix a review's or a verification's retrieval hands it. Training on that mix
    too (2 epochs) gave a worse model: held-out AUC 0.814 against 0.857 (docs/judgement.md)."""
    ids = sorted(corpus)
    rows = []
    for c in claims:
        positives = relevant.get(c.id, set())
        negatives = [d for d in top_docs(index, c.claim, 10) if d not in positives][:2]
        if dense is not None:
            negatives += [
                d
                for d in top_dense(dense, c.claim, 10)
                if d not in positives and d not in negatives
            ][:2]
        negatives.append(rng.choice(ids))
        questions = [c.claim] + (
            [topic_form(c.claim, rng)] if topics and rng.random() < topics else []
        )
        for question in questions:
            for doc in sorted(positives):
                rows.append((question, abstract_text(corpus[doc].title, corpus[doc].sentences), 1))
            for doc in negatives:
                if doc not in positives:
                    rows.append(
                        (question, abstract_text(corpus[doc].title, corpus[doc].sentences), 0)
                    )
    return rows


def fit_gate(scores: np.ndarray, y: np.ndarray, rows) -> dict:
    """Calibration of the relevance logit together with the question's vocabulary coverage
    (`research_judgement.coverage`): a logistic regression on the held-out rows, and its accuracy,
    recall and false-positive rate measured by 5-fold cross-validation grouped by question (the
    logit alone, Platt-scaled the same way, beside it). Shipped: AUC 0.857 → 0.881 on the held-out
    fold (docs/judgement.md)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import roc_auc_score

    from research_judgement.coverage import vocabulary

    words = vocabulary(VOCABULARY)
    cover = np.array([words.coverage(q, text) for q, text, _ in rows])
    questions = sorted({q for q, _, _ in rows})
    random.Random(SEED).shuffle(questions)
    fold = {q: i % 5 for i, q in enumerate(questions)}
    group = np.array([fold[q] for q, _, _ in rows])
    report = {}
    for name, features in (("logit", scores[:, None]), ("logit+coverage", np.c_[scores, cover])):
        oof = np.zeros(len(y))
        for k in range(5):
            fit = LogisticRegression(C=10.0).fit(features[group != k], y[group != k])
            oof[group == k] = fit.predict_proba(features[group == k])[:, 1]
        report[name] = {
            "auc": round(float(roc_auc_score(y, oof)), 4),
            "accuracy": round(float(((oof > 0.5) == y).mean()), 4),
            "ece": round(ece(oof, y), 4),
            "recall": round(float((oof[y == 1] > 0.5).mean()), 4),
            "fpr": round(float((oof[y == 0] > 0.5).mean()), 4),
        }
    fit = LogisticRegression(C=10.0).fit(np.c_[scores, cover], y)
    report["platt"] = [float(fit.coef_[0][0]), float(fit.intercept_[0])]
    report["coverage_weight"] = float(fit.coef_[0][1])
    report["thresholds"] = gate_thresholds(oof, y)  # oof: logit + coverage, the last of the loop
    return report


def gate_thresholds(probs: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """The cut-offs the modes use (`research_verification.evidence.thresholds`), chosen on the
    held-out rows on a 0.05 grid: `on_topic` — the best F1 among thresholds whose precision is at
    least 0.6 (most papers a mode keeps are on the topic); `strong` — the lowest whose precision is
    at least 0.8 (a source list's "strong" hit)."""
    grid = [round(t, 2) for t in np.arange(0.1, 0.951, 0.05)]
    rows = []
    for t in grid:
        kept = probs >= t
        recall = float(kept[y == 1].mean())
        precision = float(y[kept].mean()) if kept.any() else 1.0
        rows.append(
            (
                t,
                precision,
                2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            )
        )
    on_topic = max((r for r in rows if r[1] >= 0.6), key=lambda r: r[2])[0]
    strong = min(r[0] for r in rows if r[1] >= 0.8 and r[0] >= on_topic)
    return {"on_topic": float(on_topic), "strong": float(strong)}


# ---------------------------------------------------------------- model

FROZEN = 0  # bottom layers kept as packaged (`--frozen`); 0 = LoRA on all six (shipped), 4 = the first, cheaper models


class Cache:
    """Hidden states after the frozen bottom layers, one fp16 (length, 384) tensor per pair text.

    The bottom of the encoder never changes in training, so each pair goes through it once,
    whatever the fold, the augmentation variant or the epoch; training runs the top layers only.
    With `--frozen 0` (the shipped models) that bottom is the embedding layer alone.
    """

    def __init__(self, max_len: int):
        from transformers import AutoModel, AutoTokenizer

        self.max_len = max_len
        self.tokenizer = AutoTokenizer.from_pretrained(str(base_model_path()))
        self.base = AutoModel.from_pretrained(str(base_model_path())).eval()
        self.states: dict[tuple[str, str], torch.Tensor] = {}

    def fill(self, pairs, tag: str) -> None:
        from transformers.masking_utils import create_bidirectional_mask

        todo = list(dict.fromkeys(p for p in pairs if p not in self.states))
        todo.sort(key=lambda p: len(p[0]) + len(p[1]))
        t0 = time.perf_counter()
        with torch.inference_mode():
            for s in range(0, len(todo), 64):
                chunk = todo[s : s + 64]
                enc = self.tokenizer(
                    [a for a, _ in chunk],
                    [b for _, b in chunk],
                    truncation="longest_first",
                    max_length=self.max_len,
                    padding=True,
                    return_tensors="pt",
                )
                h = self.base.embeddings(
                    input_ids=enc["input_ids"], token_type_ids=enc["token_type_ids"]
                )
                mask = create_bidirectional_mask(
                    config=self.base.config, inputs_embeds=h, attention_mask=enc["attention_mask"]
                )
                for layer in self.base.encoder.layer[:FROZEN]:
                    h = layer(h, mask)
                lengths = enc["attention_mask"].sum(1).tolist()
                for pair, row, n in zip(chunk, h, lengths, strict=True):
                    self.states[pair] = row[:n].half().clone()
                if (s // 64) % 20 == 0:
                    print(
                        f"  [cache {tag}] {s + len(chunk)}/{len(todo)} ({time.perf_counter() - t0:.0f}s)",
                        flush=True,
                    )

    def batch(self, pairs):
        rows = [self.states[p] for p in pairs]
        n = max(r.shape[0] for r in rows)
        h = torch.zeros(len(rows), n, HIDDEN)
        am = torch.zeros(len(rows), n, dtype=torch.long)
        for i, r in enumerate(rows):
            h[i, : r.shape[0]] = r.float()
            am[i, : r.shape[0]] = 1
        return h, am


class Model(torch.nn.Module):
    def __init__(self, n_out: int, rank: int = 16):
        super().__init__()
        from peft import LoraConfig, get_peft_model
        from transformers import AutoModel

        base = AutoModel.from_pretrained(str(base_model_path()))
        config = LoraConfig(
            r=rank,
            lora_alpha=2 * rank,
            lora_dropout=0.1,
            target_modules=LORA_TARGETS,
            layers_to_transform=list(range(FROZEN, base.config.num_hidden_layers)),
            layers_pattern="layer",
        )
        self.encoder = get_peft_model(base, config)
        self.config = base.config
        self.top = base.encoder.layer[FROZEN:]
        self.head = torch.nn.Linear(HIDDEN, n_out)
        self.dropout = torch.nn.Dropout(0.1)

    def forward(self, h, am):
        from transformers.masking_utils import create_bidirectional_mask

        mask = create_bidirectional_mask(config=self.config, inputs_embeds=h, attention_mask=am)
        for layer in self.top:
            h = layer(h, mask)
        return self.head(self.dropout(mean_pool(h, am)))


def batches(rows, cache: Cache, size: int, rng: random.Random | None):
    """Length-bucketed batches: shuffled chunks of 50 batches, sorted by length inside a chunk."""
    order = list(range(len(rows)))
    if rng is not None:
        rng.shuffle(order)
    chunk = size * 50
    groups = []
    for s in range(0, len(order), chunk):
        part = sorted(order[s : s + chunk], key=lambda i: cache.states[rows[i][:2]].shape[0])
        groups += [part[j : j + size] for j in range(0, len(part), size)]
    if rng is not None:
        rng.shuffle(groups)
    for idx in groups:
        yield idx, cache.batch([rows[i][:2] for i in idx])


def train(rows, cache: Cache, n_out: int, epochs: int, lr: float, seed: int, tag: str) -> Model:
    seed_all(seed)
    cache.fill([r[:2] for r in rows], tag)
    model = Model(n_out)
    model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01)
    size = 16
    per_epoch = math.ceil(len(rows) / size)
    steps = epochs * per_epoch
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, s / max(1, 0.06 * steps)) * max(0.0, (steps - s) / steps)
    )
    rng = random.Random(seed)
    y_all = torch.tensor([r[2] for r in rows])
    t0, step = time.perf_counter(), 0
    for epoch in range(epochs):
        total = 0.0
        for idx, (h, am) in batches(rows, cache, size, rng):
            out = model(h, am)
            y = y_all[idx]
            loss = (
                torch.nn.functional.cross_entropy(out, y)
                if n_out > 1
                else torch.nn.functional.binary_cross_entropy_with_logits(out[:, 0], y.float())
            )
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            total += loss.item() * len(idx)
            step += 1
            if step % 100 == 0:
                print(
                    f"  [{tag}] epoch {epoch + 1} step {step}/{steps} ({time.perf_counter() - t0:.0f}s)",
                    flush=True,
                )
        print(
            f"  [{tag}] epoch {epoch + 1} done: mean loss {total / len(rows):.4f} ({time.perf_counter() - t0:.0f}s)",
            flush=True,
        )
    model.eval()
    return model


def predict(model: Model, rows, cache: Cache) -> np.ndarray:
    cache.fill([r[:2] for r in rows], "predict")
    out = np.zeros((len(rows), model.head.out_features), dtype=np.float32)
    with torch.inference_mode():
        for idx, (h, am) in batches(rows, cache, 64, None):
            out[idx] = model(h, am).numpy()
    return out


def save(model: Model, folder: Path) -> None:
    """The adapter (peft format) and the head, both fp16."""
    from safetensors.torch import load_file, save_file

    folder.mkdir(parents=True, exist_ok=True)
    model.encoder.save_pretrained(str(folder))
    adapter = folder / "adapter_model.safetensors"
    save_file({k: v.half().contiguous() for k, v in load_file(str(adapter)).items()}, str(adapter))
    save_file(
        {k: v.detach().half().contiguous() for k, v in model.head.state_dict().items()},
        str(folder / "head.safetensors"),
    )
    readme = folder / "README.md"
    if readme.exists():
        readme.unlink()  # peft's model card template; the licence and provenance live in weights/LICENSE.md


# ---------------------------------------------------------------- evaluation


def eval_rows(claims, corpus):
    """Every sentence of every cited abstract, with its title; keys (claim position, doc)."""
    rows, keys = [], []
    for k, c in enumerate(claims):
        for doc in c.cited_doc_ids:
            a = corpus[doc]
            for i, sentence in enumerate(a.sentences):
                rows.append(
                    (
                        c.claim,
                        passage_text(sentence, a.title),
                        LABELS.index(c.sentence_label(doc, i)),
                    )
                )
                keys.append((k, doc))
    return rows, keys


def pair_report(claims, keys, logits: np.ndarray, temperature: float, thresholds: dict | None):
    probs = softmax(logits, temperature)
    groups: dict[tuple[int, int], list[int]] = {}
    for j, key in enumerate(keys):
        groups.setdefault(key, []).append(j)
    abstract_probs = [probs[m] for m in groups.values()]
    gold = [claims[k].gold_label(doc) for k, doc in groups]
    if thresholds is None:
        thresholds, _ = tune_thresholds(abstract_probs, gold)
    items = [
        ScoredAbstract(
            claims[k].gold_label(doc),
            claims[k].evidence.get(doc, ("NEI", ()))[1],
            abstract_decision(p, thresholds),
        )
        for (k, doc), p in zip(groups, abstract_probs, strict=True)
    ]
    pred = [it.decision.label for it in items]
    per = f1_per_label(gold, pred)
    return {
        "macro_f1": macro_f1(gold, pred),
        "f1": per,
        "rationale_f1": rationale_f1(items),
        "label_rationale_f1": label_rationale_f1(items),
        "label_only_f1": label_only_f1(items),
        "thresholds": thresholds,
        "abstracts": len(items),
    }


def fmt(r: dict) -> str:
    return (
        f"macro_f1={r['macro_f1']:.3f} f1_support={r['f1']['SUPPORT']:.3f} f1_contradict={r['f1']['CONTRADICT']:.3f} "
        f"f1_nei={r['f1']['NEI']:.3f} rationale_f1={r['rationale_f1']:.3f} label_rationale_f1={r['label_rationale_f1']:.3f} "
        f"label_only_f1={r['label_only_f1']:.3f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data" / "scifact")
    parser.add_argument("--out", type=Path, default=WEIGHTS)
    parser.add_argument(
        "--folds",
        type=int,
        default=1,
        help="how many of the 5 claim-grouped folds to run (default 1: fold 0)",
    )
    parser.add_argument(
        "--ablate",
        action="store_true",
        help="also measure the pair model without each augmentation",
    )
    parser.add_argument("--pair-epochs", type=int, default=5)
    parser.add_argument("--rel-epochs", type=int, default=5)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument(
        "--ship",
        choices=("fold0", "all"),
        default="fold0",
        help="fold0 (default): ship the fold-0 model (fit on 4/5 of train, calibrated on the held-out 1/5); "
        "all: refit on all of train (another full training, > 45 min on 2 shared cores)",
    )
    parser.add_argument("--only", choices=("pair", "relevance"), default=None)
    parser.add_argument(
        "--cv-only", action="store_true", help="report cross-validation, write nothing"
    )
    parser.add_argument(
        "--variants", default="", help="with --ablate: only these (all,no-negate,no-hard,none)"
    )
    parser.add_argument(
        "--limit", type=int, default=0, help="smoke test: only the first N train claims"
    )
    parser.add_argument(
        "--vocabulary",
        action="store_true",
        help="rebuild the document frequencies of the relevance calibration's coverage feature (SciFact corpus)",
    )
    parser.add_argument(
        "--frozen",
        type=int,
        default=FROZEN,
        help="bottom layers kept as packaged (0: adapt all six)",
    )
    args = parser.parse_args()
    globals()["FROZEN"] = args.frozen
    torch.set_num_threads(int(os.environ.get("JUDGEMENT_THREADS", "2")))
    started = time.perf_counter()
    claims = load_claims(args.data / "claims_train.jsonl")  # the train split and nothing else
    if args.limit:
        claims = claims[: args.limit]
    corpus = load_corpus(args.data / "corpus.jsonl")
    relevant: dict[int, set[int]] = {}
    for line in (args.data / "beir" / "qrels" / "train.tsv").read_text().splitlines()[1:]:
        qid, did, _ = line.split("\t")
        relevant.setdefault(int(qid), set()).add(int(did))
    if args.vocabulary:
        from research_judgement.coverage import Vocabulary

        Vocabulary.of([abstract_text(a.title, a.sentences) for a in corpus.values()]).save(
            args.out / VOCABULARY.name
        )
        print(f"wrote {args.out / VOCABULARY.name}", flush=True)
    index = tfidf_index(corpus)
    folds = [[c for k, c in enumerate(claims) if k % 5 == f] for f in range(5)]
    config = {
        "seed": SEED,
        "pair_max_len": PAIR_MAX_LEN,
        "relevance_max_len": REL_MAX_LEN,
        "folds_run": args.folds,
        "lora_rank": 16,
        "lr": args.lr,
        "pair_epochs": args.pair_epochs,
        "relevance_epochs": args.rel_epochs,
        "augmentations": list(AUGMENTATIONS),
        "frozen_layers": FROZEN,
        "cv": {},
    }

    if args.only in (None, "pair"):
        pair_cache = Cache(PAIR_MAX_LEN)
        variants = [("all", set(AUGMENTATIONS))]
        if args.ablate:
            variants += [(f"no-{a}", set(AUGMENTATIONS) - {a}) for a in AUGMENTATIONS] + [
                ("none", set())
            ]
        if args.variants:
            variants = [v for v in variants if v[0] in args.variants.split(",")]
        oof: dict[str, tuple[list, list, list]] = {}
        for name, augment in variants:
            all_logits, all_keys, all_claims = [], [], []
            for f in range(args.folds):
                held = folds[f]
                fit_claims = [c for g in range(5) if g != f for c in folds[g]]
                rows = pair_rows(fit_claims, corpus, augment, index, random.Random(SEED))
                print(
                    f"pair[{name}] fold {f}: {len(rows)} training rows, {len(held)} held-out claims",
                    flush=True,
                )
                model = train(
                    rows, pair_cache, 3, args.pair_epochs, args.lr, SEED, f"pair {name} f{f}"
                )
                if name == "all" and f == 0:
                    shipped_pair = (
                        model  # shipped unless --ship all: fit on folds 1-4, calibrated on fold 0
                    )
                erows, keys = eval_rows(held, corpus)
                logits = predict(model, erows, pair_cache)
                offset = len(all_claims)
                all_logits.append(logits)
                all_keys += [(k + offset, d) for k, d in keys]
                all_claims += held
            logits = np.concatenate(all_logits)
            erows_all = [r for f in range(args.folds) for r in eval_rows(folds[f], corpus)[0]]
            y = np.array([r[2] for r in erows_all])
            temperature = fit_temperature(logits, y)
            report = pair_report(all_claims, all_keys, logits, temperature, None)
            report["ece_raw"], report["ece"] = (
                ece(softmax(logits), y),
                ece(softmax(logits, temperature), y),
            )
            report["temperature"] = temperature
            oof[name] = report
            print(
                f"cv pair[{name}] claims={len(all_claims)} {fmt(report)} ece_raw={report['ece_raw']:.3f} "
                f"ece={report['ece']:.3f} T={temperature:.2f} thresholds={report['thresholds']} "
                f"({time.perf_counter() - started:.0f}s)",
                flush=True,
            )
        config["cv"]["pair"] = oof
        if not args.cv_only:
            if args.ship == "all":
                rows = pair_rows(claims, corpus, set(AUGMENTATIONS), index, random.Random(SEED))
                print(f"pair final: {len(rows)} training rows", flush=True)
                shipped_pair = train(
                    rows, pair_cache, 3, args.pair_epochs, args.lr, SEED, "pair final"
                )
            save(shipped_pair, args.out / "pair")

    if args.only in (None, "relevance"):
        rel_cache = Cache(REL_MAX_LEN)
        dense = dense_index(corpus)
        all_scores, all_y, all_rows = [], [], []
        for f in range(args.folds):
            fit_claims = [c for g in range(5) if g != f for c in folds[g]]
            rows = relevance_rows(fit_claims, corpus, relevant, index, random.Random(SEED))
            held = relevance_rows(
                folds[f], corpus, relevant, index, random.Random(SEED + 1), **HELD_OUT, dense=dense
            )
            print(
                f"relevance fold {f}: {len(rows)} training rows, {len(held)} held-out rows",
                flush=True,
            )
            model = train(rows, rel_cache, 1, args.rel_epochs, args.lr, SEED, f"relevance f{f}")
            if f == 0:
                shipped_rel = model
            all_scores.append(predict(model, held, rel_cache)[:, 0])
            all_y += [r[2] for r in held]
            all_rows += held
        scores, y = np.concatenate(all_scores), np.array(all_y)
        a, b = fit_platt(scores, y)
        acc = float(((scores > 0) == y).mean())
        config["cv"]["relevance"] = {
            "platt": [a, b],
            "accuracy": acc,
            "ece_raw": ece(sigmoid(scores), y),
            "ece": ece(sigmoid(a * scores + b), y),
            "rows": len(y),
        }
        config["cv"]["relevance"]["gate"] = gate = fit_gate(scores, y, all_rows)
        print(
            f"cv relevance rows={len(y)} accuracy={acc:.3f} ece_raw={config['cv']['relevance']['ece_raw']:.3f} "
            f"ece={config['cv']['relevance']['ece']:.3f} platt=({a:.3f}, {b:.3f}) gate={gate} "
            f"({time.perf_counter() - started:.0f}s)",
            flush=True,
        )
        if not args.cv_only:
            if args.ship == "all":
                rows = relevance_rows(claims, corpus, relevant, index, random.Random(SEED))
                shipped_rel = train(
                    rows, rel_cache, 1, args.rel_epochs, args.lr, SEED, "relevance final"
                )
            save(shipped_rel, args.out / "relevance")

    if args.cv_only:
        return
    path = args.out / "judgement.json"
    shipped = json.loads(path.read_text()) if path.exists() else {}
    if "pair" in config["cv"]:
        r = config["cv"]["pair"]["all"]
        shipped["pair"] = {
            "max_length": PAIR_MAX_LEN,
            "temperature": r["temperature"],
            "thresholds": r["thresholds"],
        }
    if "relevance" in config["cv"]:
        gate = config["cv"]["relevance"]["gate"]
        shipped["relevance"] = {
            "max_length": REL_MAX_LEN,
            "platt": gate["platt"],
            "coverage_weight": gate["coverage_weight"],
            "thresholds": gate["thresholds"],
        }
    shipped.setdefault("training", {}).update({k: v for k, v in config.items() if k != "cv"})
    shipped.setdefault("cv", {}).update(config["cv"])
    path.write_text(json.dumps(shipped, indent=2, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
    print(f"wrote {args.out} ({size / 1e6:.2f} MB) in {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    sys.exit(main())
