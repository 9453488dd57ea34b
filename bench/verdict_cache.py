"""Cache what the verifier's offline engine sees for each SciFact claim, once, so the verdict rule
can be chosen offline (`bench/verdict_rules.py`).

For each claim this runs the verifier's own evidence path on the full corpus (`full_corpus.py`'s
cached folder): the claim parsed into statements (`parse_claim`), each statement's searches as the
verifier sends them (`queries_per_statement`, `passages_per_query` papers each, the connector's
hybrid `search`), the papers reranked by the relevance model, the `judged_papers` most on-topic
judged whole by the abstract model, and every sentence of each by the sentence-level stance
model. One JSON line per claim holds each judged paper's abstract probabilities, the rationale
and stance of each of its sentences, and the gold label and rationale of the papers SciFact
annotates. Qualifier searches (a second round for qualified statements) are left out.

Only claims the shipped models did not train on are honest input: `--split train` takes fold 0
(claim index mod 5 == 0, the abstract model's held-out fold), `--split dev` the dev claims.

    .venv/bin/python bench/verdict_cache.py [--split train|dev] [--claims N] [--data-dir DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))
from full_corpus import DATA, corpus_dir, ensure_ingested, load_corpus

from bench.harness.scifact_options import add_split


def _plain(text: str) -> str:
    return " ".join(text.lower().split())


def gold_index(sentence: str, gold_sentences: list[str]) -> int | None:
    """The SciFact sentence index of an engine sentence (text containment either way)."""
    text = _plain(sentence)
    for i, gold in enumerate(gold_sentences):
        s = _plain(gold)
        if text and (text in s or s in text):
            return i
    return None


async def cache_claims(database_url: str, claims: list[dict], corpus: dict, out: Path) -> None:
    from research_corpus.search import search
    from research_judgement.abstract import get_abstract_judge
    from research_judgement.judge import get_judge
    from research_platform.db import create_engine, session_factory
    from research_verification import names_subject, parse_claim
    from research_verification.errors import ClaimParseError
    from research_verifier.experiment import abstract_sentences, rerank
    from research_verifier.settings import VerifierSettings
    from research_verifier.tools import ABSTRACT_CHARS, Passage

    settings = VerifierSettings()
    model, judge = get_abstract_judge(), get_judge()
    engine = create_engine(database_url)
    sessions = session_factory(engine)
    started = time.perf_counter()
    try:
        with out.open("w") as sink:
            for n, claim in enumerate(claims, 1):
                try:
                    statements = parse_claim(claim["claim"])
                except ClaimParseError:
                    statements = []
                row: dict = {
                    "id": claim["id"],
                    "claim": claim["claim"],
                    "gold": claim["gold"],
                    "statements": [],
                }
                for statement in statements:
                    found: dict[str, Passage] = {}
                    queries = list(statement.queries[: max(3, settings.queries_per_statement)])
                    for query in queries:
                        async with sessions() as session:
                            hits = await search(
                                session, query[:1000], k=settings.passages_per_query
                            )
                        for h in hits:
                            text = (
                                h.abstract
                                if h.abstract and len(h.abstract) <= ABSTRACT_CHARS
                                else h.passage
                            )
                            if text:
                                found.setdefault(
                                    h.external_id, Passage(h.external_id, h.title or "", text)
                                )
                    ranked = rerank(statement, list(found.values()), judge)[
                        : settings.judged_papers
                    ]
                    papers = [(p.title, abstract_sentences(p.text)) for p in ranked]
                    judged = model.judge(statement.text, papers) if papers else []
                    entries = []
                    for p, (title, sentences), j in zip(ranked, papers, judged, strict=True):
                        stance: Iterable[Iterable[float]] = (
                            judge.stance(
                                statement.text, sentences, [title or None] * len(sentences)
                            )
                            if sentences
                            else []
                        )
                        doc = int(p.paper_id) if p.paper_id.isdigit() else -1
                        gold = claim["gold_docs"].get(doc)
                        gold_sentences = (corpus.get(doc) or {}).get("abstract", [])
                        entries.append(
                            {
                                "doc": doc,
                                "title": title,
                                "probs": [round(float(x), 5) for x in j.probs],
                                "sentences": sentences,
                                "rationale": [round(float(x), 5) for x in j.rationale],
                                "stance": [[round(float(x), 5) for x in r] for r in stance],
                                "names_subject": [
                                    bool(statement.subject and names_subject(statement.subject, s))
                                    for s in sentences
                                ],
                                "gold_label": gold[0] if gold else None,
                                "gold_sentences": [
                                    bool(gold and gold_index(s, gold_sentences) in gold[1])
                                    for s in sentences
                                ],
                            }
                        )
                    row["statements"].append({"text": statement.text, "papers": entries})
                sink.write(json.dumps(row) + "\n")
                sink.flush()
                if n % 10 == 0 or n == len(claims):
                    print(
                        f"cached {n}/{len(claims)} claims, {time.perf_counter() - started:.0f} s",
                        flush=True,
                    )
    finally:
        await engine.dispose()


def main() -> None:
    from bench.verify_e2e import claims_of
    from research_platform.embedded import EmbeddedPostgres
    from research_platform.migrate import upgrade

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_split(parser, dev="the 150 dev claims (once per shipped model)")
    parser.add_argument("--claims", type=int, default=0, help="the first N claims (0 = all)")
    parser.add_argument("--data-dir", type=Path, help="the cached full-corpus folder")
    parser.add_argument("--out", type=Path, help="default <data dir>/verdict-cache-<split>.jsonl")
    args = parser.parse_args()
    if not DATA.exists():
        sys.exit(f"{DATA} is absent")
    folder = corpus_dir(args.data_dir)
    claims = claims_of(DATA, args.split, args.claims)
    out = args.out or folder / f"verdict-cache-{args.split}.jsonl"
    pg = EmbeddedPostgres(folder).start()
    try:
        upgrade(pg.url)
        papers = ensure_ingested(pg.url)
        asyncio.run(cache_claims(pg.url, claims, load_corpus(DATA), out))
    finally:
        pg.stop()
    print(f"wrote {out}: {len(claims)} claims of {args.split}, corpus {papers}")


if __name__ == "__main__":
    from research_engine.models import configure_models

    configure_models()  # an entry point: the models get this process's settings
    main()
