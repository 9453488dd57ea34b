"""Claim verification end to end through the HTTP API on the full SciFact corpus, scored with SciFact's own metric.

`task bench:verify_e2e`. The whole corpus (5,183 abstracts) is ingested once into a cached data
folder (`bench/full_corpus.py`, `--data-dir`); the stack runs as separate processes (connector,
verifier, gateway; embedded nats-server and PostgreSQL on that folder), and each claim goes in
through `POST /api/research/v1/verifications` and comes back through `GET …/verifications/{id}`:
the engine's own search, judgement, verdict and report, as a user's request runs.

Claims: `--split train` (default) takes SciFact **train** claims of the held-out fold — claim
index mod 5 == 0, the fold the shipped judgement models were not trained on (docs/judgement.md);
`--split dev` the 150 dev claims of `claims_dev.jsonl` (run once per shipped model). `--claims N`
takes the first N (0 = all).

Scores:
- **SciFact abstract-level, label only**, exactly as the SciFact evaluator counts it: every
  abstract the report cites on a side is a predicted (abstract, label) — its label the side of its
  strongest quote; it is correct when the abstract is gold evidence for the claim with that label.
  P = correct / predicted, R = correct / gold evidence abstracts, F1. The **rationale** variant
  also needs the strongest quote to be one of that abstract's annotated rationale sentences.
- **claim level**: a claim's gold label is SUPPORT or CONTRADICT when one of its cited abstracts is
  annotated so (the first such), NEI when none is; the verdict is mapped STRONGLY / PARTIALLY
  SUPPORTED → SUPPORT, WEAKLY CONTRADICTED / CONTRADICTED → CONTRADICT, MIXED / INSUFFICIENT → NEI;
  macro-F1 over the three and CONTRADICT's F1.
- **cite nothing**: the share of claims with gold evidence whose verification cites no source.

Ends with:

    bench:verify_e2e scifact_f1=… scifact_rationale_f1=… claim_macro_f1=… f1_contradict=… cite_nothing=… support_precision=… support_recall=… contradict_recall=… s_per_verification=… claims=… corpus=5183

Before it, what the user acts on: `support_precision` (claims given STRONGLY or PARTIALLY
SUPPORTED whose gold label is SUPPORT, of all given those), `support_recall`, `contradict_recall`,
each with its Wilson 95 % interval, verdict precision per confidence level, and what the LLM check
did when one is configured.

Anchor: the engine before this round, measured the same way on 120 dev claims: label-only F1 0.31,
claim macro-F1 0.43 (CONTRADICT 0.20), 18 of 70 claims with evidence citing nothing.
`--subset N` is a smoke test only: the cited abstracts plus N random ones in a throw-away database.

    .venv/bin/python bench/verify_e2e.py [--split train|dev] [--claims N] [--data-dir DIR] [--subset N] [--concurrency 2]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
from full_corpus import DATA, corpus_dir, ensure_ingested, load_corpus

from bench.harness.results import print_summary
from bench.harness.scifact_options import add_split
from research_judgement.metrics import f1_per_label, wilson
from research_judgement.scifact import LABELS

MAPPING = {
    "STRONGLY SUPPORTED": "SUPPORT",
    "PARTIALLY SUPPORTED": "SUPPORT",
    "WEAKLY CONTRADICTED": "CONTRADICT",
    "CONTRADICTED": "CONTRADICT",
    "MIXED EVIDENCE": "NEI",
    "INSUFFICIENT EVIDENCE": "NEI",
}
SIDES = {"Corroborating Evidence": "SUPPORT", "Contradicting Evidence": "CONTRADICT"}
ANCHOR = {
    "scifact_f1": 0.31,
    "claim_macro_f1": 0.43,
    "f1_contradict": 0.20,
}  # before this round, 120 dev claims, full corpus
STRENGTH = re.compile(r"strength ([0-9.]+)")


def claims_of(data: Path, split: str, wanted: int) -> list[dict]:
    """The claims to verify with their claim-level gold label and gold evidence (doc → label, rationale)."""
    rows = [json.loads(line) for line in (data / f"claims_{split}.jsonl").open() if line.strip()]
    out = []
    for index, claim in enumerate(rows):
        if split == "train" and index % 5:
            continue
        labels = [sets[0]["label"] for sets in claim["evidence"].values()]
        claim["gold"] = labels[0] if labels else "NEI"
        claim["gold_docs"] = {
            int(d): (sets[0]["label"], {i for s in sets for i in s["sentences"]})
            for d, sets in claim["evidence"].items()
        }
        out.append(claim)
        if wanted and len(out) >= wanted:
            break
    return out


def corpus_subset(
    data: Path, claims: list[dict], distractors: int, folder: Path
) -> tuple[Path, int]:
    """Smoke test only: a SciFact-format file of the cited abstracts + seeded random distractors."""
    lines = [line for line in (data / "corpus.jsonl").open() if line.strip()]
    cited = {int(d) for c in claims for d in c["cited_doc_ids"]}
    keep = [line for line in lines if json.loads(line)["doc_id"] in cited]
    rest = [line for line in lines if json.loads(line)["doc_id"] not in cited]
    keep += random.Random(2020).sample(rest, min(distractors, len(rest)))
    path = folder / "scifact_subset.jsonl"
    path.write_text("".join(keep))
    return path, len(keep)


def verify_all(client, claims: list[dict], concurrency: int, timeout: float) -> list[dict]:
    """Submit `concurrency` at a time; each result holds the view and its wall seconds."""
    results: list[dict] = []
    pending = list(claims)
    running: dict[str, tuple[dict, float]] = {}
    while pending or running:
        while pending and len(running) < concurrency:
            claim = pending.pop(0)
            accepted = client.post("/api/research/v1/verifications", json={"claim": claim["claim"]})
            if (
                400 <= accepted.status_code < 500
            ):  # refused (a claim the gateway will not take): it counts, as nothing found
                detail = str(accepted.json().get("detail", accepted.text))[:200]
                results.append(
                    {
                        "claim": claim,
                        "view": {"status": f"refused {accepted.status_code}: {detail}"},
                        "seconds": 0.0,
                        "timed_out": False,
                        "refused": True,
                    }
                )
                print_row(results[-1], len(results), len(claims))
                continue
            accepted.raise_for_status()
            running[accepted.json()["verification_id"]] = (claim, time.perf_counter())
        time.sleep(0.5)
        for verification_id, (claim, started) in list(running.items()):
            view = client.get(f"/api/research/v1/verifications/{verification_id}").json()
            waited = time.perf_counter() - started
            if view["status"] != "running" or waited > timeout:
                del running[verification_id]
                results.append(
                    {
                        "claim": claim,
                        "view": view,
                        "seconds": waited,
                        "timed_out": view["status"] == "running",
                    }
                )
                print_row(results[-1], len(results), len(claims))
    return results


def _plain(text: str) -> str:
    return " ".join(text.lower().split())


def cited_abstracts(
    view: dict, corpus: dict[int, dict]
) -> dict[int, tuple[str, float, int | None]]:
    """doc_id → (label, strength, sentence index of the strongest quote) of every corpus abstract the
    report cites on a side: its label is the side of its strongest quote (SciFact's predicted label)."""
    report = view.get("report") or {}
    refs = {r["id"]: r for r in report.get("references", [])}
    out: dict[int, tuple[str, float, int | None]] = {}
    for section in report.get("sections", []):
        side = SIDES.get(section.get("title", ""))
        if side is None:
            continue
        for finding in section.get("findings", []):
            for quote in finding.get("quotes", []):
                paper = (refs.get(quote["reference_id"]) or {}).get("paper_id") or ""
                if not paper.startswith("corpus:") or not paper.removeprefix("corpus:").isdigit():
                    continue
                doc = int(paper.removeprefix("corpus:"))
                found = STRENGTH.search(quote.get("locator") or "")
                strength = float(found.group(1)) if found else 0.0
                if doc in out and out[doc][1] >= strength:
                    continue
                text = _plain(quote["text"])
                sentences = [_plain(s) for s in (corpus.get(doc) or {}).get("abstract", [])]
                index = next(
                    (i for i, s in enumerate(sentences) if text and (text in s or s in text)), None
                )
                out[doc] = (side, strength, index)
    return out


def print_row(result: dict, n: int, total: int) -> None:
    claim, view = result["claim"], result["view"]
    verdict = view.get("verdict") or view["status"]
    result["predicted"] = MAPPING.get(verdict, "NEI")
    refs = (view.get("report") or {}).get("references", [])
    result["cites"] = len(refs)
    result["gold_cited"] = any(
        r.get("paper_id") == f"corpus:{d}" for r in refs for d in claim["gold_docs"]
    )
    mark = "ok " if result["predicted"] == claim["gold"] else "   "
    print(
        f"{n:3}/{total} {mark}{claim['gold']:10} {verdict:22} {result['seconds']:6.1f}s cites={len(refs)} "
        f"gold_cited={int(result['gold_cited'])}  {claim['claim'][:70]}",
        flush=True,
    )


def scifact_abstract(results: list[dict], corpus: dict[int, dict]) -> dict[str, float]:
    predicted = correct = correct_rationale = gold = 0
    for r in results:
        gold_docs = r["claim"]["gold_docs"]
        gold += len(gold_docs)
        for doc, (label, _, index) in cited_abstracts(r["view"], corpus).items():
            predicted += 1
            if doc in gold_docs and gold_docs[doc][0] == label:
                correct += 1
                correct_rationale += int(index is not None and index in gold_docs[doc][1])

    def prf(c: int) -> tuple[float, float, float]:
        p, rec = (c / predicted if predicted else 0.0), (c / gold if gold else 0.0)
        return p, rec, (2 * p * rec / (p + rec) if p + rec else 0.0)

    (p, rec, f1), (rp, rr, rf1) = prf(correct), prf(correct_rationale)
    return {
        "p": p,
        "r": rec,
        "f1": f1,
        "rationale_p": rp,
        "rationale_r": rr,
        "rationale_f1": rf1,
        "predicted": predicted,
        "correct": correct,
        "gold": gold,
    }


def rate(name: str, k: int, n: int) -> tuple[float, str]:
    low, high = wilson(k, n)
    value = k / n if n else 0.0
    return value, f"{name} {value:.3f} ({k}/{n}; Wilson 95 % {low:.2f}–{high:.2f})"


def what_the_user_acts_on(results: list[dict]) -> dict:
    """SUPPORTED precision and recall, CONTRADICT recall (each with its Wilson interval), verdict
    precision per confidence level, and what the LLM check (when configured) did."""
    gold = [r["claim"]["gold"] for r in results]
    pred = [r["predicted"] for r in results]
    said = [g for g, p in zip(gold, pred, strict=True) if p == "SUPPORT"]
    sp, sp_line = rate("support_precision", sum(g == "SUPPORT" for g in said), len(said))
    sr, sr_line = rate(
        "support_recall",
        sum(g == p == "SUPPORT" for g, p in zip(gold, pred, strict=True)),
        gold.count("SUPPORT"),
    )
    cr, cr_line = rate(
        "contradict_recall",
        sum(g == p == "CONTRADICT" for g, p in zip(gold, pred, strict=True)),
        gold.count("CONTRADICT"),
    )
    lines = [sp_line, sr_line, cr_line]
    levels = []
    for level in ("HIGH", "MODERATE", "LOW"):
        spoke = [
            r
            for r in results
            if (r["view"].get("confidence") or "") == level and r["predicted"] != "NEI"
        ]
        right = sum(r["predicted"] == r["claim"]["gold"] for r in spoke)
        levels.append(rate(level, right, len(spoke))[1])
    lines.append(
        "verdict precision by confidence (SUPPORTED or CONTRADICTED): " + "; ".join(levels)
    )
    checks = [
        ((r["view"].get("report") or {}).get("metadata") or {}).get("llm_check") for r in results
    ]
    asked = [c for c in checks if c and c.get("ran")]
    if any(checks):
        lines.append(
            f"LLM check: asked {len(asked)}, vetoed {sum(not c['agrees'] for c in asked)}, "
            f"did not run {sum(1 for c in checks if c and not c.get('ran'))}"
        )
    return {
        "support_precision": sp,
        "support_recall": sr,
        "contradict_recall": cr,
        "lines": lines,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split(parser, dev="the 150 dev claims (once per shipped model)")
    parser.add_argument(
        "--claims", type=int, default=0, help="the first N claims of the split (0 = all)"
    )
    parser.add_argument(
        "--data-dir", type=Path, help="the cached full-corpus folder (bench/full_corpus.py)"
    )
    parser.add_argument(
        "--subset",
        type=int,
        help="SMOKE TEST ONLY: the cited abstracts + N random ones, a throw-away database",
    )
    parser.add_argument(
        "--concurrency", type=int, default=2, help="verifications in flight at once"
    )
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds one verification may take"
    )
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is absent")

    import asyncio

    import httpx

    from research_corpus.ingest import ingest_path
    from research_engine.stack import Stack
    from research_platform.db import create_engine, session_factory
    from research_platform.embedded import free_port

    claims = claims_of(DATA, args.split, args.claims)
    corpus = load_corpus(DATA)
    with tempfile.TemporaryDirectory(prefix="verify-e2e-") as tmp:
        folder = Path(tmp) / "stack" if args.subset is not None else corpus_dir(args.data_dir)
        stack = Stack(
            folder,
            gateway_port=free_port(),
            services=("connector", "verifier", "gateway"),
            extra_env={"VERIFIER__CONCURRENCY": str(args.concurrency)},
        )
        with stack:
            if args.subset is not None:
                subset, papers = corpus_subset(DATA, claims, args.subset, Path(tmp))

                async def ingest() -> object:
                    engine = create_engine(stack.database_url)
                    try:
                        return await ingest_path(
                            session_factory(engine), subset, fmt="scifact", progress=False
                        )
                    finally:
                        await engine.dispose()

                asyncio.run(ingest())
                print(
                    f"SMOKE TEST: {papers} abstracts (cited + {args.subset} random), not the benchmark",
                    flush=True,
                )
            else:
                papers = ensure_ingested(stack.database_url)
            stack.wait_ready()
            with httpx.Client(
                base_url=stack.gateway_url, timeout=60, headers=stack.api_headers
            ) as client:
                results = verify_all(client, claims, args.concurrency, args.timeout)

    gold = [r["claim"]["gold"] for r in results]
    pred = [r["predicted"] for r in results]
    per = f1_per_label(gold, pred)
    macro = sum(per.values()) / 3
    print("\nconfusion (rows gold, columns predicted):  " + "  ".join(f"{p:>10}" for p in LABELS))
    for g in LABELS:
        print(
            f"  {g:10}"
            + "".join(
                f"{sum(1 for a, b in zip(gold, pred, strict=True) if a == g and b == p):12}"
                for p in LABELS
            )
        )
    print("claim-level F1 " + " ".join(f"{label}={per[label]:.3f}" for label in LABELS))
    trust = what_the_user_acts_on(results)
    for line in trust["lines"]:
        print(line)
    sf = scifact_abstract(results, corpus)
    print(
        f"SciFact abstract-level, label only: P {sf['p']:.3f} R {sf['r']:.3f} F1 {sf['f1']:.3f} "
        f"({sf['correct']} correct of {sf['predicted']} predicted, {sf['gold']} gold); "
        f"label + rationale: P {sf['rationale_p']:.3f} R {sf['rationale_r']:.3f} F1 {sf['rationale_f1']:.3f}"
    )
    with_evidence = [r for r in results if r["claim"]["gold"] != "NEI"]
    nothing = (
        sum(r["cites"] == 0 for r in with_evidence) / len(with_evidence) if with_evidence else 0.0
    )
    if with_evidence:
        print(
            f"claims with gold evidence: {len(with_evidence)}; the gold paper cited for "
            f"{sum(r['gold_cited'] for r in with_evidence) / len(with_evidence):.3f}, nothing cited for {nothing:.3f}"
        )
    refused = [r for r in results if r.get("refused")]
    for r in refused:
        print(f"refused by the gateway: {r['claim']['claim'][:90]} — {r['view']['status']}")
    seconds = [r["seconds"] for r in results if not r.get("refused")] or [0.0]
    timed_out = sum(r["timed_out"] for r in results)
    print(
        f"seconds per verification: p50 {statistics.median(seconds):.1f}, mean {statistics.mean(seconds):.1f} "
        f"(concurrency {args.concurrency}; {timed_out} timed out, {len(refused)} refused)"
    )
    print(
        f"vs anchor (before this round, dev, full corpus): scifact_f1 {sf['f1']:.3f} / {ANCHOR['scifact_f1']} "
        f"(ratio {sf['f1'] / ANCHOR['scifact_f1']:.2f}), claim_macro_f1 {macro:.3f} / {ANCHOR['claim_macro_f1']} "
        f"(ratio {macro / ANCHOR['claim_macro_f1']:.2f}); targets scifact_f1 ≥ 0.55, rationale ≥ 0.45, macro ≥ 0.60, "
        f"CONTRADICT ≥ 0.45, cite_nothing ≤ 0.10, p50 ≤ 5 s"
    )
    print(
        f"split {args.split}{' (SMOKE TEST on a subset, not the benchmark)' if args.subset is not None else ''}"
    )
    print_summary(
        f"bench:verify_e2e scifact_f1={sf['f1']:.4f} scifact_rationale_f1={sf['rationale_f1']:.4f} "
        f"claim_macro_f1={macro:.4f} f1_contradict={per['CONTRADICT']:.4f} cite_nothing={nothing:.4f} "
        f"support_precision={trust['support_precision']:.4f} support_recall={trust['support_recall']:.4f} "
        f"contradict_recall={trust['contradict_recall']:.4f} "
        f"s_per_verification={statistics.median(seconds):.1f} claims={len(results)} corpus={papers}",
        keep=args.subset is None,
    )


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
