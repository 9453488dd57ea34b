"""Train the abstract-level evidence model (`research_judgement.abstract`) on SciFact train.

Recipe (docs/judgement.md):
- rows: a claim with a whole abstract — its gold evidence abstracts (label + rationale sentences),
  its cited abstracts without evidence (NEI), and the hard negatives the engine really meets: the
  top of its own hybrid search over the full corpus (`scripts/abstract_candidates.py`), `--negatives`
  per claim; each evidence claim also once negated (`research_judgement.scifact.negate_claim`: the
  label flips SUPPORT ↔ CONTRADICT, the rationale stays), which is where most CONTRADICT rows come from;
- start from what already learned: the shipped pair model's LoRA adapter (LoRA on every layer,
  trained further) or, with `--mode full`, that adapter merged and every weight trained; the pair
  head initialises the label head and (S + C)/2 − NEI of it the rationale head;
- loss: class-weighted cross-entropy on the label + BCE on each sentence's rationale;
- folds: claims grouped by index mod 5 (the shipped models' split); each fold trains on the other
  four, is evaluated after every epoch on its held-out claims over their top `--k` search hits
  (SciFact's abstract-level label-only F1 at the tuned evidence threshold), keeps its best epoch,
  and is calibrated there (temperature). Fold 0's model is the one shipped (`--ship`).

    python scripts/train_abstract.py --candidates DIR/candidates.jsonl --folds 0 [--mode lora|full]
        [--epochs 4] [--negatives 6] [--out OUT] [--ship]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "libs" / "judgement" / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from research_judgement.abstract import collate, windows
from research_judgement.metrics import fit_temperature, softmax
from research_judgement.scifact import LABELS, load_claims, load_corpus, negate_claim

DATA = REPO.parent / "shared" / "data" / "scifact"
SHIPPED_PAIR = REPO / "libs" / "judgement" / "src" / "research_judgement" / "weights" / "pair"
SHIP_TO = REPO / "libs" / "judgement" / "src" / "research_judgement" / "weights" / "abstract"


def fold_of(index: int) -> int:
    return index % 5


def rows_for(
    claims,
    corpus,
    candidates,
    negatives: int,
    augment: bool,
    rng: random.Random,
    flips: int = 0,
) -> list[tuple]:
    """(claim text, doc_id, label, rationale indices) training rows. With `flips`, up to that many
    more rows: a claim with evidence whose direction word the curated lexicon turns
    (`research_verification.direction.flip`, when it differs from `negate_claim`'s turn) against its
    own evidence abstracts, the opposite label and the same rationale."""
    from research_verification.direction import flip as turn

    rows = []
    added = 0
    for claim in claims:
        docs = {
            d: (lab, frozenset().union(*sets))
            for d, (lab, sets) in claim.evidence.items()
            if d in corpus
        }
        for d in claim.cited_doc_ids:
            if d in corpus and d not in docs:
                docs[d] = ("NEI", frozenset())
        hard = [d for d, _ in candidates.get(claim.id, []) if d not in docs and d in corpus][
            :negatives
        ]
        for d in hard:
            docs[d] = ("NEI", frozenset())
        for d, (label, rationale) in docs.items():
            rows.append((claim.claim, d, label, rationale))
        if augment and claim.evidence:
            negated = negate_claim(claim.claim)
            if negated:
                flip = {"SUPPORT": "CONTRADICT", "CONTRADICT": "SUPPORT"}
                for d, (label, rationale) in docs.items():
                    if label != "NEI":
                        rows.append((negated, d, flip[label], rationale))
                for d in hard[:2]:
                    rows.append((negated, d, "NEI", frozenset()))
        turned = turn(claim.claim) if claim.evidence and added < flips else None
        if turned and turned != negate_claim(claim.claim):
            opposite = {"SUPPORT": "CONTRADICT", "CONTRADICT": "SUPPORT"}
            for d, (label, rationale) in docs.items():
                if label != "NEI" and added < flips:
                    rows.append((turned, d, opposite[label], rationale))
                    added += 1
    rng.shuffle(rows)
    return rows


def examples(tokenizer, rows, corpus, max_length: int) -> list[tuple]:
    """Each row's windows with their targets: (window, label id, rationale targets over the window's sentences)."""
    out = []
    for claim, doc, label, rationale in rows:
        paper = corpus[doc]
        for w in windows(tokenizer, claim, paper.title, paper.sentences, max_length):
            inside = [i in rationale for i in w.sentences]
            window_label = label if label == "NEI" or any(inside) else "NEI"
            out.append((w, LABELS.index(window_label), [float(x) for x in inside]))
    return out


def load_encoder(base: Path, pair: Path, mode: str, rank: int):
    import torch
    from peft import PeftModel
    from transformers import AutoModel

    encoder = AutoModel.from_pretrained(str(base), torch_dtype=torch.float32)
    if mode == "full":
        encoder = PeftModel.from_pretrained(encoder, str(pair)).merge_and_unload()
        for p in encoder.parameters():
            p.requires_grad_(True)
        return encoder
    return PeftModel.from_pretrained(encoder, str(pair), is_trainable=True)


def init_heads(model, pair: Path) -> None:
    import torch
    from safetensors.torch import load_file

    head = load_file(str(pair / "head.safetensors"))
    w, b = head["weight"].float(), head["bias"].float()
    with torch.no_grad():
        model.label.weight.copy_(w)
        model.label.bias.copy_(b)
        model.rationale.weight.copy_(((w[0] + w[1]) / 2 - w[2])[None, :])
        model.rationale.bias.copy_(((b[0] + b[1]) / 2 - b[2])[None])


def predict(model, tokenizer, items, corpus, device, max_length: int, batch: int = 32) -> dict:
    """(claim text, doc) → (label logits of its strongest window, rationale logits per sentence)."""
    import torch

    jobs = []
    for key in items:
        claim, doc = key
        paper = corpus[doc]
        for w in windows(tokenizer, claim, paper.title, paper.sentences, max_length):
            jobs.append((key, w))
    out: dict = {}
    order = sorted(range(len(jobs)), key=lambda i: len(jobs[i][1].input_ids))
    model.eval()
    with torch.inference_mode():
        for start in range(0, len(order), batch):
            chunk = [jobs[i] for i in order[start : start + batch]]
            tensors = [t.to(device) for t in collate([w for _, w in chunk])]
            with torch.autocast(
                device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"
            ):
                logits, scores = model(*tensors)
            for (key, w), row, sc in zip(
                chunk, logits.float().cpu().numpy(), scores.float().cpu().numpy(), strict=True
            ):
                label, rationale = out.get(
                    key, (None, np.full(len(corpus[key[1]].sentences), -20.0, dtype=np.float32))
                )
                if label is None or softmax(row[None])[0, 2] < softmax(label[None])[0, 2]:
                    label = row
                for slot, index in enumerate(w.sentences):
                    rationale[index] = sc[slot]
                out[key] = (label, rationale)
    return out


def scifact_scores(
    claims,
    hits,
    preds,
    temperature: float,
    evidence: float,
    contradict_weight: float = 1.0,
    best_evidence: float | None = None,
) -> dict:
    """SciFact abstract-level label-only and label+rationale P/R/F1 over each claim's top hits, the
    claim-level macro-F1 (the side with the larger summed evidence; NEI when none predicted) and the
    share of claims with evidence that cite nothing. An abstract counts when P(evidence) reaches
    `evidence`, or `best_evidence` for the claim's most evidential abstract (as `judge_abstracts`)."""
    predicted = correct = correct_rationale = gold = nothing = with_evidence = 0
    claim_gold, claim_pred = [], []
    for claim in claims:
        gold += len(claim.evidence)
        side = "NEI"
        votes = {"SUPPORT": 0.0, "CONTRADICT": 0.0}
        docs = [d for d in hits.get(claim.id, []) if (claim.claim, d) in preds]
        probs = {d: softmax(preds[(claim.claim, d)][0][None], temperature)[0] for d in docs}
        top = max(docs, key=lambda d: 1 - probs[d][2], default=None)
        for doc in docs:
            rationale = preds[(claim.claim, doc)][1]
            p = probs[doc]
            floor = (
                min(evidence, best_evidence)
                if best_evidence is not None and doc == top
                else evidence
            )
            if 1 - p[2] < floor:
                continue
            label = "SUPPORT" if p[0] >= p[1] * contradict_weight else "CONTRADICT"
            predicted += 1
            votes[label] += 1 - p[2]
            if doc in claim.evidence and claim.evidence[doc][0] == label:
                correct += 1
                quote = int(np.argmax(rationale))
                if any(quote in s for s in claim.evidence[doc][1]):
                    correct_rationale += 1
        if any(votes.values()):
            side = max(votes, key=votes.get)
        if claim.evidence:
            with_evidence += 1
            nothing += not any(votes.values())
        claim_gold.append(next(iter(claim.evidence.values()))[0] if claim.evidence else "NEI")
        claim_pred.append(side)

    def f1(c: int) -> tuple[float, float, float]:
        p = c / predicted if predicted else 0.0
        r = c / gold if gold else 0.0
        return p, r, (2 * p * r / (p + r) if p + r else 0.0)

    from research_judgement.metrics import f1_per_label

    per = f1_per_label(claim_gold, claim_pred)
    return {
        "label_only": f1(correct),
        "label_rationale": f1(correct_rationale),
        "claim_macro_f1": sum(per.values()) / 3,
        "claim_f1": per,
        "predicted": predicted,
        "gold": gold,
        "cite_nothing": nothing / with_evidence if with_evidence else 0.0,
    }


def tune(claims, hits, preds, temperature: float) -> tuple[dict, dict]:
    """The thresholds with the best label-only F1 on the held-out claims (ties: fewer claims citing nothing)."""
    best: tuple[tuple[float, float], dict, dict] | None = None
    for evidence in np.arange(0.2, 0.91, 0.05):
        for best_evidence in (0.2, 0.3, 0.4, 0.5, 1.0):
            for weight in (0.8, 1.0, 1.25, 1.5):
                chosen = {
                    "evidence": round(float(evidence), 2),
                    "best_evidence": min(best_evidence, round(float(evidence), 2)),
                    "contradict_weight": weight,
                }
                s = scifact_scores(
                    claims,
                    hits,
                    preds,
                    temperature,
                    chosen["evidence"],
                    weight,
                    chosen["best_evidence"],
                )
                key = (round(s["label_only"][2], 4), -s["cite_nothing"])
                if best is None or key > best[0]:
                    best = (key, chosen, s)
    assert best is not None
    return best[1], best[2]


def train_fold(fold: int, args, claims, corpus, candidates, device, log) -> dict:
    import torch
    from transformers import AutoTokenizer

    from research_judgement.abstract import build_model

    rng = random.Random(1000 + fold)
    torch.manual_seed(1000 + fold)
    tokenizer = AutoTokenizer.from_pretrained(str(args.base))
    train_claims = [c for i, c in enumerate(claims) if fold_of(i) != fold]
    held = [c for i, c in enumerate(claims) if fold_of(i) == fold]
    if args.limit:
        train_claims, held = train_claims[: args.limit], held[: max(8, args.limit // 4)]
    rows = rows_for(
        train_claims, corpus, candidates, args.negatives, not args.no_augment, rng, args.flips
    )
    data = examples(tokenizer, rows, corpus, args.max_length)
    counts = np.bincount([y for _, y, _ in data], minlength=3).astype(float)
    class_weight = torch.tensor(
        (counts.sum() / (3 * np.maximum(counts, 1))) ** args.balance,
        dtype=torch.float32,
        device=device,
    )
    log(
        f"fold {fold}: {len(train_claims)} train claims, {len(rows)} rows, {len(data)} windows "
        f"(S/C/NEI {counts.astype(int).tolist()}), class weights {[round(x, 2) for x in class_weight.tolist()]}"
    )
    hits = {c.id: [d for d, _ in candidates.get(c.id, [])[: args.k] if d in corpus] for c in held}
    items = sorted({(c.claim, d) for c in held for d in hits[c.id]})

    model = build_model(load_encoder(args.base, args.pair, args.mode, args.rank)).to(device)
    init_heads(model, args.pair)
    params = [
        {
            "params": [
                p
                for n, p in model.named_parameters()
                if p.requires_grad and n.startswith("encoder.")
            ],
            "lr": args.lr,
        },
        {
            "params": list(model.rationale.parameters()) + list(model.label.parameters()),
            "lr": args.head_lr,
        },
    ]
    optimiser = torch.optim.AdamW(params, weight_decay=0.01)
    steps = args.epochs * math.ceil(len(data) / args.batch)
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser,
        lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / max(1, steps - warmup)),
    )
    pos_weight = torch.tensor(args.pos_weight, device=device)
    best: dict = {"score": -1.0}
    started = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        order = sorted(
            range(len(data)), key=lambda i: (len(data[i][0].input_ids) // 64, rng.random())
        )
        batches = [order[i : i + args.batch] for i in range(0, len(order), args.batch)]
        rng.shuffle(batches)
        total = 0.0
        for n, idx in enumerate(batches, 1):
            chunk = [data[i] for i in idx]
            ids, types, mask, pool, present = (
                t.to(device) for t in collate([w for w, _, _ in chunk])
            )
            target = torch.tensor([y for _, y, _ in chunk], device=device)
            rationale_target = torch.zeros(present.shape, device=device)
            for b, (_, _, r) in enumerate(chunk):
                rationale_target[b, : len(r)] = torch.tensor(r, device=device)
            with torch.autocast(
                device_type=device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"
            ):
                logits, scores = model(ids, types, mask, pool, present)
            loss = torch.nn.functional.cross_entropy(logits.float(), target, weight=class_weight)
            bce = torch.nn.functional.binary_cross_entropy_with_logits(
                scores.float(), rationale_target, pos_weight=pos_weight, reduction="none"
            )
            loss = loss + args.rationale_weight * (bce * present).sum() / present.sum().clamp(min=1)
            optimiser.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            total += float(loss)
            if args.max_steps and n >= args.max_steps:
                break
        preds = predict(model, tokenizer, items, corpus, device, args.max_length)
        label_logits = np.stack([preds[k][0] for k in items]) if items else np.zeros((0, 3))
        gold_index = np.array(
            [
                LABELS.index(
                    next(c for c in held if c.claim == k[0]).evidence.get(k[1], ("NEI",))[0]
                )
                for k in items
            ]
        )
        temperature = fit_temperature(label_logits, gold_index) if items else 1.0
        chosen, score = tune(held, hits, preds, temperature)
        log(
            f"fold {fold} epoch {epoch}: loss {total / len(batches):.4f}; held-out ({len(held)} claims, top {args.k}) "
            f"label-only P/R/F1 {score['label_only'][0]:.3f}/{score['label_only'][1]:.3f}/{score['label_only'][2]:.3f}, "
            f"+rationale F1 {score['label_rationale'][2]:.3f}, claim macro-F1 {score['claim_macro_f1']:.3f}, "
            f"cite nothing {score['cite_nothing']:.3f} ({chosen}, T {temperature:.2f}); {time.perf_counter() - started:.0f} s"
        )
        if score["label_only"][2] > best["score"]:
            best = {
                "score": score["label_only"][2],
                "epoch": epoch,
                "temperature": temperature,
                "thresholds": chosen,
                "metrics": score,
                "preds": {
                    f"{k[0]}\t{k[1]}": [preds[k][0].tolist(), preds[k][1].tolist()] for k in items
                },
                "state": {
                    n: p.detach().float().cpu().clone()
                    for n, p in model.named_parameters()
                    if p.requires_grad or n.startswith(("rationale.", "label."))
                },
            }
    best["seconds"] = time.perf_counter() - started
    best["rows"], best["windows"] = len(rows), len(data)
    best["model"] = model
    return best


def save(best: dict, args, folder: Path, fold: int) -> None:
    import torch
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    model = best["model"]
    with torch.no_grad():
        for n, p in model.named_parameters():
            if n in best["state"]:
                p.copy_(best["state"][n].to(p.device))
    heads = {
        f"rationale.{k}": v.detach().cpu().contiguous()
        for k, v in model.rationale.state_dict().items()
    }
    heads |= {
        f"label.{k}": v.detach().cpu().contiguous() for k, v in model.label.state_dict().items()
    }
    save_file(heads, str(folder / "heads.safetensors"))
    if args.mode == "full":
        state = {
            k: v.detach().cpu().half().contiguous() for k, v in model.encoder.state_dict().items()
        }
        save_file(state, str(folder / "encoder.fp16.safetensors"))
    else:
        model.encoder.save_pretrained(str(folder))
    metrics = best["metrics"]
    (folder / "abstract.json").write_text(
        json.dumps(
            {
                "recipe": {
                    "mode": args.mode,
                    "epochs": args.epochs,
                    "best_epoch": best["epoch"],
                    "negatives": args.negatives,
                    "augment": not args.no_augment,
                    "lr": args.lr,
                    "head_lr": args.head_lr,
                    "batch": args.batch,
                    "balance": args.balance,
                    "rationale_weight": args.rationale_weight,
                    "pos_weight": args.pos_weight,
                    "max_length": args.max_length,
                    "k": args.k,
                    "init": "pair adapter",
                    "held_out_fold": fold,
                    "rows": best["rows"],
                    "windows": best["windows"],
                    "seconds": round(best["seconds"], 1),
                },
                "temperature": round(float(best["temperature"]), 4),
                "thresholds": best["thresholds"],
                "held_out": {
                    "label_only": metrics["label_only"],
                    "label_rationale": metrics["label_rationale"],
                    "claim_macro_f1": metrics["claim_macro_f1"],
                    "claim_f1": metrics["claim_f1"],
                    "cite_nothing": metrics["cite_nothing"],
                },
            },
            indent=2,
        )
        + "\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--candidates", type=Path, required=True)
    parser.add_argument("--base", type=Path)
    parser.add_argument("--pair", type=Path, default=SHIPPED_PAIR)
    parser.add_argument(
        "--folds", default="0", help="comma-separated folds to train (0 is the shipped one)"
    )
    parser.add_argument(
        "--fold",
        type=int,
        choices=range(5),
        help="train this one fold (held out: claims with index mod 5 == K); overrides --folds",
    )
    parser.add_argument(
        "--flips",
        type=int,
        default=0,
        help="add up to this many direction-flipped train claims (research_verification.direction.flip, "
        "a curated lexicon of biomedical direction words) with their own rationale, opposite label",
    )
    parser.add_argument("--mode", choices=["lora", "full"], default="lora")
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--negatives", type=int, default=6)
    parser.add_argument("--no-augment", action="store_true")
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--head-lr", type=float, default=1e-3)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument(
        "--balance", type=float, default=0.5, help="class weight = (n / 3 n_c) ** balance"
    )
    parser.add_argument("--rationale-weight", type=float, default=1.0)
    parser.add_argument("--pos-weight", type=float, default=3.0)
    parser.add_argument("--max-length", type=int, default=512)
    parser.add_argument(
        "--k", type=int, default=10, help="search hits per held-out claim the evaluation judges"
    )
    parser.add_argument(
        "--limit", type=int, default=0, help="smoke test: only this many train claims"
    )
    parser.add_argument("--max-steps", type=int, default=0, help="smoke test: steps per epoch")
    parser.add_argument("--out", type=Path, default=Path("abstract-out"))
    parser.add_argument(
        "--ship",
        action="store_true",
        help="write fold 0's model into the package's weights/abstract",
    )
    parser.add_argument("--threads", type=int, default=0)
    args = parser.parse_args()
    if args.fold is not None:
        args.folds = str(args.fold)
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    if args.base is None:
        from research_judgement.scorer import base_model_path

        args.base = base_model_path()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    claims = load_claims(args.data / "claims_train.jsonl")
    corpus = load_corpus(args.data / "corpus.jsonl")
    candidates = {}
    for line in args.candidates.read_text().splitlines():
        row = json.loads(line)
        if row["split"] == "train":
            candidates[int(row["id"])] = [(int(d), s) for d, s in row["hits"]]
    args.out.mkdir(parents=True, exist_ok=True)
    logfile = (args.out / f"train-{args.mode}.log").open("a")

    def log(message: str) -> None:
        print(message, flush=True)
        logfile.write(message + "\n")
        logfile.flush()

    log(f"device {device}; mode {args.mode}; folds {args.folds}; {vars(args)}")
    summary = {}
    for fold in (int(f) for f in args.folds.split(",")):
        best = train_fold(fold, args, claims, corpus, candidates, device, log)
        log(
            f"fold {fold}: best epoch {best['epoch']}, label-only F1 {best['score']:.4f}, {best['seconds']:.0f} s"
        )
        folder = args.out / f"{args.mode}-fold{fold}"
        save(best, args, folder, fold)
        (args.out / f"{args.mode}-fold{fold}-preds.json").write_text(json.dumps(best["preds"]))
        summary[fold] = {
            "epoch": best["epoch"],
            "label_only_f1": best["score"],
            "metrics": best["metrics"],
            "seconds": best["seconds"],
        }
        if fold == 0 and args.ship:
            save(best, args, SHIP_TO, fold)
        del best
    (args.out / f"summary-{args.mode}.json").write_text(json.dumps(summary, indent=2, default=str))


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
