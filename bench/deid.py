"""The privacy boundary's de-identifier: people caught, science left alone, and how fast.

    .venv/bin/python bench/deid.py [--show 10] [--half dev|both] [--sentences 5000]

Every text goes through `research_privacy.boundary.person_text` alone, one process, one text at a
time (what a command's field gets). Counted as the issue counts:
- an identifier of `bench/data/deid/questions.jsonl` is **caught** only when its text no longer
  appears in the output and no word of it survives in place ("de la [NAME_1]" is a miss);
  recall per kind and per half (`dev` was tuned on, `frozen` never read), and per form: the
  questions first written (`first`) and the forms added after them, each in both halves (`caps`:
  names in capitals, `inverted`: "SURNAME, Given" in any case, `newborn`: names after "Baby girl",
  "Infant of", `invisible`: names split by a soft hyphen or a zero-width character); a question's
  form is the middle of its id (`dev-caps-003`);
- a `guard` question names no one (capitals that are science: COPD, HF-ACTION, ICD-10 E11.9,
  "cells, mice"): it is **kept** only when it comes out unchanged;
- a text is **altered** when the output differs from the input at all: SciFact train claims,
  5,000 corpus sentences (seeded sample of the abstracts' sentences; `../shared/data/scifact`), and
  the research phrases of `bench/data/deid/research_phrases.txt`;
- texts/s: all of those texts, one process, wall clock.
Presidio (presidio-analyzer with a spaCy English model, default recognisers) runs side by side
on the same claims and sentences when both import; otherwise it is printed as unavailable.

Last line: `bench:deid recall=… claims_altered=… sentences_altered=… phrases_altered=… guards_altered=… texts_per_s=… presidio_claims_altered=…`.
"""

from __future__ import annotations

import argparse
import difflib
import json
import random
import re
import sys
import time
from collections import Counter
from pathlib import Path

from research_privacy.boundary import person_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench.harness.results import print_summary

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "deid"
SCIFACT = ROOT.parent.parent / "shared" / "data" / "scifact"
SEED = 36
_WORD = re.compile(r"\w+")


def form(question: dict) -> str:
    """`first` for the questions first written ("dev-017"), else the middle of the id ("dev-caps-003")."""
    parts = question["id"].split("-")
    return parts[1] if len(parts) == 3 else "first"


def questions() -> list[dict]:
    return [
        json.loads(line)
        for line in (DATA / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]


def phrases() -> list[str]:
    return [
        line
        for line in (DATA / "research_phrases.txt").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


def scifact(folder: Path, sentences: int) -> tuple[list[str], list[str]]:
    claims = [
        json.loads(line)["claim"]
        for line in (folder / "claims_train.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    pool = [
        s
        for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
        if line
        for s in json.loads(line)["abstract"]
        if s.strip()
    ]
    return claims, random.Random(SEED).sample(pool, min(sentences, len(pool)))


def surviving(source: str, output: str) -> list[bool]:
    """Which characters of `source` are still in `output` where they were (difflib's matching
    blocks), as whole words there: the "1" of "[PHONE_1]" is not the "1" of "+1-615-…" surviving."""
    kept = [False] * len(source)
    for block in difflib.SequenceMatcher(
        None, source, output, autojunk=False
    ).get_matching_blocks():
        for i in range(block.a, block.a + block.size):
            j = block.b + i - block.a
            for word in _WORD.finditer(source, max(0, i - 40), min(len(source), i + 41)):
                if word.start() <= i < word.end():
                    left, right = j - (i - word.start()), j + (word.end() - i)
                    whole = (
                        left == 0 or (not output[left - 1].isalnum() and output[left - 1] != "_")
                    ) and (
                        right >= len(output)
                        or (not output[right].isalnum() and output[right] != "_")
                    )
                    kept[i] = whole and output[left:right] == word.group(0)
                    break
            else:
                kept[i] = True
    return kept


def caught(source: str, output: str, ident: dict, kept: list[bool]) -> bool:
    """The identifier's text is gone, and none of its words survives in place."""
    if re.search(r"(?<!\w)" + re.escape(ident["text"]) + r"(?!\w)", output):
        return False
    for word in _WORD.finditer(ident["text"]):
        start, end = ident["start"] + word.start(), ident["start"] + word.end()
        if all(kept[start:end]):
            return False
    return True


def presidio():
    """An analyzer + anonymizer pair, or the reason there is none."""
    import importlib

    try:  # optional, not a dependency: no spaCy English model installs from PyPI (docs/benchmarks.md), so
        # it runs only where someone installed presidio-analyzer, presidio-anonymizer and a model themselves
        analyzer = importlib.import_module(
            "presidio_analyzer"
        ).AnalyzerEngine()  # loads spaCy's English model
        anonymizer = importlib.import_module("presidio_anonymizer").AnonymizerEngine()
    except Exception as exc:  # noqa: BLE001 - an optional comparison: say why it did not run
        return None, f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"

    def run(text: str) -> str:
        return anonymizer.anonymize(
            text=text, analyzer_results=analyzer.analyze(text=text, language="en")
        ).text

    return run, None


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--show", type=int, default=5, help="print this many misses and altered texts of each set"
    )
    parser.add_argument(
        "--half",
        choices=("dev", "both"),
        default="both",
        help="dev: measure the labelled dev half only, so tuning never sees a frozen figure",
    )
    parser.add_argument("--sentences", type=int, default=5000)
    parser.add_argument("--scifact", type=Path, default=SCIFACT)
    parser.add_argument("--no-presidio", action="store_true")
    args = parser.parse_args()
    if not (args.scifact / "corpus.jsonl").exists():
        sys.exit(f"bench:deid needs SciFact at {args.scifact} (the shared data folder)")
    labelled = [q for q in questions() if args.half == "both" or q["half"] == args.half]
    halves = ("dev", "frozen") if args.half == "both" else ("dev",)
    research = phrases()
    claims, sentences = scifact(args.scifact, args.sentences)

    started = time.perf_counter()
    out_q = [person_text(q["text"]) for q in labelled]
    out_c = [person_text(t) for t in claims]
    out_s = [person_text(t) for t in sentences]
    out_p = [person_text(t) for t in research]
    seconds = time.perf_counter() - started
    texts = len(labelled) + len(claims) + len(sentences) + len(research)

    totals: Counter[tuple[str, str]] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    form_totals: Counter[tuple[str, str]] = Counter()
    form_hits: Counter[tuple[str, str]] = Counter()
    guards: Counter[str] = Counter()
    guards_kept: Counter[str] = Counter()
    misses: list[str] = []
    for q, out in zip(labelled, out_q, strict=True):
        kept = surviving(q["text"], out)
        if not q["identifiers"]:
            guards[q["half"]] += 1
            guards_kept[q["half"]] += out == q["text"]
            if out != q["text"] and q["half"] == "dev":
                misses.append(f"  guard altered: {out!r}")
        for ident in q["identifiers"]:
            totals[(q["half"], ident["kind"])] += 1
            form_totals[(q["half"], form(q))] += 1
            if caught(q["text"], out, ident, kept):
                hits[(q["half"], ident["kind"])] += 1
                form_hits[(q["half"], form(q))] += 1
            elif q["half"] == "dev":  # the frozen half is never read while tuning
                misses.append(f"  {ident['kind']} {ident['text']!r}: {out!r}")
    kinds = sorted({k for _, k in totals})
    print(f"{'kind':<13}" + "".join(f"{h:>14}" for h in halves))
    for kind in kinds:
        cells = [f"{hits[(h, kind)]}/{totals[(h, kind)]}" for h in halves]
        print(f"{kind:<13}" + "".join(f"{c:>14}" for c in cells))
        print(
            f"bench:deid recall_{kind.lower()}={sum(hits[(h, kind)] for h in halves) / sum(totals[(h, kind)] for h in halves):.3f}"
        )
    for half in halves:
        n = sum(v for (h, _), v in totals.items() if h == half)
        print(
            f"bench:deid recall_{half}={sum(v for (h, _), v in hits.items() if h == half) / n:.3f} identifiers={n}"
        )
    print(f"{'form':<13}" + "".join(f"{h:>14}" for h in halves))
    for name in sorted({f for _, f in form_totals}):
        cells = [f"{form_hits[(h, name)]}/{form_totals[(h, name)]}" for h in halves]
        print(f"{name:<13}" + "".join(f"{c:>14}" for c in cells))
        print(
            f"bench:deid form={name} "
            + " ".join(
                f"recall_{h}={form_hits[(h, name)] / form_totals[(h, name)]:.3f}" for h in halves
            )
        )
    print(f"{'guard kept':<13}" + "".join(f"{f'{guards_kept[h]}/{guards[h]}':>14}" for h in halves))
    if misses:
        print(f"dev misses ({len(misses)}):", *misses[: args.show], sep="\n")

    def altered(name: str, inputs: list[str], outputs: list[str]) -> float:
        changed = [(a, b) for a, b in zip(inputs, outputs, strict=True) if a != b]
        print(f"{name}: {len(changed)}/{len(inputs)} altered")
        for a, b in changed[: args.show]:
            print(f"  - {a}\n  + {b}")
        return len(changed) / len(inputs)

    claims_share = altered("SciFact train claims", claims, out_c)
    sentences_share = altered("corpus sentences", sentences, out_s)
    phrases_share = altered("research phrases", research, out_p)
    rate = texts / seconds
    print(f"{texts} texts in {seconds:.2f} s (one process)")

    presidio_claims = "unavailable"
    if args.no_presidio:
        print("presidio: not run (--no-presidio)")
    else:
        run, why = presidio()
        if run is None:
            print(
                f"presidio: unavailable ({why}); no spaCy English model installs from the package registry"
            )
        else:
            t0 = time.perf_counter()
            p_claims = [run(t) for t in claims]
            p_sentences = [run(t) for t in sentences]
            p_seconds = time.perf_counter() - t0
            presidio_claims = (
                f"{sum(a != b for a, b in zip(claims, p_claims, strict=True)) / len(claims):.3f}"
            )
            p_sent = sum(a != b for a, b in zip(sentences, p_sentences, strict=True)) / len(
                sentences
            )
            print(
                f"presidio: claims_altered={presidio_claims} sentences_altered={p_sent:.3f} "
                f"texts_per_s={(len(claims) + len(sentences)) / p_seconds:.0f}"
            )
    recall = sum(hits.values()) / sum(totals.values())
    guards_altered = 1 - sum(guards_kept.values()) / max(1, sum(guards.values()))
    print_summary(
        f"bench:deid recall={recall:.3f} claims_altered={claims_share:.4f} sentences_altered={sentences_share:.4f} "
        f"phrases_altered={phrases_share:.3f} guards_altered={guards_altered:.3f} texts_per_s={rate:.0f} "
        f"presidio_claims_altered={presidio_claims}"
    )


if __name__ == "__main__":
    main()
