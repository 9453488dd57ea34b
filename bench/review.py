"""Literature-review quality on SciFact (`task bench:review`): ≥ 20 topics, offline engine.

Topics are clusters of related SciFact claims (train + dev claims joined when they cite a common
document; clusters of ≥ 3 claims, largest first). A topic's text is the content words that at
least two of its claims share, in order of first use — never a gold document's title (checked);
its gold documents are every document its claims cite. The corpus is an embedded PostgreSQL
holding the gold documents of every topic plus `--distractors` random SciFact abstracts
(seeded), ingested once per `--data-dir`; run events go to an embedded nats-server. Each review
runs the service's own loop (author → peer reviewer, ≤ 2 rounds) with the connector's own corpus
tools called in process (no request/reply hop).

Per report: citation accuracy (cited ids that exist, quotes found verbatim, cited sources that
support their sentence — over all of them), grounding (factual sentences backed by a checked
citation), coverage (share of the topic's gold documents cited), tag mix, PASS after round 1
and after round 2, seconds per review. Prints the means, the worst report, and one line:

    bench:review citation_accuracy=… grounding=… coverage=… pass_rate=… reports=n s_per_report=…

    .venv/bin/python bench/review.py [--topics 24] [--distractors 700] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "scifact"
WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]+")
STOP = set("""a an the of in on and or to for with by from is are was were be been that this these those its it as at
than not no into can may has have had which their more less between during after before among vs""".split())


def clusters(data: Path, wanted: int) -> list[dict]:
    """Clusters of ≥ 3 claims linked by a shared cited document, largest first (ties: lowest claim id)."""
    claims = [json.loads(line) for name in ("claims_train.jsonl", "claims_dev.jsonl") for line in (data / name).open()]
    parent: dict[int, int] = {}

    def find(x: int) -> int:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_doc: dict[int, list[int]] = collections.defaultdict(list)
    for claim in claims:
        find(claim["id"])
        for doc in claim["cited_doc_ids"]:
            by_doc[doc].append(claim["id"])
    for ids in by_doc.values():
        for other in ids[1:]:
            parent[find(other)] = find(ids[0])
    groups: dict[int, list[dict]] = collections.defaultdict(list)
    for claim in claims:
        groups[find(claim["id"])].append(claim)
    ordered = sorted((g for g in groups.values() if len(g) >= 3), key=lambda g: (-len(g), min(c["id"] for c in g)))
    return [{"claims": [c["claim"] for c in g], "gold": sorted({str(d) for c in g for d in c["cited_doc_ids"]})}
            for g in ordered[: wanted * 2]]


def topic_text(claims: list[str], titles: list[str]) -> str | None:
    """Words shared by ≥ 2 claims (in order of first use), up to 8; None when it would name a gold title."""
    seen: dict[str, int] = collections.Counter()
    order: list[str] = []
    for claim in claims:
        words = {w.lower() for w in WORD.findall(claim) if w.lower() not in STOP}
        for w in words:
            seen[w] += 1
        for w in (w.lower() for w in WORD.findall(claim)):
            if w not in order and w not in STOP:
                order.append(w)
    shared = [w for w in order if seen[w] >= 2][:8]
    if len(shared) < 2:
        return None
    text = " ".join(shared)
    if any(text in t.lower() or t.lower().strip(". ") in text for t in titles):
        return None
    return text


class LocalTools:
    """The connector's corpus tools, called in process (same code the service answers with)."""

    def __init__(self, tools) -> None:  # noqa: ANN001
        self.tools = tools

    async def call(self, tool, request):  # noqa: ANN001, ANN201
        from research_modes import ToolsUnavailable

        reply = await self.tools.answer(tool, request.model_dump_json().encode())
        if reply.error:
            raise ToolsUnavailable(reply.error)
        return reply.result

    async def outside(self, query, sources, limit):  # noqa: ANN001, ANN201
        from research_contracts import EvidenceFound

        return EvidenceFound()


def accuracy(check) -> float:  # noqa: ANN001
    """Checked-out citations and quotes over all of them, unknown ids counted as failures."""
    total = check.citations + check.quotes + check.unknown
    return 1.0 if total == 0 else (check.supported_citations + check.verbatim_quotes) / total


async def run(args: argparse.Namespace, database_url: str, nats_url: str) -> None:
    import nats

    from research_connector.corpus_tools import CorpusTools
    from research_contracts.reviews import RequestReview
    from research_corpus.ingest import ingest_path
    from research_llm.offline.relevance import Relevance, default_encoder
    from research_platform.db import create_engine, session_factory
    from research_platform.settings import get_settings
    from research_reviewer.author import OfflineAuthor
    from research_reviewer.experiment import review_loop
    from research_reviewer.peer_review import PeerReviewer
    from research_reviewer.prepare import review_job
    from research_reviewer.settings import ReviewerSettings
    from research_runs import RunRecorder, ensure_runs_stream

    docs = {str(json.loads(line)["doc_id"]): line for line in (args.data / "corpus.jsonl").open()}
    titles = {d: json.loads(line)["title"] for d, line in docs.items()}
    topics = []
    for cluster in clusters(args.data, args.topics):
        text = topic_text(cluster["claims"], [titles[g] for g in cluster["gold"] if g in titles])
        if text and all(g in docs for g in cluster["gold"]):
            topics.append({**cluster, "topic": text})
        if len(topics) == args.topics:
            break
    gold = sorted({g for t in topics for g in t["gold"]})
    rest = sorted(set(docs) - set(gold))
    chosen = gold + random.Random(7).sample(rest, min(args.distractors, len(rest)))
    subset = Path(args.work) / "review_corpus.jsonl"
    subset.write_text("".join(docs[d] if docs[d].endswith("\n") else docs[d] + "\n" for d in chosen))

    engine = create_engine(database_url)
    sessions = session_factory(engine)
    started = time.perf_counter()
    ingested = await ingest_path(sessions, subset, fmt="scifact", progress=not args.quiet)
    print(f"corpus: {len(chosen)} SciFact abstracts ({len(gold)} gold of {len(topics)} topics + {len(chosen) - len(gold)} "
          f"distractors); ingest {ingested.added} added / {ingested.unchanged} unchanged in {time.perf_counter() - started:.0f} s")

    nc = await nats.connect(nats_url)
    js = nc.jetstream()
    await ensure_runs_stream(js)
    port = LocalTools(CorpusTools(lambda: sessions, get_settings().corpus))
    relevance = Relevance(default_encoder())
    relevance.embed(["warm up"])
    settings = ReviewerSettings()
    rows = []
    for n, topic in enumerate(topics, start=1):
        job = review_job(RequestReview(topic=topic["topic"], max_iterations=2, run_id=f"bench-{n}-{int(time.time())}"))
        recorder = RunRecorder(js, job.run_id)
        t0 = time.perf_counter()
        async with recorder.running():
            outcome = await review_loop(job, OfflineAuthor(relevance, settings), PeerReviewer(settings.spot_checks), port, recorder)
        seconds = time.perf_counter() - t0
        cited = {r.paper_id.removeprefix("corpus:") for r in outcome.report.references if r.paper_id}
        tags = collections.Counter(f.tag for f in (outcome.report.section("Key Findings").findings if outcome.report.section("Key Findings") else []))
        row = {"topic": topic["topic"], "accuracy": accuracy(outcome.check), "grounding": outcome.check.grounding,
               "coverage": len(cited & set(topic["gold"])) / len(topic["gold"]), "tags": dict(tags),
               "pass1": outcome.rounds[0].review.verdict == "PASS", "pass": outcome.verdict == "PASS",
               "rounds": len(outcome.rounds), "seconds": seconds, "issues": outcome.review.counts(),
               "dropped": outcome.dropped()}
        rows.append(row)
        if not args.quiet:
            print(f"[{n:2}/{len(topics)}] {row['topic'][:60]:60} acc {row['accuracy']:.3f} grd {row['grounding']:.3f} "
                  f"cov {row['coverage']:.2f} {outcome.verdict:15} r{row['rounds']} {seconds:5.1f}s {dict(tags)}")
    await nc.close()
    await engine.dispose()

    mean = lambda key: statistics.fmean(r[key] for r in rows)  # noqa: E731
    mix = collections.Counter()
    for r in rows:
        mix.update(r["tags"])
    worst = min(rows, key=lambda r: (r["accuracy"], r["grounding"], r["coverage"]))
    print(f"\n{len(rows)} reviews (offline engine, ≤ 2 rounds)")
    print(f"citation accuracy {mean('accuracy'):.4f} (min {min(r['accuracy'] for r in rows):.4f}) · grounding {mean('grounding'):.4f}"
          f" · coverage {mean('coverage'):.4f} · PASS after round 1 {mean('pass1'):.2f}, after round 2 {mean('pass'):.2f}")
    print(f"tag mix: {dict(mix)} · seconds per review p50 {statistics.median(r['seconds'] for r in rows):.1f}, "
          f"max {max(r['seconds'] for r in rows):.1f}")
    print(f"worst report: {worst['topic']!r} accuracy {worst['accuracy']:.3f} grounding {worst['grounding']:.3f} "
          f"coverage {worst['coverage']:.2f} issues {worst['issues']}")
    print(f"bench:review citation_accuracy={mean('accuracy'):.4f} grounding={mean('grounding'):.4f} coverage={mean('coverage'):.4f} "
          f"pass_rate={mean('pass'):.4f} reports={len(rows)} s_per_report={mean('seconds'):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--topics", type=int, default=24)
    parser.add_argument("--distractors", type=int, default=700)
    parser.add_argument("--data-dir", type=Path, help="Reuse this folder (embedded database and NATS) between runs.")
    parser.add_argument("--quiet", action="store_true")
    args = parser.parse_args()
    if not (args.data / "corpus.jsonl").exists():
        sys.exit(f"{args.data} is not present: the SciFact data (../shared/data/scifact) is needed for this benchmark")

    from research_platform.embedded import EmbeddedNats, EmbeddedPostgres
    from research_platform.migrate import upgrade

    with tempfile.TemporaryDirectory(prefix="re-bench-review-") as tmp:
        folder = args.data_dir or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        args.work = str(folder)
        pg = EmbeddedPostgres(folder).start()
        bus = EmbeddedNats(folder).start()
        try:
            upgrade(pg.url)
            asyncio.run(run(args, pg.url, bus.url))
        finally:
            bus.stop()
            if not args.data_dir:
                pg.stop()


if __name__ == "__main__":
    main()
